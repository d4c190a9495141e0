"""How a writer's save meets changes others made to the file (API.md section 9), for
:meth:`loomsync.sync.syncing.SyncingThreadStore.save`.

A save protects what others changed since the writer's last save (a pull, a merged conflict,
``loomsync share`` from another process): fields merge three-way, messages keep the longer
history (:func:`loomsync.sync.merge.merge_save`); when both added different messages the writer's
copy goes to a fork, the one of the last conflict if it continues it (:func:`fork_target`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from loomsync import edits
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store.local import LocalThreadStore
from loomsync.store.summaries import Stamp, stamp_of
from loomsync.store.threadlog import Head
from loomsync.sync.merge import Snapshot, is_prefix, merge_save, snapshot, split
from loomsync.sync.threadstates import ThreadStates


@dataclass(frozen=True, slots=True)
class LastSave:
    """A writer's last save: what it saved, the file's stamp after, and whether the file then
    held a merge (so the next save must merge again)."""

    snapshot: Snapshot
    stamp: Stamp
    merged: bool


class SaveLog:
    """One store's last save per thread id (thread-safe)."""

    def __init__(self) -> None:
        self._saves: dict[str, LastSave] = {}
        self._guard = threading.Lock()

    def get(self, thread_id: str) -> LastSave | None:
        """The last save of this thread by this store, if any."""
        with self._guard:
            return self._saves.get(thread_id)

    def put(self, thread_id: str, save: LastSave) -> None:
        """Record a save."""
        with self._guard:
            self._saves[thread_id] = save


def merged_with_file(
    local: LocalThreadStore, saves: SaveLog, thread: Thread, read: Thread | None = None
) -> Thread | None:
    """What to write for a writer's save: its thread, or a merge with changes others made to
    the file since this writer's last save; None when the writer must fork. Call under the
    thread's lock.

    ``read``: the copy the writer read and changed, when this store has not saved the thread
    itself (an import updating the thread a previous run stored, issue 17 item 1): it is the
    common ancestor, so a writer that rewrote a message of it (a Claude Code message that grew
    between two imports) replaces it instead of forking, while a file someone changed after
    that read still merges or forks as before."""
    thread_id = str(thread.id)
    try:
        stamp = stamp_of(local.path(thread_id).stat())
    except FileNotFoundError:
        return thread
    previous = saves.get(thread_id)
    if previous is not None and previous.stamp == stamp and not previous.merged:
        return thread  # nobody else wrote the file since: the common, fast case
    try:
        current = local.load(thread_id)
    except CorruptThreadError:
        return thread
    ancestor = previous.snapshot if previous else (snapshot(read) if read is not None else None)
    merged = merge_save(thread, ancestor, current)
    return None if merged.fork else merged.thread


def unchanged(
    local: LocalThreadStore, states: ThreadStates, saved: Thread, written: Head | None
) -> Thread | None:
    """After a push: ``saved`` with its base's version, if the file's last commit is still the
    one its save wrote (``written``; one read of the commit line, not of the thread); else None
    (the push merged something in, or someone saved: read the file)."""
    thread_id = str(saved.id)
    head = local.head(thread_id)
    if written is None or head is None or _commit(head) != _commit(written):
        return None
    base = states.get(thread_id).base
    return saved.model_copy(update={"version": base.version}) if base else saved


def _commit(head: Head) -> tuple[str, int, int, str]:
    """What names a commit of a thread file (its fields may differ in form: read or written)."""
    return head.generation, head.offset, head.count, head.chain


def fork_target(local: LocalThreadStore, states: ThreadStates, thread: Thread) -> Thread:
    """The fork a writer's divergent copy is saved as: the fork of the thread's last conflict
    if this copy continues it (same id, its ``forked_from`` kept), else a new fork (recorded in
    the thread's sync state)."""
    thread_id = str(thread.id)
    state = states.get(thread_id)
    if state.fork_id:
        try:
            fork_file: Thread | None = local.load(state.fork_id)
        except (ThreadNotFoundError, CorruptThreadError):
            fork_file = None
        if fork_file is not None and is_prefix(split(fork_file)[0], split(thread)[0]):
            extra = dict(thread.metadata.extra)
            extra["forked_from"] = fork_file.metadata.extra.get("forked_from")
            metadata = thread.metadata.model_copy(  # the fork's title marks it as one
                update={"extra": extra, "title": fork_file.metadata.title}
            )
            return edits.with_fields(thread, id=fork_file.id, metadata=metadata.model_dump())
    target = edits.forked(thread, new_id=ThreadId.new(), reason="conflict", keep_sharing=True)
    state.fork_id = str(target.id)
    states.put(thread_id, state)
    return target


__all__ = ["LastSave", "SaveLog", "fork_target", "merged_with_file", "unchanged"]
