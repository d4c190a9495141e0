"""Issue 15, item 4 (a): a queue file (``queue.sqlite3``, or an earlier client's
``pending.json``) that does not parse is set aside and the queue is
rebuilt from the store (every non-private local thread that differs from its sync base, never
synced ones included), and every ``loomsync sync`` queues a change the queue lost track of.
Real files, a real server; the CLI runs as a person would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loomsync import LocalThreadStore, RemoteThreadStore, SyncingThreadStore, ThreadNotFoundError
from loomsync.sync.queue import QUEUE_FILE
from tests.client.conftest import (
    LiveServer,
    Person,
    login,
    make_client,
    new_thread,
    wait_for,
    with_turns,
)
from tests.client.queuefile import damage_queue, queue_path

DAMAGED = {
    "truncated": b'{"format": 1, "entries": [{"thread_id": "T-0',
    "garbage": b"\xff\xfe\x00not json at all\x07",
    "a list": b"[]",
    "entries not a list": b'{"format": 1, "entries": {"a": 1}}',
    "null": b"null",
    "too deep": b"[" * 100_000,
}


def server_messages(server: LiveServer, token: str, thread_id: str) -> list[str]:
    """The server copy's message contents (ThreadNotFoundError if it has none)."""
    remote = RemoteThreadStore(make_client(server.url, token))
    try:
        return [m.content for m in remote.load(thread_id).messages]
    finally:
        remote.close()


def offline_work(person: Person, server: LiveServer, token: str) -> tuple[str, str, str]:
    """A synced thread changed since, a new thread, a private one: (changed, new, private)."""
    agent = person.agent()
    synced = agent.save(new_thread(1))
    assert person("sync", "--no-pull").code == 0
    assert server_messages(server, token, str(synced.id)) == ["turn 0"]
    agent.save(with_turns(agent.load(str(synced.id)), "offline turn"))
    fresh = agent.save(new_thread(2))
    private = agent.save(new_thread(1, is_private=True))
    agent.close()
    return str(synced.id), str(fresh.id), str(private.id)


@pytest.mark.parametrize("name", [QUEUE_FILE, "pending.json"])
@pytest.mark.parametrize("content", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_queue_is_rebuilt_from_the_store_and_sent(
    person: Person, live_server: LiveServer, account: str, content: bytes, name: str
) -> None:
    assert login(person, live_server, account).code == 0
    changed, fresh, private = offline_work(person, live_server, account)
    if name == QUEUE_FILE:
        queue = damage_queue(person.paths.sync_dir, content)
    else:  # an earlier client's queue, damaged before the upgrade read it
        queue = person.paths.sync_dir / name
        queue.write_bytes(content)

    done = person("sync", "--no-pull")

    lines = done.out.splitlines()
    assert lines[0].startswith("The sync queue did not parse (")
    assert "rebuilt from the store: 2 threads to send." in lines[0]
    assert "Sent 2, pulled 0, failed 0, forked 0; 0 still pending." in lines
    assert done.code == 0
    assert server_messages(live_server, account, changed) == ["turn 0", "offline turn"]
    assert server_messages(live_server, account, fresh) == ["turn 0", "turn 1"]
    with pytest.raises(ThreadNotFoundError):
        server_messages(live_server, account, private)
    (aside,) = queue.parent.glob(f"{name}.corrupt-*")
    assert aside.read_bytes() == content  # kept for a look, never read again
    assert aside.name in lines[0]
    again = person("sync", "--no-pull")
    assert again.out == "Sent 0, pulled 0, failed 0, forked 0; 0 still pending.\n"


def test_sync_status_rebuilds_and_lists_what_the_server_lacks(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    changed, fresh, private = offline_work(person, live_server, account)
    damage_queue(person.paths.sync_dir, DAMAGED["garbage"])

    status = person("sync", "--status")

    assert "rebuilt from the store: 2 threads to send." in status.out
    assert "2 pending, 0 failed." in status.out
    assert changed in status.out
    assert fresh in status.out
    assert private not in status.out


def test_sync_queues_a_change_the_queue_never_had(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    changed, fresh, _ = offline_work(person, live_server, account)
    for suffix in ("", "-wal", "-shm"):  # lost, not damaged
        (person.paths.sync_dir / f"{QUEUE_FILE}{suffix}").unlink(missing_ok=True)
    assert not queue_path(person.paths.sync_dir).exists()

    done = person("sync", "--no-pull", "--json")

    report = json.loads(done.out)
    assert report["requeue"] == {
        "rebuilt": [],
        "queued": sorted([changed, fresh]),
        "dropped": [],
    }
    assert report["pending"] == 0
    assert server_messages(live_server, account, fresh) == ["turn 0", "turn 1"]
    shown = person("sync", "--no-pull")  # nothing left to find
    assert shown.out == "Sent 0, pulled 0, failed 0, forked 0; 0 still pending.\n"


def test_a_failed_entry_stays_failed_through_the_rescan(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    _, fresh, _ = offline_work(person, live_server, account)
    assert person("sync", "--no-pull").code == 0
    agent = person.agent()
    changed = agent.save(with_turns(agent.load(fresh), "more"))
    (entry,) = agent.queue.entries()
    agent.queue.fail(entry, "refused by the server (413): too big")
    agent.close()

    done = person("sync", "--no-pull")

    assert "Found" not in done.out
    assert "did not parse" not in done.out
    status = person("sync", "--status")
    assert "0 pending, 1 failed." in status.out
    assert str(changed.id) in status.out


def test_the_background_sync_rebuilds_a_damaged_queue(
    tmp_path: Path, live_server: LiveServer, account: str
) -> None:
    threads, sync_dir = tmp_path / "threads", tmp_path / "sync"
    offline = SyncingThreadStore(LocalThreadStore(threads), None, sync_dir=sync_dir)
    saved = offline.save(new_thread(3))
    offline.close()
    damage_queue(sync_dir, b"SQLite format 3\x00" + b"\x00" * 80)

    with SyncingThreadStore(
        LocalThreadStore(threads),
        make_client(live_server.url, account),
        sync_dir=sync_dir,
        retry_base=0.01,
        retry_cap=0.2,
    ) as agent:
        wait_for(
            lambda: agent.states.get(str(saved.id)).base is not None,
            what="the background sync to send the thread the lost queue held",
        )
        (rebuilt,) = agent.queue.rebuilt
        assert rebuilt.thread_ids == (str(saved.id),)
    assert server_messages(live_server, account, str(saved.id)) == ["turn 0", "turn 1", "turn 2"]
