"""Issue 16, item 3, in the SDK: a 401 (:class:`loomsync.errors.TokenRefusedError`) is not
"offline" and not a failure of the entry. Entries wait for a new login (pending, no retry
counted, never failed), the background sync backs off as a whole instead of trying each entry
on every save, and a store with a good token sends them all. A real server counting requests."""

from __future__ import annotations

from pathlib import Path

from app.auth import create_token
from app.config import Settings
from loomsync import LocalThreadStore, SyncingThreadStore, TokenRefusedError
from loomsync.core.document.model import Thread
from loomsync.sync.counts import QueueCounts
from tests.client.conftest import LiveServer, make_client, new_thread, wait_for, with_turns


def _store(folder: Path, url: str, token: str, *, background: bool) -> SyncingThreadStore:
    return SyncingThreadStore(
        LocalThreadStore(folder / "threads"),
        make_client(url, token),
        sync_dir=folder / "sync",
        background=background,
        retry_base=1.0,  # a refused token pauses the background sync for 0.5-1 s, then 1-2 s
        retry_cap=2.0,
    )


def test_a_refused_token_parks_the_entries_for_a_new_login(
    own_server: LiveServer, settings: Settings, account: str, tmp_path: Path
) -> None:
    expired = create_token(settings, "alice-expired", ttl_seconds=-60)
    store = _store(tmp_path, own_server.url, expired, background=True)
    threads: list[Thread] = [store.save(new_thread(1)) for _ in range(3)]
    wait_for(lambda: store.counts().waiting_for_login >= 1, what="the first 401")
    assert isinstance(store.engine.token_refused, TokenRefusedError)
    before = len(own_server.requests())
    for index in range(20):  # each save wakes the worker: it must not try again each time
        threads[index % 3] = store.save(with_turns(threads[index % 3], f"more {index}"))
    during = len(own_server.requests()) - before
    store.close()
    assert during <= 2, own_server.requests()[before:]

    counts = store.counts()
    assert (counts.pending, counts.failed) == (3, 0)
    assert counts.waiting_for_login >= 1
    refused = [e for e in store.status() if e.waiting_for_login]
    assert refused
    assert all(e.retry_count == 0 and not e.failed for e in refused)
    assert refused[0].last_error is not None
    assert refused[0].last_error.startswith("the server refused the token (")

    again = _store(tmp_path, own_server.url, expired, background=False)
    outcome = again.save_and_sync(with_turns(threads[0], "one more"))
    assert (outcome.status, outcome.ok) == ("token_refused", False)
    again.close()

    good = _store(tmp_path, own_server.url, account, background=False)
    sent = good.retry_pending()
    assert sorted(o.status for o in sent) == ["synced"] * 3
    assert good.counts() == QueueCounts(0, 0, 0)
    assert good.engine.token_refused is None
    good.close()
