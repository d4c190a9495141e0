"""Rebuilding the sync queue from the store (issue 15, item 4: "the queue is never lost track
of").

The queue (``queue.sqlite3``) is a cache of what the store already says: a local thread whose
content differs from its sync base (the server version it is based on: message count, the chain
digest of the messages and the other fields, see :func:`loomsync.sync.merge.plan_push`) has changes the
server lacks; a thread with no base was never synced. Private threads are never queued.

:func:`changed_threads` is what :class:`~loomsync.sync.queue.PendingSyncQueue` calls when its
file does not parse; :func:`requeue` is what ``loomsync sync`` (and ``--status``) runs every
time, so a change the queue lost track of for any reason (a crash between the file write and
the enqueue of an old client, a file edited by hand, a queue deleted) is sent all the same.

Not rebuilt: a server delete (a thread deleted here whose delete entry was lost keeps its
server copy) and a patch whose change is not in the thread file; every edit loomsync makes
(archive, metadata, share) is in the file, so the queued ``save`` carries it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store.local import LocalThreadStore
from loomsync.store.summaries import stamp_of
from loomsync.store.threadlog import is_thread_file, thread_id_of
from loomsync.sync.appended import plan_from_file
from loomsync.sync.merge import plan_push
from loomsync.sync.queue import PendingSyncQueue
from loomsync.sync.queuerepair import Dropped, Rebuilt
from loomsync.sync.threadstates import ThreadStates

log = logging.getLogger(__name__)


def changed_threads(local: LocalThreadStore, states: ThreadStates) -> list[str]:
    """Ids of the non-private local threads whose content differs from their sync base (or that
    have none: never synced), in file order. A thread whose file only grew since its base's
    commit is judged from what was appended (:func:`loomsync.sync.appended.plan_from_file`);
    the others are read whole. Takes no lock (appends and rewrites keep every commit readable),
    so it may run under the queue's lock. Corrupt files are quarantined and skipped, as
    :meth:`LocalThreadStore.iter_threads` does. A thread whose failed entries were dropped
    (``loomsync sync --drop``) is left out while its file is as it was then (its state's
    ``dropped_stamp``): dropping says the server does not get that copy."""
    found: list[str] = []
    for path in sorted(local.root.iterdir()):
        if not is_thread_file(path.name):
            continue
        key = thread_id_of(path.name)
        state = states.get(key)
        base = state.base
        try:
            if state.dropped_stamp is not None and state.dropped_stamp == stamp_of(path.stat()):
                continue
            quick = plan_from_file(local, key, base)
            if quick is not None:
                changed = not quick.private and quick.plan.kind != "none"
            else:
                thread = local.load(key)
                changed = not thread.is_private and plan_push(thread, base).kind != "none"
        except (CorruptThreadError, ThreadNotFoundError, FileNotFoundError):
            continue
        if changed:
            found.append(key)
    return found


@dataclass(frozen=True)
class Requeued:
    """What :func:`requeue` did.

    Attributes:
        rebuilt: the rebuilds of an unreadable queue file this queue object did (the
            file set aside, why, the threads queued), oldest first.
        queued: threads the store shows changed but the queue had no entry for, now queued.
        dropped: the times this queue object dropped entries that were not valid (a bad
            thread id, an unknown op...) while keeping the valid ones, oldest first.
    """

    rebuilt: tuple[Rebuilt, ...]
    queued: tuple[str, ...]
    dropped: tuple[Dropped, ...] = ()

    def lines(self) -> list[str]:
        """What ``loomsync sync`` prints about it (nothing when there is nothing to say)."""
        out = [
            f"The sync queue {'could not be read' if r.unreadable else 'did not parse'} "
            f"({r.reason}); it was set aside as {r.set_aside.name} "
            f"and rebuilt from the store: {_threads(len(r.thread_ids))} to send."
            for r in self.rebuilt
        ]
        for d in self.dropped:
            count = len(d.entries)
            out.append(
                f"Dropped {count} sync queue {'entry' if count == 1 else 'entries'} that "
                f"{'is' if count == 1 else 'are'} not valid, kept the others: "
                + "; ".join(d.entries)
                + f"; queued from the store: {_threads(len(d.thread_ids))}."
            )
        if self.queued:
            out.append(
                f"Found {_threads(len(self.queued))} changed here but not in the sync queue; "
                "queued: " + ", ".join(self.queued)
            )
        return out

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` form: ``{"rebuilt": [{set_aside, reason, thread_ids}], "queued": [...],
        "dropped": [{"entries": [line, ...], "thread_ids": [...]}]}``."""
        return {
            "rebuilt": [
                {
                    "set_aside": str(r.set_aside),
                    "reason": r.reason,
                    "thread_ids": list(r.thread_ids),
                }
                for r in self.rebuilt
            ],
            "queued": list(self.queued),
            "dropped": [
                {"entries": list(d.entries), "thread_ids": list(d.thread_ids)} for d in self.dropped
            ],
        }


def _threads(count: int) -> str:
    return f"{count} thread{'s' if count != 1 else ''}"


def requeue(local: LocalThreadStore, states: ThreadStates, queue: PendingSyncQueue) -> Requeued:
    """Queue a ``save`` for every changed thread (see :func:`changed_threads`) that has no entry
    of any kind: a thread with one (pending, failed, a patch) is left as it is, so a failed
    entry stays failed until the thread is saved again or ``--retry-failed``. Reading the queue
    first rebuilds it if its file does not parse."""
    queued_before = {e.thread_id for e in queue.entries()}
    added: list[str] = []
    for key in changed_threads(local, states):
        if key in queued_before:
            continue
        with local.locked(key):  # as a writer enqueues
            if not queue.has(key):
                queue.add(key, "save")
                added.append(key)
    if added:
        log.warning("%d changed thread(s) were missing from the sync queue", len(added))
    return Requeued(tuple(queue.rebuilt), tuple(added), tuple(queue.dropped))


__all__ = ["Requeued", "changed_threads", "requeue"]
