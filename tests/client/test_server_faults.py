"""The server killed hard (SIGKILL) in the middle of a client sync, then restarted on the same
port: after the next sync the server holds exactly the local state, nothing duplicated or lost.

A request may die before the server commits it, or after the commit but before the response
reaches the client (the client then retries a write the server already applied): both must
converge to the local copy.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from loomsync import LocalThreadStore, SyncingThreadStore, Thread
from tests.client.conftest import LiveServer, make_client, new_thread, with_turns

THREADS = 100
SYNC_RETURNS_WITHIN = 30.0  # seconds: a sync against a dead server must not hang
DRAIN_ROUNDS = 20


def device(server: LiveServer, token: str, folder: Path) -> SyncingThreadStore:
    return SyncingThreadStore(
        LocalThreadStore(folder / "threads"),
        make_client(server.url, token),
        sync_dir=folder / "sync",
        background=False,
        retry_base=0.01,
        retry_cap=0.2,
    )


def kill_during(
    server: LiveServer,
    store: SyncingThreadStore,
    *,
    after: int,
    lose_response: bool = False,
    timeout: float = 20.0,
) -> None:
    """Run ``store.retry_pending()`` in a thread; SIGKILL the server once ``after`` more
    requests were logged (or the sync ended); wait, bounded, for the sync to return.

    ``lose_response``: from then on the server holds its answers to writes; it is killed once
    one write was committed and its response held (the client never learns it succeeded).
    """
    assert server.process is not None
    before, held = len(server.requests()), len(server.held())
    if lose_response and after == 0:
        server.hold_write_responses()  # the very first write
    sync = threading.Thread(target=store.retry_pending, daemon=True)
    sync.start()
    deadline = time.monotonic() + timeout
    while len(server.requests()) < before + after and sync.is_alive():
        assert time.monotonic() < deadline, "the sync sent too few requests"
        time.sleep(0.001)
    if lose_response:
        assert after == 0 or sync.is_alive(), "the sync ended before the fault"
        server.hold_write_responses()
        while len(server.held()) == held:
            assert time.monotonic() < deadline, "no write response was held"
            time.sleep(0.001)
        assert server.held()[-1].rsplit("\t", 1)[1] in ("200", "201"), server.held()
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait(timeout=10)
    server.hold_write_responses(False)
    sync.join(SYNC_RETURNS_WITHIN)
    assert not sync.is_alive(), "the sync hung after the server died"


def drain(store: SyncingThreadStore) -> None:
    """Sync until the queue is empty (bounded), and nothing was refused for good."""
    for _ in range(DRAIN_ROUNDS):
        store.retry_pending()
        if store.pending_count() == 0:
            break
    assert store.pending_count() == 0, store.status()
    assert store.queue.failed() == []
    assert [r for r in store.reports if r.status in ("forked", "failed", "gone")] == []


def messages_of(thread: Thread) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in thread.messages]


def assert_server_holds_local(
    server: LiveServer, token: str, store: SyncingThreadStore, expected_ids: set[str]
) -> None:
    client = make_client(server.url, token)
    try:
        local_ids = {s.id for s in store.list(archived="any")}
        assert {str(i) for i in local_ids} == expected_ids  # no fork was made locally
        for thread_id in sorted(expected_ids):
            local = store.local.load(thread_id)
            remote = client.get_thread(thread_id)
            assert messages_of(remote) == messages_of(local), thread_id
            assert remote.metadata == local.metadata, thread_id
            base = store.states.get(thread_id).base
            assert base is not None
            assert base.version == remote.version
        on_server = [str(s.id) for s in client.iter_threads(scope="mine", archived="any")]
        assert len(on_server) == len(set(on_server))
        assert set(on_server) == expected_ids
    finally:
        client.close()


@pytest.mark.parametrize("lose_response", [False, True], ids=["killed", "response-lost"])
def test_server_killed_during_a_sync_of_a_hundred_threads(
    own_server: LiveServer, account: str, tmp_path: Path, lose_response: bool
) -> None:
    store = device(own_server, account, tmp_path)
    try:
        threads: dict[str, Thread] = {}
        for index in range(THREADS // 2):  # half of them on the server before the fault
            saved = store.save(new_thread(2 + index % 4, metadata={"title": f"thread {index}"}))
            threads[str(saved.id)] = saved
        drain(store)
        synced = list(threads)

        # Interleaved: appends (1-3 turns) to synced threads and PUTs of new ones.
        for index in range(THREADS // 2, THREADS):
            saved = store.save(new_thread(2 + index % 4, metadata={"title": f"thread {index}"}))
            threads[str(saved.id)] = saved
            old_id = synced[index - THREADS // 2]
            if index % 5 != 0:
                extra = [f"{old_id} extra {n}" for n in range(1 + index % 3)]
                threads[old_id] = store.save(with_turns(threads[old_id], *extra))
        queued = store.pending_count()
        assert queued == THREADS // 2 + sum(1 for i in range(THREADS // 2, THREADS) if i % 5)

        kill_during(own_server, store, after=queued // 3, lose_response=lose_response)
        assert 0 < store.pending_count() < queued  # the kill did land mid-sync

        own_server.start()
        drain(store)

        assert_server_holds_local(own_server, account, store, set(threads))
        for thread_id, thread in threads.items():
            assert messages_of(store.local.load(thread_id)) == messages_of(thread)
    finally:
        store.close()


def test_server_killed_during_appends_to_one_thread(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    store = device(own_server, account, tmp_path)
    try:
        thread = store.save(new_thread(1, metadata={"title": "one thread"}))
        thread_id = str(thread.id)
        drain(store)
        expected = ["turn 0"]

        def add(label: str, count: int) -> None:
            nonlocal thread
            contents = [f"{label} {n}" for n in range(count)]
            thread = store.save(with_turns(thread, *contents))
            expected.extend(contents)

        for round_ in range(6):
            for batch in range(3):  # several saves, each of a few turns, before the sync
                add(f"r{round_} up b{batch}", 1 + batch)
            # Odd rounds: the append is committed but its response never arrives.
            lose = round_ % 2 == 1
            kill_during(own_server, store, after=0 if lose else 1, lose_response=lose)
            for batch in range(3):  # more turns while the server is down
                add(f"r{round_} down b{batch}", 2)
                assert store.retry_pending()[-1].status == "pending"
            own_server.start()
            add(f"r{round_} back", 1)
            drain(store)
            assert messages_of(store.local.load(thread_id)) == [("user", c) for c in expected]

        assert_server_holds_local(own_server, account, store, {thread_id})
        with make_client(own_server.url, account) as client:
            remote = client.get_thread(thread_id)
        assert [m.content for m in remote.messages] == expected
        assert len(set(expected)) == len(expected)
    finally:
        store.close()
