"""Old ``<id>.json`` thread folders become thread logs on first open (loomsync.store.migrate):
as written, backed up, idempotent, and finished by a rerun after a crash at any step."""

from __future__ import annotations

import json
from pathlib import Path

from loomsync import LocalThreadStore, ThreadId
from loomsync.core.document import codec
from loomsync.store import migrate
from tests.client.conftest import new_thread, with_turns
from tests.client.threadfiles import write_log


def _old_folder(root: Path, count: int) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    ids = []
    for n in range(count):
        thread = new_thread(n + 1, id=ThreadId.new())
        (root / f"{thread.id}.json").write_bytes(codec.encode_thread(thread))  # pretty, old
        ids.append(str(thread.id))
    return ids


def test_old_files_are_converted_backed_up_and_the_marker_written_last(tmp_path: Path) -> None:
    ids = _old_folder(tmp_path, 3)
    (tmp_path / f"{ThreadId.new()}.json").write_text("{torn")
    store = LocalThreadStore(tmp_path)
    assert store.migrated == 3
    assert len(store.problems) == 1
    assert list((tmp_path / ".quarantine").iterdir())
    for n, thread_id in enumerate(ids):
        assert len(store.load(thread_id).messages) == n + 1
        assert (tmp_path / migrate.BACKUP / f"{thread_id}.json").is_file()
    assert not list(tmp_path.glob("T-*.json"))
    assert (tmp_path / migrate.MARKER).is_file()
    assert LocalThreadStore(tmp_path).migrated == 0  # later opens skip the scan


def test_a_rerun_after_a_crash_at_any_step_finishes_and_keeps_the_json_content(
    tmp_path: Path,
) -> None:
    [done, written, stale, untouched] = _old_folder(tmp_path, 4)
    old = {
        tid: json.loads((tmp_path / f"{tid}.json").read_text()) for tid in (done, written, stale)
    }
    (tmp_path / migrate.BACKUP).mkdir()
    write_log(tmp_path / f"{done}.jsonl", old[done])  # converted and backed up: json gone
    (tmp_path / f"{done}.json").replace(tmp_path / migrate.BACKUP / f"{done}.json")
    write_log(tmp_path / f"{written}.jsonl", old[written])  # converted, not yet backed up
    shorter = dict(old[stale], conversation={"messages": []})
    write_log(tmp_path / f"{stale}.jsonl", shorter)  # a .jsonl holding less: the .json wins
    store = LocalThreadStore(tmp_path)
    assert store.migrated == 3
    for n, tid in enumerate((done, written, stale, untouched)):
        assert len(store.load(tid).messages) == n + 1
    assert sorted(p.name for p in (tmp_path / migrate.BACKUP).iterdir()) == sorted(
        f"{tid}.json" for tid in (done, written, stale, untouched)
    )
    grown = store.save(with_turns(store.load(untouched), "after migration"))
    assert len(LocalThreadStore(tmp_path).load(str(grown.id)).messages) == 5
