"""What the push does when the server answers with a copy other than the one sent: a 409's
``current`` to merge with (:func:`resolve`), or a PUT's answer holding more redaction markers
than the local copy (:func:`take_markers`). Parts of :class:`loomsync.sync.engine.SyncEngine`.

Local writes here are compare-and-swap on the file's stamp, under the thread's lock: a writer
that saved meanwhile is never overwritten; the push starts over instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.errors import ConflictError, CorruptThreadError, ThreadNotFoundError
from loomsync.store.legacy import take_sharing
from loomsync.store.summaries import Stamp, stamp_of
from loomsync.store.summary import SyncOutcome
from loomsync.sync.merge import adopt_markers, resolve_conflict, sync_base

if TYPE_CHECKING:
    from loomsync.sync.engine import SyncEngine

log = logging.getLogger(__name__)


def _same_content(a: Thread, b: Thread) -> bool:
    ignore = {"version", "updated_at"}
    left = {k: v for k, v in codec.normalized(a).items() if k not in ignore}
    return left == {k: v for k, v in codec.normalized(b).items() if k not in ignore}


def take_markers(
    engine: SyncEngine, thread_id: str, stored: Thread, local: Thread, stamp: Stamp
) -> Thread:
    """After a PUT: the server may have redacted more than this client (issue 12, item 1).
    Where its copy differs from ``local`` only by markers, write them into the local file
    (if nobody saved meanwhile; else the next save's merge takes them). Returns what the
    server holds in local terms: ``local`` itself, or ``local`` with the server's markers."""
    sent = adopt_markers(stored, local)
    if sent is local:
        return local
    with engine.local.locked(thread_id):
        try:
            current, now = engine.local.load_stamped(thread_id)
        except (ThreadNotFoundError, CorruptThreadError):
            return sent
        adopted = adopt_markers(stored, current)
        if adopted is not current and engine.local.save_if_unchanged(adopted, now):
            if now == stamp:  # the push read this file: the entry is done
                engine.read_stamps[thread_id] = stamp_of(engine.local.path(thread_id).stat())
    log.info("the server redacted more of %s than this client; its markers were kept", thread_id)
    return sent


def resolve(
    engine: SyncEngine, thread_id: str, local: Thread, stamp: Stamp, conflict: ConflictError
) -> SyncOutcome | None:
    """Merge after a 409; None means "push again", an outcome means done."""
    server = conflict.current
    if server is not None and take_sharing(engine.local, server, stamp):
        return None  # a file of the old client now says what the server holds: reread it
    with engine.local.locked(thread_id):
        state = engine.states.get(thread_id)
        if server is None:  # the server holds no copy we may see: upload as new
            state.base = None
            engine.states.put(thread_id, state)
            return None
        resolution = resolve_conflict(local, state.base, server)
        if resolution.kind != "diverged":
            merged = resolution.merged
            if not _same_content(merged, local):
                if not engine.local.save_if_unchanged(merged, stamp):
                    return None
                engine.merged.add(thread_id)  # the push's outcome says "merged"
            state.base = sync_base(server, server.version, engine.local.committed(thread_id))
            engine.states.put(thread_id, state)
            return None
        base_version = state.base.version if state.base else 0
        fork = edits.forked(
            edits.with_fields(local, version=base_version),
            new_id=ThreadId.new(),
            reason="conflict",
            keep_sharing=True,
        )
        engine.local.save(fork)
        # queued before the state names it: whoever sees the fork id finds its entry to push
        engine.queue.add(str(fork.id), "save")
        if not engine.local.save_if_unchanged(server, stamp):
            engine.local.delete(str(fork.id))
            engine.queue.discard(str(fork.id))
            return None
        engine.read_stamps[thread_id] = stamp_of(engine.local.path(thread_id).stat())
        state.base = sync_base(server, server.version, engine.local.committed(thread_id))
        state.fork_id = str(fork.id)
        engine.states.put(thread_id, state)
    detail = (
        f"both sides added messages: the server's copy is kept as {thread_id}, "
        f"this machine's as {fork.id}"
    )
    log.warning("conflict on %s: %s", thread_id, detail)
    return SyncOutcome(
        thread_id, "forked", detail=detail, version=server.version, fork_id=str(fork.id)
    )


__all__ = ["resolve", "take_markers"]
