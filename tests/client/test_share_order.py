"""Widening who may read a thread waits for its pending save (review P1-5; issue 12, items 1
and 5): the server's copy is the redacted one before anyone else may read it."""

from __future__ import annotations

from pathlib import Path

from loomsync import LocalThreadStore, SyncingThreadStore
from tests.client.conftest import (
    LiveServer,
    Person,
    free_port,
    login,
    make_client,
    new_thread,
    with_turns,
)


def device(folder: Path, url: str, token: str) -> SyncingThreadStore:
    return SyncingThreadStore(
        LocalThreadStore(folder / "threads"),
        make_client(url, token),
        sync_dir=folder / "sync",
        background=False,
        retry_base=0.01,
        retry_cap=0.2,
    )


def test_a_queued_save_goes_up_before_a_widening_patch_of_the_same_thread(
    live_server: LiveServer, account: str, tmp_path: Path
) -> None:
    online = device(tmp_path, live_server.url, account)
    first = online.save_and_sync(new_thread(2))
    assert first.status == "synced"
    thread_id = str(first.thread_id)
    online.close()
    offline = device(tmp_path, f"http://127.0.0.1:{free_port()}", account)
    offline.save(with_turns(offline.load(thread_id), "the redacted turn"))
    offline.share(thread_id, visibility="organization")
    offline.retry_pending()  # the server is away: both stay queued
    assert [e.op for e in offline.status()] == ["save", "patch"]
    offline.close()
    since = len(live_server.requests())
    online = device(tmp_path, live_server.url, account)
    try:
        online.retry_pending()
        sent = [line.split(" ")[0] for line in live_server.requests_about(thread_id, since)]
        assert sent[-1] == "PATCH", sent
        assert sent.index("PATCH") > sent.index("POST" if "POST" in sent else "PUT"), sent
        assert online.pending_count() == 0
    finally:
        online.close()


def test_share_refuses_to_widen_while_the_redacted_copy_cannot_reach_the_server(
    person: Person, live_server: LiveServer, account: str
) -> None:
    away = f"http://127.0.0.1:{free_port()}"
    assert person("login", "--server", away, "--token", account, "--no-verify").code == 0
    thread_id = str(person.agent().save(new_thread(1)).id)  # queued, never uploaded
    refused = person("share", thread_id, "--visibility", "organization")
    assert refused.code == 4  # the server unreachable: nothing shared (loomsync/cli/exits.py)
    assert "not on the server yet" in refused.err
    assert "the server is unreachable" in refused.err
    assert "loomsync sync" in refused.err
    agent = person.agent()
    assert agent.load(thread_id).visibility == "private"
    assert [e.op for e in agent.status()] == ["save"]
    assert login(person, live_server, account).code == 0
    shared = person("share", thread_id, "--visibility", "organization")
    assert shared.code == 0, shared.err
    assert "visible to your organization (organization)" in shared.out
