"""A stopped server answers at once (issue 30 item 8): a connection refused is not retried
within the request, so ``loomsync search`` and the MCP search fall back to this machine's
threads without waiting out the backoff, and a store's ``close()`` after a ``save()`` does not
sit in it either; the change stays queued and reaches the server once it is back.

The backoff is set to 1,000 s: before the fix each of these waited in it (the CLI and the MCP
calls until their subprocess or read timed out); nothing here measures time.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp import ClientSession

from loomsync import LocalThreadStore, SyncingThreadStore, ThreadSyncClient
from tests.client.conftest import LiveServer, Person, new_thread, wait_for
from tests.client.test_mcp import call, connected, note

#: What a person who never tuned anything would meet, with waits too long to sit through.
SLOW_RETRIES = {"LOOMSYNC_RETRIES": "3", "LOOMSYNC_BACKOFF": "1000", "LOOMSYNC_BACKOFF_MAX": "1000"}


def test_a_refused_connection_is_not_retried_and_the_save_waits_in_the_queue(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    waits: list[float] = []
    client = ThreadSyncClient(
        own_server.url, account, retries=3, backoff=1000, backoff_max=1000, sleep=waits.append
    )
    own_server.stop()
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"), client, sync_dir=tmp_path / "sync", background=True
    )
    saved = store.save(new_thread(2, visibility="organization"))
    wait_for(lambda: any(e.retry_count for e in store.status()), what="a first attempt")
    store.close()
    assert waits == []  # no backoff slept inside a request: the refusal came at once
    own_server.start()
    again = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"),
        ThreadSyncClient(own_server.url, account, retries=0),
        sync_dir=tmp_path / "sync",
        background=False,
    )
    try:
        assert [entry.thread_id for entry in again.status()] == [str(saved.id)]
        assert again.sync_thread(str(saved.id)).status == "synced"
    finally:
        again.close()


def test_search_on_a_stopped_server_falls_back_to_this_machine_at_once(
    person: Person, own_server: LiveServer, account: str
) -> None:
    assert person("login", "--server", own_server.url, "--token", account).code == 0
    kept = person.agent().save(note("Kept", "the okapi hid in the forest"))
    own_server.stop()
    result = person("search", "okapi", env=SLOW_RETRIES)  # 60 s subprocess timeout
    assert result.code == 0, result.err
    assert str(kept.id)[:8] in result.out
    assert "connection refused" in result.err


def test_the_mcp_search_on_a_stopped_server_answers_from_this_machine(
    person: Person, own_server: LiveServer, account: str
) -> None:
    assert person("login", "--server", own_server.url, "--token", account).code == 0
    kept = person.agent().save(note("Kept", "the tapir swam across"))
    own_server.stop()
    person.env.update(SLOW_RETRIES)

    async def run() -> None:
        with (person.home / "mcp-stderr.log").open("w") as errlog:
            async with connected(person, errlog) as session:
                await searched(session)

    async def searched(session: ClientSession) -> None:
        answer = (await call(session, "search_threads", query="tapir")).structured_content
        assert answer is not None
        assert answer["source"] == "local"
        assert "connection refused" in answer["note"]
        assert [h["thread_id"] for h in answer["hits"]] == [str(kept.id)]

    anyio.run(run)
