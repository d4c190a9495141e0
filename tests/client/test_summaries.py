"""The summary index (issue 15 item 2): SQLite rows upserted by ``record``, a listing that is one
query plus a scandir of names, files added, removed or changed behind its back, a damaged or
old-format index rebuilt from the files."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from loomsync import LocalThreadStore
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.store import threadlog
from loomsync.store.summaries import INDEX_NAME, OLD_INDEX_NAME, SummaryIndex
from loomsync.store.threadlog import is_thread_file
from tests.client.conftest import new_thread, with_turns
from tests.client.threadfiles import stored_doc, write_log


def _write(folder: Path, doc: dict[str, Any]) -> tuple[threadlog.Head, Thread]:
    """A thread log written whole, as the store writes one (no store needed here)."""
    thread = Thread.model_validate(doc)
    full = codec.document(thread)
    messages = full["conversation"].pop("messages", [])
    canonical = (
        codec.dumps(m.model_dump(mode="python", by_alias=True), sort_keys=True)
        for m in thread.messages
    )
    head = threadlog.write_full(
        folder / f"{thread.id}{threadlog.SUFFIX}",
        str(thread.id),
        full,
        messages,
        threadlog.chain(threadlog.EMPTY_CHAIN, canonical),
        lock=FileLock(str(folder / f".{thread.id}.lock")),
    )
    return head, thread


def _reader(folder: Path) -> Any:
    def read(thread_id: str) -> tuple[threadlog.Head, Thread] | None:
        try:
            head = threadlog.read_head(folder / f"{thread_id}{threadlog.SUFFIX}")
        except ValueError:
            return None
        return head, codec.decode_thread(head.fields)

    return read


def _doc(index: int, **extra: Any) -> dict[str, Any]:
    return {
        "id": str(ThreadId.new()),
        "created_at": "2026-01-01T00:00:00Z",
        "last_activity_at": f"2026-02-01T00:{index // 60 % 60:02d}:{index % 60:02d}.{index:06d}Z",
        "metadata": {"title": f"thread {index}"},
        "conversation": {"messages": [{"role": "user", "content": f"m{i}"} for i in range(3)]},
        **extra,
    }


def test_record_is_what_list_returns_and_list_reads_no_file(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    written = [_write(tmp_path, _doc(i)) for i in range(5)]
    for head, thread in written:
        index.record(str(thread.id), head, thread)
    rows = index.list(_reader(tmp_path), limit=3)
    assert [r.id for r in rows] == [str(t.id) for _, t in reversed(written)][:3]
    assert rows[0].message_count == 3
    assert rows[0].title == "thread 4"
    assert index.files_parsed == 0
    again = SummaryIndex(tmp_path)  # another process: the database is enough
    assert [r.id for r in again.list(_reader(tmp_path))] == [str(t.id) for _, t in written][::-1]
    assert again.files_parsed == 0


def test_filters_order_and_limit_are_the_query(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    docs = [
        _doc(0, workspace_root="/a"),
        _doc(1, workspace_root="/b"),
        _doc(2, workspace_root="/a", archived_at="2026-03-01T00:00:00Z"),
        _doc(3, workspace_root="/a"),
    ]
    for doc in docs:
        index.record(doc["id"], *_write(tmp_path, doc))
    read = _reader(tmp_path)
    ids = [d["id"] for d in docs]
    assert [r.id for r in index.list(read)] == [ids[3], ids[1], ids[0]]
    assert [r.id for r in index.list(read, workspace="/a")] == [ids[3], ids[0]]
    assert [r.id for r in index.list(read, archived="true")] == [ids[2]]
    assert [r.id for r in index.list(read, archived="any", limit=2)] == [ids[3], ids[2]]
    assert index.list(read, workspace="/none") == []


def test_files_added_removed_and_changed_behind_its_back_are_seen(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    a, b = _doc(1), _doc(2)
    for doc in (a, b):
        index.record(doc["id"], *_write(tmp_path, doc))
    read = _reader(tmp_path)
    assert len(index.list(read)) == 2

    c = _doc(3)
    _write(tmp_path, c)  # a file the index was not told of
    (tmp_path / f"{a['id']}.jsonl").unlink()
    _write(tmp_path, {**b, "metadata": {"title": "edited behind its back"}})
    rows = index.list(read)
    assert [(r.id, r.title) for r in rows] == [
        (c["id"], "thread 3"),
        (b["id"], "edited behind its back"),
    ]
    assert index.files_parsed == 2  # the new file and the changed one, nothing else
    assert index.list(read) == rows
    assert index.files_parsed == 2


def test_a_row_moved_by_a_change_behind_its_back_takes_its_new_place(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    docs = [_doc(i) for i in range(3)]
    for doc in docs:
        index.record(doc["id"], *_write(tmp_path, doc))
    newest = docs[2]
    _write(tmp_path, {**newest, "last_activity_at": "2025-01-01T00:00:00Z"})  # now the oldest
    assert [r.id for r in index.list(_reader(tmp_path), limit=1)] == [docs[1]["id"]]


def test_a_file_that_is_not_a_thread_log_is_left_out(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    good = _doc(1)
    _write(tmp_path, good)
    (tmp_path / f"{ThreadId.new()}.jsonl").write_bytes(b"not a log\n")
    (tmp_path / "notes.jsonl").write_bytes(b"{}\n")
    assert [r.id for r in index.list(_reader(tmp_path))] == [good["id"]]


def test_summaries_are_stored_redacted(tmp_path: Path) -> None:
    secret = "ghp_" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2"
    doc = _doc(1, metadata={"title": f"token {secret}"})
    index = SummaryIndex(tmp_path)
    index.record(doc["id"], *_write(tmp_path, doc))
    (row,) = index.list(_reader(tmp_path))
    assert secret not in (row.title or "")
    assert "[REDACTED:" in (row.title or "")
    index.close()
    for name in (INDEX_NAME, f"{INDEX_NAME}-wal"):
        path = tmp_path / name
        assert not path.exists() or secret.encode() not in path.read_bytes()


def test_a_damaged_or_old_index_is_rebuilt_from_the_files(tmp_path: Path) -> None:
    docs = [_doc(i) for i in range(3)]
    for doc in docs:
        _write(tmp_path, doc)
    (tmp_path / OLD_INDEX_NAME).write_text('{"format": 1, "entries": {}}')
    index = SummaryIndex(tmp_path)
    assert len(index.list(_reader(tmp_path))) == 3
    assert not (tmp_path / OLD_INDEX_NAME).exists()
    index.close()
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)
    (tmp_path / INDEX_NAME).write_bytes(b"garbage" * 1000)
    rebuilt = SummaryIndex(tmp_path)
    assert [r.id for r in rebuilt.list(_reader(tmp_path))] == [d["id"] for d in docs][::-1]
    assert rebuilt.files_parsed == 3
    with sqlite3.connect(tmp_path / INDEX_NAME) as db:
        assert db.execute("SELECT count(*) FROM threads").fetchone() == (3,)


def test_record_of_a_thread_whose_file_is_gone_is_harmless(tmp_path: Path) -> None:
    index = SummaryIndex(tmp_path)
    head, thread = _write(tmp_path, _doc(1))
    (tmp_path / f"{thread.id}.jsonl").unlink()
    index.record(str(thread.id), head, thread)  # logged, not raised
    index.forget(str(thread.id))
    assert index.list(_reader(tmp_path)) == []


def test_thread_file_names() -> None:
    name = f"{ThreadId.new()}.jsonl"
    assert is_thread_file(name)
    assert not is_thread_file(name[:-1])
    assert not is_thread_file(f".{name}.tmp")
    assert not is_thread_file(INDEX_NAME)


def test_ten_thousand_threads_list_from_the_index_and_a_save_records_its_row(
    tmp_path: Path,
) -> None:
    ids = [ThreadId.new() for _ in range(10_000)]
    for index, thread_id in enumerate(ids):
        doc = {
            "id": thread_id,
            "created_at": f"2026-01-01T00:00:{index % 60:02d}Z",
            "last_activity_at": f"2026-02-01T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z",
            "metadata": {"title": f"thread {index}"},
            "conversation": {"messages": [{"role": "user", "content": "x" * 200}] * 5},
        }
        write_log(tmp_path / f"{thread_id}.jsonl", doc)
    store = LocalThreadStore(tmp_path)
    first = store.list(limit=20)
    assert store.index.files_parsed == 10_000  # the index is built once, from the heads
    assert len(first) == 20

    again = LocalThreadStore(tmp_path)  # a new process: the index on disk is enough
    started = time.monotonic()
    assert [s.id for s in again.list(limit=20)] == [s.id for s in first]
    assert again.index.files_parsed == 0
    assert time.monotonic() - started < 5

    changed = again.save(with_turns(again.load(ids[5]), "new turn"))
    rows = {s.id: s for s in again.list()}
    assert again.index.files_parsed == 0  # the save recorded its row: nothing to read
    assert rows[str(changed.id)].message_count == 6
    assert len(rows) == 10_000
    again.delete(ids[7])
    assert len(again.list()) == 9_999
    assert again.index.files_parsed == 0


def test_the_store_index_notices_files_changed_and_removed_behind_its_back(
    tmp_path: Path,
) -> None:
    store = LocalThreadStore(tmp_path)
    a, b = store.save(new_thread(1)), store.save(new_thread(1))
    store.list()
    (tmp_path / f"{a.id}.jsonl").unlink()
    doc = stored_doc(tmp_path / f"{b.id}.jsonl")
    doc["metadata"] = {"title": "edited by hand"}
    write_log(tmp_path / f"{b.id}.jsonl", doc)
    assert [(s.id, s.title) for s in store.list()] == [(str(b.id), "edited by hand")]
    store.close()
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)
    (tmp_path / INDEX_NAME).write_text("garbage" * 100)  # unreadable: rebuilt from the files
    rebuilt = LocalThreadStore(tmp_path)
    assert [s.id for s in rebuilt.list()] == [str(b.id)]
    assert rebuilt.index.files_parsed == 1
