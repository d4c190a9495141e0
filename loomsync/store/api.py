"""The ThreadStore protocol every store satisfies, and what stores share: reading a thread file
by path (:func:`read_thread_file`) and the edits built on ``load``/``save``/``edit``
(:class:`EditingMixin`). :mod:`loomsync.store.local` re-exports them.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.document.model import Thread, Visibility
from loomsync.errors import InvalidThreadFileError, ThreadNotFoundError
from loomsync.store import threaddocs, threadlog
from loomsync.store.summary import ArchivedFilter, SearchResults, SyncOutcome, Syntax, ThreadSummary

ThreadRef = str | os.PathLike[str]


@runtime_checkable
class ThreadStore(Protocol):
    """Where threads are kept. Local, Memory, Remote and Syncing stores all satisfy it.

    Ids are ``T-<uuid>`` strings. Every method raises :class:`loomsync.errors.LoomsyncError`
    subclasses only: ``ThreadNotFoundError`` for an unknown id, ``InvalidInputError`` for a
    malformed id or patch, ``SyncError`` subclasses from stores that talk to a server.
    """

    def load(self, thread_id: ThreadRef) -> Thread:
        """The thread with this id; a ``Path`` (os.PathLike) reads that file (see load_file)."""
        ...

    def load_file(self, path: ThreadRef) -> Thread:
        """Read a thread document from a file path (an export, a file to import).

        Raises:
            InvalidThreadFileError: the file does not hold a valid thread.
            UnsupportedOperationError: remote stores (a file path is a local thing).
        """
        ...

    def save(self, thread: Thread) -> Thread:
        """Store the thread (a fresh id and ``created_at`` are filled in when missing).

        Returns the thread as stored. Local-first stores return at once, without the network.
        """
        ...

    def save_and_sync(self, thread: Thread) -> SyncOutcome:
        """Save, then push to the server now (the one call that waits on the network)."""
        ...

    def list(
        self,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
    ) -> builtins.list[ThreadSummary]:
        """Summaries, newest ``last_activity_at`` first; archived hidden unless asked for."""
        ...

    def search(self, query: str, *, limit: int = 20, syntax: Syntax = "plain") -> SearchResults:
        """Threads matching ``query``, best first (``SearchResults.source`` says who answered);
        ``syntax``: ``plain`` (ranked) or ``web`` (strict: phrases, ``-word``, ``or``)."""
        ...

    def delete(self, thread_id: str) -> None:
        """Delete the thread (on the server: soft delete, the id is never reused)."""
        ...

    def archive(self, thread_id: str) -> Thread:
        """Hide the thread from default listings and searches; it stays readable."""
        ...

    def unarchive(self, thread_id: str) -> Thread:
        """Undo :meth:`archive`."""
        ...

    def update_metadata(self, thread_id: str, patch: Mapping[str, Any]) -> Thread:
        """Merge-patch ``metadata`` (RFC 7396): absent keys unchanged, ``None`` clears a key."""
        ...

    def share(
        self,
        thread_id: str,
        *,
        visibility: Visibility | None = None,
        shared_with_support: bool | None = None,
    ) -> Thread:
        """Set visibility (private, organization, public) and/or support sharing."""
        ...

    def fork(self, thread_id: str, *, up_to: int | None = None) -> Thread:
        """A new thread with messages ``[0, up_to)``; ``metadata.extra.forked_from`` names the source."""
        ...

    def close(self) -> None:
        """Release resources (HTTP connections, the background sync thread)."""
        ...


def read_thread_file(path: Path) -> Thread:
    """Parse a thread file given by path (a thread document, or a local thread log); nothing
    is moved or changed.

    Raises:
        ThreadNotFoundError: the file does not exist.
        InvalidThreadFileError: it is not a valid thread document.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ThreadNotFoundError(str(path), f"no such file: {path}") from None
    except OSError as exc:
        raise InvalidThreadFileError(path, exc.strerror or str(exc)) from None
    try:
        if data.startswith(threadlog.HEADER_START):  # a thread log (a copied local file)
            head, messages = threadlog.parse(data)
            return threaddocs.thread_of(head.fields, messages)
        return codec.decode_thread(data)
    except ValueError as exc:
        raise InvalidThreadFileError(path, str(exc)) from None


class _Editable(Protocol):
    def load(self, thread_id: ThreadRef) -> Thread: ...
    def save(self, thread: Thread) -> Thread: ...
    def edit(self, thread_id: str, change: Callable[[Thread], Thread]) -> Thread: ...


class EditingMixin:
    """``archive``, ``unarchive``, ``update_metadata``, ``share`` and ``fork`` of a store that
    has ``load``, ``save`` and ``edit(thread_id, change)`` (read, change, write under its lock);
    the changes themselves are the pure functions of :mod:`loomsync.edits`."""

    def archive(self: _Editable, thread_id: str) -> Thread:
        """Set ``archived_at``."""
        return self.edit(thread_id, lambda t: edits.set_archived(t, True))

    def unarchive(self: _Editable, thread_id: str) -> Thread:
        """Remove ``archived_at``."""
        return self.edit(thread_id, lambda t: edits.set_archived(t, False))

    def update_metadata(self: _Editable, thread_id: str, patch: Mapping[str, Any]) -> Thread:
        """Merge-patch the metadata (see :func:`loomsync.edits.patched_metadata`)."""
        return self.edit(thread_id, lambda t: edits.patched_metadata(t, patch))

    def share(
        self: _Editable,
        thread_id: str,
        *,
        visibility: Visibility | None = None,
        shared_with_support: bool | None = None,
    ) -> Thread:
        """Change visibility and/or support sharing."""
        return self.edit(thread_id, lambda t: edits.shared(t, visibility, shared_with_support))

    def fork(self: _Editable, thread_id: str, *, up_to: int | None = None) -> Thread:
        """Save and return a fork (see :func:`loomsync.edits.forked`)."""
        return self.save(edits.forked(self.load(thread_id), up_to=up_to))


__all__ = ["EditingMixin", "ThreadRef", "ThreadStore", "read_thread_file"]
