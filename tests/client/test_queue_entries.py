"""Issue 15, item 4 (review): one entry of the sync queue that is not valid (a thread id that
names a path, an unknown op, not an object) is dropped with a warning saying what, the valid
ones are kept and the store's changes queued again, never blocking the rest; a queue that
cannot be read at all (a folder in its place) is set aside and rebuilt like one that does not
parse; set-aside files do not pile up. Real files, a real server, the CLI as a person runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loomsync import LocalThreadStore, SyncingThreadStore
from loomsync.sync.queue import QUEUE_FILE, PendingSyncQueue
from tests.client.conftest import LiveServer, Person, login, make_client, new_thread, wait_for
from tests.client.queuefile import queue_rows, write_queue_rows
from tests.client.test_queue_rebuild import offline_work, server_messages

KEEP = 5  # set-aside queues kept (loomsync.sync.queuerepair.KEEP_SET_ASIDE)
EVIL = "../../../../tmp/evil-loomsync-queue"


def test_invalid_entries_are_dropped_and_the_rest_is_sent(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    changed, fresh, _private = offline_work(person, live_server, account)
    sync_dir = person.paths.sync_dir
    by_id = {e["thread_id"]: e for e in queue_rows(sync_dir)}
    assert set(by_id) == {changed, fresh}
    by_id[fresh]["op"] = "fly"  # its only entry is dropped: the store's rescan re-queues it
    evil = dict(by_id[changed], thread_id=EVIL)
    write_queue_rows(sync_dir, [evil, by_id[changed], by_id[fresh], 5])

    done = person("sync", "--no-pull")

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    (dropped,) = [line for line in lines if line.startswith("Dropped ")]
    assert dropped.startswith("Dropped 3 sync queue entries that are not valid, kept the others:")
    assert f"entry 1 (thread_id '{EVIL}', op 'save'): thread_id: " in dropped
    assert "not a thread id" in dropped
    assert f"entry 3 (thread_id '{fresh}', op 'fly'): op: " in dropped
    assert "entry 4 (5): " in dropped
    assert dropped.endswith("queued from the store: 1 thread.")
    assert "Sent 2, pulled 0, failed 0, forked 0; 0 still pending." in lines
    assert server_messages(live_server, account, changed) == ["turn 0", "offline turn"]
    assert server_messages(live_server, account, fresh) == ["turn 0", "turn 1"]
    assert not Path("/tmp/evil-loomsync-queue").exists()
    assert not Path("/tmp/evil-loomsync-queue.json").exists()
    assert queue_rows(sync_dir) == []
    again = person("sync", "--no-pull")
    assert again.out == "Sent 0, pulled 0, failed 0, forked 0; 0 still pending.\n"


def test_the_sdk_drops_an_invalid_entry_of_an_old_pending_json(tmp_path: Path) -> None:
    path = tmp_path / "pending.json"  # an earlier client's queue, read into queue.sqlite3
    good = {
        "thread_id": "T-0b8a3f2e-6a3c-4d7e-9f1a-2b3c4d5e6f70",
        "op": "save",
        "enqueued_at": "2026-03-02T09:14:00Z",
        "updated_at": "2026-03-02T09:14:00Z",
    }
    path.write_text(json.dumps({"format": 1, "entries": [dict(good, thread_id=EVIL), good]}))
    queue = PendingSyncQueue(tmp_path / QUEUE_FILE)

    (entry,) = queue.entries()

    assert entry.thread_id == good["thread_id"]
    (dropped,) = queue.dropped
    assert len(dropped.entries) == 1
    assert EVIL in dropped.entries[0]
    assert not queue.rebuilt
    assert [e["thread_id"] for e in queue_rows(tmp_path)] == [good["thread_id"]]
    assert not path.exists()
    assert json.loads((tmp_path / "pending.json.migrated").read_bytes())["entries"][1] == good
    assert not list(tmp_path.glob("pending.json.corrupt-*"))


def test_the_background_sync_is_not_blocked_by_an_invalid_entry(
    tmp_path: Path, live_server: LiveServer, account: str
) -> None:
    threads, sync_dir = tmp_path / "threads", tmp_path / "sync"
    offline = SyncingThreadStore(LocalThreadStore(threads), None, sync_dir=sync_dir)
    saved = offline.save(new_thread(2))
    offline.close()
    (row,) = queue_rows(sync_dir)
    write_queue_rows(sync_dir, [dict(row, thread_id=EVIL), row])

    with SyncingThreadStore(
        LocalThreadStore(threads),
        make_client(live_server.url, account),
        sync_dir=sync_dir,
        retry_base=0.01,
        retry_cap=0.2,
    ) as agent:
        wait_for(
            lambda: agent.states.get(str(saved.id)).base is not None,
            what="the background sync to send the valid entry",
        )
    assert server_messages(live_server, account, str(saved.id)) == ["turn 0", "turn 1"]


@pytest.mark.parametrize(
    ("name", "why"),
    [(QUEUE_FILE, "unable to open database file"), ("pending.json", "IsADirectoryError: ")],
)
def test_a_folder_in_place_of_the_queue_is_set_aside_and_rebuilt(
    person: Person, live_server: LiveServer, account: str, name: str, why: str
) -> None:
    assert login(person, live_server, account).code == 0
    changed, fresh, _private = offline_work(person, live_server, account)
    queue = person.paths.sync_dir / name
    queue.unlink(missing_ok=True)
    for suffix in ("-wal", "-shm"):
        (person.paths.sync_dir / f"{QUEUE_FILE}{suffix}").unlink(missing_ok=True)
    queue.mkdir()
    (queue / "inside").write_text("kept")

    done = person("sync", "--no-pull")

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    assert lines[0].startswith(f"The sync queue could not be read ({why}")
    assert "rebuilt from the store: 2 threads to send." in lines[0]
    assert "Sent 2, pulled 0, failed 0, forked 0; 0 still pending." in lines
    assert server_messages(live_server, account, fresh) == ["turn 0", "turn 1"]
    assert server_messages(live_server, account, changed) == ["turn 0", "offline turn"]
    (aside,) = queue.parent.glob(f"{name}.corrupt-*")
    assert (aside / "inside").read_text() == "kept"
    assert aside.name in lines[0]
    assert (queue.parent / QUEUE_FILE).is_file()


def test_only_the_newest_set_aside_queues_are_kept(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    offline_work(person, live_server, account)
    sync_dir = person.paths.sync_dir
    old = [sync_dir / f"pending.json.corrupt-2026010{n}T000000000000" for n in range(1, 8)]
    for path in old:
        path.write_bytes(b"{")
    old[0].unlink()
    old[0].mkdir()  # a folder set aside once is removed as well
    (old[0] / "pending.json").write_bytes(b"{")
    notes = sync_dir / "pending.json.corrupt-notes"  # not one of ours: left alone
    notes.write_text("mine")
    (sync_dir / "pending.json").write_bytes(b"garbage")

    done = person("sync", "--no-pull")

    assert done.code == 0, done.out + done.err
    kept = sorted(p.name for p in sync_dir.glob("pending.json.corrupt-2*"))
    assert len(kept) == KEEP
    assert kept[:-1] == [p.name for p in old[-(KEEP - 1) :]]
    assert kept[-1] in done.out  # the one just set aside
    assert notes.read_text() == "mine"
