"""The SDK save and the sync queue file (``queue.sqlite3``): a save whose thread already has a
due entry writes nothing to the queue; one that adds an entry writes that entry, not the queue,
however long it is (10,000 threads queued offline); an earlier client's ``pending.json`` is read
into it once, keeping every entry's state. Real files; sizes, never times."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from loomsync import LocalThreadStore, SyncingThreadStore
from loomsync.sync.counts import QueueCounts, queue_counts
from loomsync.sync.queue import QUEUE_FILE, PendingSyncQueue
from tests.client.conftest import new_thread, with_turns
from tests.client.queuefile import queue_rows

QUEUED = 10_000


def _files(sync_dir: Path) -> dict[str, tuple[int, str]]:
    """The database's and its write-ahead log's (mtime_ns, sha256); the ``-shm`` file is
    left out: SQLite's shared memory of read marks, changed by any reader."""
    found = {}
    for path in sorted(sync_dir.glob(f"{QUEUE_FILE}*")):
        if path.name.endswith("-shm"):
            continue
        found[path.name] = (path.stat().st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return found


def _wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


def _legacy_entry(n: int, **fields: Any) -> dict[str, Any]:
    return {
        "thread_id": f"T-0b8a3f2e-6a3c-4d7e-9f1a-{n:012d}",
        "op": "save",
        "enqueued_at": "2026-03-02T09:14:00Z",
        "updated_at": "2026-03-02T09:14:00Z",
        **fields,
    }


def _offline(tmp_path: Path) -> SyncingThreadStore:
    return SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"), None, sync_dir=tmp_path / "sync", background=False
    )


def test_a_save_whose_thread_has_a_due_entry_leaves_the_queue_file_untouched(
    tmp_path: Path,
) -> None:
    store = _offline(tmp_path)
    saved = store.save(new_thread(1))
    before = _files(tmp_path / "sync")
    assert QUEUE_FILE in before

    for turn in range(3):
        saved = store.save(with_turns(saved, f"more {turn}"))

    assert _files(tmp_path / "sync") == before
    (entry,) = store.status()
    assert (entry.thread_id, entry.op, entry.generation) == (str(saved.id), "save", 1)
    store.close()


def test_with_10000_threads_queued_a_save_writes_its_entry_not_the_queue(tmp_path: Path) -> None:
    sync_dir = tmp_path / "sync"
    sync_dir.mkdir()
    legacy = [_legacy_entry(n) for n in range(QUEUED)]
    (sync_dir / "pending.json").write_text(json.dumps({"format": 1, "entries": legacy}))
    store = _offline(tmp_path)
    assert len(store.status()) == QUEUED  # read in from the earlier client's file

    written = _wchar()
    first = store.save(new_thread(1))  # a new entry
    added = _wchar() - written
    store.save(with_turns(first, "again"))  # its entry is due: nothing written
    store.queue.add(legacy[5]["thread_id"], "save")  # already queued

    assert added < 256 * 1024  # the old whole-file rewrite was 3.8 MB at this size
    entries = store.status()
    assert len(entries) == QUEUED + 1
    assert len({(e.thread_id, e.op) for e in entries}) == QUEUED + 1
    assert entries[-1].thread_id == str(first.id)  # the oldest first, the new one last
    assert [e.thread_id for e in entries[:QUEUED]] == [e["thread_id"] for e in legacy]
    store.close()


def test_an_earlier_clients_pending_json_is_read_in_once_keeping_each_entrys_state(
    tmp_path: Path,
) -> None:
    ahead = (datetime.now(UTC) + timedelta(days=900)).isoformat()
    legacy = [
        _legacy_entry(0),
        _legacy_entry(1, retry_count=3, last_error="refused (413)", failed_at=ahead),
        _legacy_entry(2, token_refused_at="2026-03-02T09:15:00Z", last_error="401"),
        _legacy_entry(3, op="patch", payload={"archived": True}, generation=4),
        _legacy_entry(4, retry_count=7, next_attempt_at=ahead),  # a clock that was ahead
    ]
    path = tmp_path / "pending.json"
    path.write_text(json.dumps({"format": 1, "entries": legacy}))

    queue = PendingSyncQueue(tmp_path / QUEUE_FILE, backoff_cap=600.0)
    entries = queue.entries()

    assert [(e.thread_id, e.op) for e in entries] == [(e["thread_id"], e["op"]) for e in legacy]
    assert queue_counts(entries) == QueueCounts(pending=4, failed=1, waiting_for_login=1)
    assert entries[3].payload == {"archived": True}
    assert entries[3].generation == 4
    assert entries[4].next_attempt_at is not None
    assert entries[4].next_attempt_at < datetime.now(UTC) + timedelta(seconds=601)
    assert not path.exists()
    migrated = tmp_path / "pending.json.migrated"
    assert json.loads(migrated.read_bytes())["entries"] == legacy  # the backup, as it was
    assert not queue.rebuilt
    assert not queue.dropped

    path.write_bytes(migrated.read_bytes())  # killed after the commit, before the rename
    again = PendingSyncQueue(tmp_path / QUEUE_FILE).entries()
    assert [e.thread_id for e in again] == [e.thread_id for e in entries]  # none twice
    assert len(queue_rows(tmp_path)) == len(legacy)
    queue.close()
