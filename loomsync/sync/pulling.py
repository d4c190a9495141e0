"""Pulling: newer server copies become the local copies (API.md section 9), for
:class:`loomsync.sync.engine.SyncEngine` (its ``adopt`` and ``pull``).

A copy adopted from the server is redacted like every save; one the redaction changed (the
server holds credentials a client that is not loomsync sent) is queued, so the server's copy is
replaced (issue 12, item 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from filelock import Timeout

from loomsync.core.document.model import Thread
from loomsync.errors import CorruptThreadError, InvalidResponseError, ThreadNotFoundError
from loomsync.http.responses import SkippedEntry
from loomsync.store.summaries import Stamp
from loomsync.store.summary import SyncOutcome
from loomsync.sync.merge import plan_push, sync_base

if TYPE_CHECKING:
    from loomsync.sync.engine import SyncEngine


def adopt(engine: SyncEngine, server: Thread, stamp: Stamp | None) -> bool:
    """Make the server's copy the local copy if the file still has ``stamp`` (None: absent).

    The copy is redacted as every save is; if that changed it (the server holds credentials
    a client that is not loomsync sent), the redacted copy is queued to replace the
    server's."""
    thread_id = str(server.id)
    clean = engine.local.redaction.thread(server)
    with engine.local.locked(thread_id):
        if not engine.local.save_if_unchanged(clean, stamp, redacted=True):
            return False
        state = engine.states.get(thread_id)
        state.base = sync_base(server, server.version, engine.local.committed(thread_id))
        engine.states.put(thread_id, state)
        if clean is not server and not clean.is_private:
            engine.queue.add(thread_id, "save")  # the server holds credentials: replace them
    return True


def pull(engine: SyncEngine) -> list[SyncOutcome]:
    """Fetch every thread of ours the server holds in a newer version than our base.

    Threads with local changes not yet pushed, private threads and threads with queue
    entries are left to the push (which merges on 409). One listing request per 200
    threads, one GET per newer thread.

    A broken or hostile server cannot stop the pull: a listed entry the client cannot use
    (an id that is not a thread id, such as ``../../etc``) is reported ``"skipped"``, and a
    thread whose GET answers an unusable body is reported ``"failed"``; the rest is pulled.
    """
    assert engine.client is not None
    queued = {e.thread_id for e in engine.queue.entries()}
    outcomes: list[SyncOutcome] = []

    def skip(entry: SkippedEntry) -> None:
        outcomes.append(SyncOutcome(entry.id or "-", "skipped", op="pull", detail=entry.reason))

    for summary in engine.client.iter_threads(archived="any", on_skipped=skip):
        thread_id = summary.id
        state = engine.states.get(thread_id)
        if thread_id in queued or (state.base and state.base.version >= summary.version):
            continue
        try:
            local, stamp = engine.local.load_stamped(thread_id)
        except ThreadNotFoundError:
            local, stamp = None, None
        except CorruptThreadError:
            continue
        if local is not None:
            if local.is_private:
                continue
            if plan_push(local, state.base).kind != "none":
                engine.queue.add(thread_id, "save")
                continue
        lock = engine.sync_lock(thread_id)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue
        try:
            server = engine.client.get_thread(thread_id)
            if adopt(engine, server, stamp):
                outcomes.append(SyncOutcome(thread_id, "pulled", version=server.version))
        except InvalidResponseError as exc:
            outcomes.append(SyncOutcome(thread_id, "failed", op="pull", detail=str(exc)))
        finally:
            lock.release()
    return outcomes


__all__ = ["adopt", "pull"]
