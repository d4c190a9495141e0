"""Issue 15, item 4 (b): an entry that failed while the clock was years ahead is not postponed
once the clock is right again (``next_attempt_at`` is brought back to now + the backoff cap),
and a new save of a thread makes its backing-off entry due at once. Real files, a real server."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from loomsync import LocalThreadStore, RemoteThreadStore, SyncingThreadStore
from tests.client.conftest import LiveServer, make_client, new_thread, wait_for, with_turns
from tests.client.queuefile import queue_rows, write_queue_rows

FAR_AHEAD = "2031-06-01T12:00:00Z"


def server_count(server: LiveServer, token: str, thread_id: str) -> int:
    remote = RemoteThreadStore(make_client(server.url, token))
    try:
        return len(remote.load(thread_id).messages)
    finally:
        remote.close()


def test_an_entry_dated_2031_is_retried_once_the_clock_is_right(
    tmp_path: Path, live_server: LiveServer, account: str
) -> None:
    threads, sync_dir = tmp_path / "threads", tmp_path / "sync"
    offline = SyncingThreadStore(LocalThreadStore(threads), None, sync_dir=sync_dir)
    saved = offline.save(new_thread(2))
    offline.close()
    (entry,) = queue_rows(sync_dir)
    entry.update(retry_count=7, last_error="connection refused", next_attempt_at=FAR_AHEAD)
    write_queue_rows(sync_dir, [entry])  # as a client whose clock said 2031 left it

    with SyncingThreadStore(
        LocalThreadStore(threads),
        make_client(live_server.url, account),
        sync_dir=sync_dir,
        retry_base=0.01,
        retry_cap=0.2,
    ) as agent:
        wait_for(lambda: agent.pending_count() == 0, what="the entry dated 2031 to be sent")
    assert server_count(live_server, account, str(saved.id)) == 2


def test_reading_an_entry_dated_2031_brings_it_back_within_the_cap(tmp_path: Path) -> None:
    threads, sync_dir = tmp_path / "threads", tmp_path / "sync"
    store = SyncingThreadStore(LocalThreadStore(threads), None, sync_dir=sync_dir, retry_cap=600.0)
    store.save(new_thread(1))
    (row,) = queue_rows(sync_dir)
    write_queue_rows(sync_dir, [dict(row, next_attempt_at=FAR_AHEAD)])

    (entry,) = store.status()

    assert entry.next_attempt_at is not None
    assert entry.next_attempt_at.year < 2031
    written = queue_rows(sync_dir)[0]["next_attempt_at"]
    assert datetime.fromisoformat(written) < datetime(2031, 1, 1, tzinfo=UTC)
    store.close()


def test_a_new_save_makes_a_backing_off_entry_due_at_once(
    own_server: LiveServer, account: str, tmp_path: Path
) -> None:
    agent = SyncingThreadStore(
        LocalThreadStore(tmp_path / "threads"),
        make_client(own_server.url, account),
        sync_dir=tmp_path / "sync",
        retry_base=3600.0,  # a failure backs off for half an hour or more
        retry_cap=7200.0,
    )
    try:
        own_server.stop()
        saved = agent.save(new_thread(1))
        wait_for(
            lambda: any(e.retry_count for e in agent.status()), what="a failed attempt offline"
        )
        (entry,) = agent.status()
        assert not entry.due(datetime.now(UTC))
        own_server.start()

        agent.save(with_turns(saved, "back online"))

        wait_for(lambda: agent.pending_count() == 0, what="the new save to be sent at once")
        assert server_count(own_server, account, str(saved.id)) == 2
    finally:
        agent.close()
