"""MemoryThreadStore: threads in a dict, for ephemeral sessions that must leave no trace on disk
or on a server (and for tests). Nothing is written anywhere; everything is gone on close."""

from __future__ import annotations

import builtins
import os
import threading
from collections.abc import Callable
from pathlib import Path

from loomsync import edits
from loomsync.core.document.model import Thread
from loomsync.errors import ThreadNotFoundError
from loomsync.store.local import EditingMixin, ThreadRef, read_thread_file
from loomsync.store.localsearch import search_threads
from loomsync.store.summary import (
    ArchivedFilter,
    SearchResults,
    SyncOutcome,
    Syntax,
    ThreadSummary,
    keep,
)


class MemoryThreadStore(EditingMixin):
    """A ThreadStore in memory: thread-safe, no files, no network. Copies in and out."""

    def __init__(self) -> None:
        """An empty store."""
        self._threads: dict[str, Thread] = {}
        self._guard = threading.RLock()

    def load(self, thread_id: ThreadRef) -> Thread:
        """A copy of the thread; a ``Path`` reads that file. Raises ThreadNotFoundError."""
        if isinstance(thread_id, os.PathLike):
            return self.load_file(thread_id)
        key = str(edits.parse_id(thread_id))
        with self._guard:
            thread = self._threads.get(key)
        if thread is None:
            raise ThreadNotFoundError(key)
        return thread.model_copy(deep=True)

    def load_file(self, path: ThreadRef) -> Thread:
        """Read a thread file by path (read only: nothing is written)."""
        return read_thread_file(Path(path))

    def save(self, thread: Thread) -> Thread:
        """Keep a copy; returns the thread as stored (id and ``created_at`` filled in)."""
        thread = edits.prepared(thread)
        with self._guard:
            self._threads[str(thread.id)] = thread.model_copy(deep=True)
        return thread

    def save_and_sync(self, thread: Thread) -> SyncOutcome:
        """Save; nothing is ever sent, so the outcome is ``"local"``."""
        saved = self.save(thread)
        return SyncOutcome(str(saved.id), "local", detail="memory store", thread=saved)

    def edit(self, thread_id: str, change: Callable[[Thread], Thread]) -> Thread:
        with self._guard:
            return self.save(change(self.load(thread_id)))

    def list(
        self,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
    ) -> builtins.list[ThreadSummary]:
        """Summaries, newest first."""
        with self._guard:
            threads = builtins.list(self._threads.values())
        rows = [ThreadSummary.of(t) for t in threads]
        rows = [r for r in rows if keep(r, archived=archived, workspace=workspace)]
        rows.sort(key=lambda r: r.sort_key, reverse=True)
        return rows if limit is None else rows[:limit]

    def search(self, query: str, *, limit: int = 20, syntax: Syntax = "plain") -> SearchResults:
        """Search unarchived threads with the server's semantics (:mod:`loomsync.store.localsearch`,
        an index built in memory for the call); ``syntax`` ``plain`` or ``web`` (strict)."""
        with self._guard:
            threads = [t for t in self._threads.values() if not edits.archived_at(t)]
        hits = search_threads(threads, query, limit=limit, syntax=syntax)
        return SearchResults(hits=[h.model_copy(update={"origin": "local"}) for h in hits])

    def delete(self, thread_id: str) -> None:
        """Forget the thread. Raises ThreadNotFoundError."""
        key = str(edits.parse_id(thread_id))
        with self._guard:
            if self._threads.pop(key, None) is None:
                raise ThreadNotFoundError(key)

    def close(self) -> None:
        """Drop every thread."""
        with self._guard:
            self._threads.clear()


__all__ = ["MemoryThreadStore"]
