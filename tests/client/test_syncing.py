"""SyncingThreadStore against a real server: offline saves, delta sync, conflicts between two
devices, refusals that block nothing, deletions on the server, the queue surviving restarts."""

from __future__ import annotations

import socket
import time
import uuid
from pathlib import Path

import pytest

from app.auth import create_token
from app.config import Settings
from loomsync import (
    LocalThreadStore,
    RemoteThreadStore,
    SyncingThreadStore,
    Thread,
    ThreadNotFoundError,
    ThreadSyncClient,
)
from tests.client.conftest import (
    BODY_LIMIT,
    Devices,
    LiveServer,
    free_port,
    make_client,
    new_thread,
    wait_for,
    with_turns,
)
from tests.client.threadfiles import stored_doc

SAVE_RETURNS_WITHIN = 0.5  # seconds: a local save, never a network wait


def contents(thread: Thread) -> list[str]:
    return [m.content for m in thread.messages]


def test_two_hundred_offline_turns_arrive_in_order_in_one_append(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"),
        make_client(own_server.url, account),
        sync_dir=tmp_path / "sync",
        background=True,
        retry_base=0.05,
        retry_cap=0.5,
    )
    try:
        first = store.save_and_sync(new_thread(1))
        assert first.status == "synced"
        thread_id = first.thread_id
        thread = store.load(thread_id)
        own_server.stop()

        slowest = 0.0
        for index in range(1, 201):
            thread = with_turns(thread, f"turn {index}")
            started = time.monotonic()
            store.save(thread)
            slowest = max(slowest, time.monotonic() - started)
            on_disk = stored_doc(tmp_path / "threads" / f"{thread_id}.jsonl")
            assert len(on_disk["conversation"]["messages"]) == index + 1
        assert slowest < SAVE_RETURNS_WITHIN
        assert store.pending_count() == 1  # deduplicated: one entry for the thread

        before = len(own_server.requests())
        own_server.start()
        store.retry_pending()
        wait_for(lambda: store.pending_count() == 0, what="the queue to drain")

        assert own_server.requests_about(thread_id, since=before) == [
            f"POST /api/threads/{thread_id}/messages"
        ]
        server_copy = RemoteThreadStore(make_client(own_server.url, account)).load(thread_id)
        assert contents(server_copy) == [f"turn {i}" for i in range(201)]
        assert server_copy.version == 2
    finally:
        store.close()


def test_save_returns_at_once_while_the_server_hangs(account: str, tmp_path: Path) -> None:
    with socket.socket() as silent:  # accepts connections (backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)
        client = ThreadSyncClient(
            f"http://127.0.0.1:{silent.getsockname()[1]}", account, timeout=3, retries=0
        )
        store = SyncingThreadStore(
            LocalThreadStore(tmp_path / "threads"),
            client,
            sync_dir=tmp_path / "sync",
            background=True,
        )
        thread = new_thread(0)
        for index in range(20):
            thread = with_turns(thread, f"turn {index}")
            started = time.monotonic()
            thread = store.save(thread)
            assert time.monotonic() - started < SAVE_RETURNS_WITHIN
        assert len(store.load(str(thread.id)).messages) == 20
        assert store.pending_count() == 1
        store.close(timeout=0.1)


def test_new_turns_go_up_as_an_append_not_a_full_upload(
    devices: Devices, live_server: LiveServer
) -> None:
    device = devices("a")
    thread = device.save_and_sync(new_thread(3)).thread
    assert thread is not None
    before = len(live_server.requests())
    for batch in range(3):
        thread = device.save(with_turns(thread, f"batch {batch} a", f"batch {batch} b"))
        device.retry_pending()
    device.update_metadata(str(thread.id), {"title": "renamed", "is_pinned": None})
    device.retry_pending()
    thread = device.save(with_turns(device.load(str(thread.id)), "after rename"))
    device.retry_pending()
    path = f"/api/threads/{thread.id}"
    assert live_server.requests_about(str(thread.id), since=before) == [
        f"POST {path}/messages",
        f"POST {path}/messages",
        f"POST {path}/messages",
        f"PATCH {path}",
        f"POST {path}/messages",
    ]
    server_copy = RemoteThreadStore(make_client(live_server.url, devices.token)).load(
        str(thread.id)
    )
    assert len(server_copy.messages) == 10
    assert server_copy.metadata.title == "renamed"


def test_background_sync_delivers_without_being_asked(
    devices: Devices, live_server: LiveServer
) -> None:
    device = devices("a", background=True)
    saved = device.save(new_thread(2))
    wait_for(lambda: device.pending_count() == 0, what="the background sync")
    server_copy = RemoteThreadStore(make_client(live_server.url, devices.token)).load(str(saved.id))
    assert contents(server_copy) == ["turn 0", "turn 1"]


def test_prefix_conflict_merges_to_the_longer_history_on_both_devices(devices: Devices) -> None:
    a, b = devices("a"), devices("b")
    thread_id = a.save_and_sync(new_thread(3)).thread_id
    stale_on_b = b.load(thread_id)  # fetched: version 1, three turns
    a.save_and_sync(with_turns(a.load(thread_id), "a1", "a2"))

    renamed = stale_on_b.model_copy(
        update={"metadata": stale_on_b.metadata.model_copy(update={"title": "from b"})}
    )
    outcome = b.save_and_sync(renamed)  # 409: b's turns are a prefix of the server's
    assert outcome.status == "merged"  # a's turns came in (issue 27, item 10)
    a.pull()

    for device in (a, b):
        merged = device.load(thread_id)
        assert contents(merged) == ["turn 0", "turn 1", "turn 2", "a1", "a2"]
        assert merged.metadata.title == "from b"


def test_turns_added_after_a_remote_rename_are_appended(
    devices: Devices, live_server: LiveServer
) -> None:
    a, b = devices("a"), devices("b")
    thread_id = a.save_and_sync(new_thread(2)).thread_id
    on_b = b.load(thread_id)
    a.update_metadata(thread_id, {"tags": ["from-a"]})
    a.retry_pending()

    before = len(live_server.requests())
    assert b.save_and_sync(with_turns(on_b, "b1")).status == "merged"  # a's tags came in
    path = f"/api/threads/{thread_id}/messages"
    assert live_server.requests_about(thread_id, since=before) == [f"POST {path}", f"POST {path}"]
    a.pull()
    for device in (a, b):
        merged = device.load(thread_id)
        assert contents(merged) == ["turn 0", "turn 1", "b1"]
        assert merged.metadata.tags == ["from-a"]


def test_divergent_turns_keep_both_histories_on_both_devices(devices: Devices) -> None:
    a, b = devices("a"), devices("b")
    thread_id = a.save_and_sync(new_thread(2)).thread_id
    on_b = b.load(thread_id)
    a.save_and_sync(with_turns(a.load(thread_id), "from a"))

    outcome = b.save_and_sync(with_turns(on_b, "from b"))
    assert outcome.status == "forked"
    fork_id = outcome.fork_id
    assert fork_id is not None
    assert b.reports[-1].fork_id == fork_id
    b.retry_pending()  # uploads the fork
    a.pull()

    for device in (a, b):
        assert contents(device.load(thread_id)) == ["turn 0", "turn 1", "from a"]
        fork = device.load(fork_id)
        assert contents(fork) == ["turn 0", "turn 1", "from b"]
        assert fork.metadata.extra["forked_from"]["id"] == thread_id

    # b's agent still holds its old copy and keeps going: the turn lands in the fork.
    continued = b.save(with_turns(with_turns(on_b, "from b"), "b again"))
    assert str(continued.id) == fork_id
    assert contents(b.load(fork_id))[-1] == "b again"
    assert contents(b.load(thread_id)) == ["turn 0", "turn 1", "from a"]


def test_a_thread_refused_with_413_blocks_nothing_else(
    devices: Devices, live_server: LiveServer
) -> None:
    device = devices("a")
    big = device.save(
        new_thread(0, conversation={"messages": [{"role": "tool", "content": "x" * BODY_LIMIT}]})
    )
    small = [device.save(new_thread(2)) for _ in range(3)]

    outcomes = {o.thread_id: o.status for o in device.retry_pending()}
    assert outcomes[str(big.id)] == "failed"
    assert all(outcomes[str(t.id)] == "synced" for t in small)
    (failed,) = [e for e in device.status() if e.failed]
    assert failed.thread_id == str(big.id)
    assert failed.failed_at is not None
    assert "413" in (failed.last_error or "")
    assert device.pending_count() == 0

    later = device.save(with_turns(small[0], "later"))
    assert {o.thread_id: o.status for o in device.retry_pending()} == {str(later.id): "synced"}
    remote = RemoteThreadStore(make_client(live_server.url, devices.token))
    assert contents(remote.load(str(later.id)))[-1] == "later"
    assert [e.thread_id for e in device.status()] == [str(big.id)]


def test_thread_deleted_on_the_server_keeps_its_local_copy(
    devices: Devices, live_server: LiveServer
) -> None:
    device = devices("a")
    thread = device.save_and_sync(new_thread(2)).thread
    assert thread is not None
    RemoteThreadStore(make_client(live_server.url, devices.token)).delete(str(thread.id))

    device.save(with_turns(thread, "written after the delete"))
    (outcome,) = device.retry_pending()
    assert outcome.status == "gone"
    assert contents(device.local.load(str(thread.id)))[-1] == "written after the delete"
    (entry,) = device.status()
    assert entry.failed
    assert "deleted on the server" in (entry.last_error or "")


def test_pending_queue_survives_a_restart(devices: Devices, tmp_path: Path) -> None:
    offline = devices("a", url=f"http://127.0.0.1:{free_port()}")
    saved = offline.save(new_thread(3))
    (outcome,) = offline.retry_pending()
    assert outcome.status == "pending"
    offline.close()

    again = devices("a")  # same folders, server reachable
    (entry,) = again.status()
    assert (entry.thread_id, entry.retry_count) == (str(saved.id), 1)
    assert entry.last_error
    assert [o.status for o in again.retry_pending()] == ["synced"]
    assert again.pending_count() == 0


def test_search_falls_back_to_local_files_when_the_server_is_away(devices: Devices) -> None:
    device = devices("a", url=f"http://127.0.0.1:{free_port()}")
    device.save(new_thread(0, metadata={"title": "Fix the flaky login test"}))
    results = device.search("flaky")
    assert results.source == "local"
    assert results.fallback_reason is not None
    assert "unreachable" in results.fallback_reason
    assert [h.thread.title for h in results.hits] == ["Fix the flaky login test"]


def test_server_search_includes_threads_not_uploaded_yet(devices: Devices) -> None:
    device = devices("a")
    uploaded = device.save_and_sync(new_thread(0, metadata={"title": "quokka uploaded"}))
    waiting = device.save(new_thread(0, metadata={"title": "quokka waiting"}))
    private = device.save(new_thread(0, metadata={"title": "quokka mine"}, is_private=True))
    device.save_and_sync(new_thread(0, metadata={"title": "wombat uploaded"}))
    results = device.search("quokka")
    assert results.source == "server"
    assert {h.thread.id for h in results.hits} == {
        uploaded.thread_id,
        str(waiting.id),
        str(private.id),
    }
    # the threads the server lacks are found by the whole store's search (comparable scores)
    assert {h.thread.id: h.origin for h in results.hits} == {
        uploaded.thread_id: "server",
        str(waiting.id): "local",
        str(private.id): "local",
    }


def test_a_writer_keeps_changes_another_process_made_meanwhile(devices: Devices) -> None:
    agent = devices("a")
    thread = agent.save_and_sync(new_thread(1)).thread
    assert thread is not None
    cli = devices("a")  # another process on the same folders
    cli.share(str(thread.id), visibility="public")
    cli.update_metadata(str(thread.id), {"title": "named from the CLI"})

    saved = agent.save(with_turns(thread, "next turn"))  # the agent's copy predates both edits
    assert (saved.visibility, saved.metadata.title) == ("public", "named from the CLI")
    agent.retry_pending()
    cli.pull()
    local = cli.load(str(thread.id))
    assert (local.visibility, local.metadata.title, contents(local)) == (
        "public",
        "named from the CLI",
        ["turn 0", "next turn"],
    )


def test_a_fresh_device_pulls_every_thread_of_the_account(devices: Devices) -> None:
    a = devices("a")
    ids = {a.save_and_sync(new_thread(i + 1)).thread_id for i in range(3)}
    b = devices("b")
    pulled = b.pull()
    assert {o.thread_id for o in pulled} == ids
    assert {s.id for s in b.list()} == ids
    assert b.pull() == []  # nothing newer the second time


def test_a_private_thread_never_causes_a_request_of_any_kind(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"),
        make_client(own_server.url, account),
        sync_dir=tmp_path / "sync",
        background=True,
        retry_base=0.01,
    )
    try:
        before = len(own_server.requests())
        private = store.save(new_thread(2, is_private=True))
        thread_id = str(private.id)
        assert store.save_and_sync(with_turns(private, "more")).status == "private"
        store.update_metadata(thread_id, {"title": "secret"})
        store.share(thread_id, visibility="public")
        store.archive(thread_id)
        store.unarchive(thread_id)
        fork = store.fork(thread_id)
        assert fork.is_private
        assert store.load(thread_id).metadata.title == "secret"
        store.retry_pending()
        store.delete(thread_id)
        store.close()
        assert own_server.requests()[before:] == []
        assert store.pending_count() == 0
    finally:
        store.close()


def test_a_thread_made_private_after_it_synced_causes_no_further_request(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"),
        make_client(own_server.url, account),
        sync_dir=tmp_path / "sync",
        background=True,
        retry_base=0.01,
    )
    try:
        synced = store.save_and_sync(new_thread(2))
        assert synced.status == "synced"
        assert synced.thread is not None
        before = len(own_server.requests())

        private = store.save(
            with_turns(synced.thread, "now private").model_copy(update={"is_private": True})
        )
        store.save(with_turns(private, "and more"))
        store.update_metadata(synced.thread_id, {"title": "secret"})
        store.archive(synced.thread_id)
        assert store.save_and_sync(store.load(synced.thread_id)).status == "private"
        store.retry_pending()
        store.delete(synced.thread_id)
        store.close()
        assert own_server.requests()[before:] == []
    finally:
        store.close()


def test_a_support_only_reader_cannot_fork_a_thread_into_their_account(
    devices: Devices, live_server: LiveServer, settings: Settings, tmp_path: Path
) -> None:
    """API.md section 4, support reads and does not copy: ``fork`` on the client (a local copy
    uploaded as a new thread naming its source) is refused by the server like a server fork.
    The refusal is kept and reported, and the server holds no copy."""
    shared = (
        devices("owner")
        .save_and_sync(new_thread(2, visibility="private", is_shared_with_support=True))
        .thread
    )
    assert shared is not None
    suffix = uuid.uuid4().hex[:10]
    sue = create_token(settings, f"sue-{suffix}", org=f"globex-{suffix}", roles=["support"])
    support = SyncingThreadStore(
        LocalThreadStore(tmp_path / "support" / "threads"),
        make_client(live_server.url, sue),
        sync_dir=tmp_path / "support" / "sync",
        background=False,
        retry_base=0.01,
        retry_cap=0.2,
    )
    try:
        assert contents(support.load(str(shared.id))) == ["turn 0", "turn 1"]  # support reads
        fork = support.fork(str(shared.id))
        outcomes = {o.thread_id: o.status for o in support.retry_pending()}
        assert outcomes[str(fork.id)] == "failed"
        (entry,) = [e for e in support.status() if e.thread_id == str(fork.id)]
        assert entry.failed
        assert "support" in (entry.last_error or "")
    finally:
        support.close()
    with pytest.raises(ThreadNotFoundError):
        RemoteThreadStore(make_client(live_server.url, sue)).load(str(fork.id))
