"""RemoteThreadStore: a ThreadStore that is the server, over HTTP only (no local files).

Every call is a request (see :class:`loomsync.http.client.ThreadSyncClient`). Writes are
optimistic: ``save`` sends the thread's ``version`` as its base and raises ``ConflictError``
when the server moved on. Reading a file path is not a remote operation: ``load_file`` (and
``load`` given a path) raises :class:`UnsupportedOperationError` instead of guessing an id.
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping
from typing import Any

from loomsync import edits
from loomsync.core.document.model import Thread, Visibility
from loomsync.errors import PrivateThreadError, UnsupportedOperationError
from loomsync.http.client import ThreadSyncClient
from loomsync.store.local import ThreadRef
from loomsync.store.summary import ArchivedFilter, Scope, SearchResults, SyncOutcome, ThreadSummary

PAGE_SIZE = 200
FILE_UNSUPPORTED = (
    "reading a thread from a file path is unsupported for remote stores; read it with "
    "LocalThreadStore.load_file (or loomsync.read_thread_file), then save it here"
)


class RemoteThreadStore:
    """The server as a ThreadStore.

    Args:
        client: the HTTP client (owned: :meth:`close` closes it).
        scope: ``"mine"`` (default) or ``"visible"`` for :meth:`list` and :meth:`search`.
        default_visibility: sent for a new thread (version 0) that sets no visibility.
    """

    def __init__(
        self,
        client: ThreadSyncClient,
        *,
        scope: Scope = "mine",
        default_visibility: Visibility = "private",
    ) -> None:
        self.client = client
        self.scope: Scope = scope
        self.default_visibility: Visibility = default_visibility

    def load(self, thread_id: ThreadRef) -> Thread:
        """``GET`` the thread. Raises RemoteNotFoundError (a ThreadNotFoundError), SyncError."""
        if isinstance(thread_id, os.PathLike):
            raise UnsupportedOperationError(FILE_UNSUPPORTED)
        return self.client.get_thread(str(edits.parse_id(thread_id)))

    def load_file(self, path: ThreadRef) -> Thread:  # noqa: ARG002
        """Always raises UnsupportedOperationError: a file path is a local thing."""
        raise UnsupportedOperationError(FILE_UNSUPPORTED)

    def save(self, thread: Thread) -> Thread:
        """``PUT`` with ``If-Match: "<thread.version>"``, redacted by the client; returns the
        server's copy. A new thread (version 0) without a visibility gets the default one.

        Raises:
            PrivateThreadError: ``is_private`` threads are never sent.
            ConflictError: the server holds another version (``current`` is its copy).
        """
        if thread.is_private:
            raise PrivateThreadError(str(thread.id) if thread.id else None)
        thread = edits.prepared(thread)
        if thread.version == 0 and "visibility" not in thread.model_fields_set:
            thread = thread.model_copy(update={"visibility": self.default_visibility})
        return self.client.put_thread(thread, base_version=thread.version)

    def save_and_sync(self, thread: Thread) -> SyncOutcome:
        """Same as :meth:`save` (a remote store is always in sync); outcome ``"synced"``."""
        stored = self.save(thread)
        return SyncOutcome(str(stored.id), "synced", version=stored.version, thread=stored)

    def list(
        self,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
    ) -> builtins.list[ThreadSummary]:
        """Summaries from the server, newest first (pages of 200 until ``limit``)."""
        rows: builtins.list[ThreadSummary] = []
        cursor: str | None = None
        while limit is None or len(rows) < limit:
            size = PAGE_SIZE if limit is None else min(PAGE_SIZE, limit - len(rows))
            page = self.client.list_threads(
                limit=size, cursor=cursor, workspace=workspace, scope=self.scope, archived=archived
            )
            rows.extend(page.threads)
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return rows

    def search(self, query: str, *, limit: int = 20) -> SearchResults:
        """The server's ranked full-text search (``source="server"``)."""
        page = self.client.search(query, limit=limit, scope=self.scope)
        return page.results()

    def delete(self, thread_id: str) -> None:
        """Soft delete on the server."""
        self.client.delete_thread(str(edits.parse_id(thread_id)))

    def _patch(self, thread_id: str, patch: Mapping[str, Any]) -> Thread:
        return self.client.patch_thread(str(edits.parse_id(thread_id)), patch)

    def archive(self, thread_id: str) -> Thread:
        """``PATCH {"archived": true}``."""
        return self._patch(thread_id, {"archived": True})

    def unarchive(self, thread_id: str) -> Thread:
        """``PATCH {"archived": false}``."""
        return self._patch(thread_id, {"archived": False})

    def update_metadata(self, thread_id: str, patch: Mapping[str, Any]) -> Thread:
        """``PATCH {"metadata": patch}`` (the server merges it, RFC 7396)."""
        return self._patch(thread_id, {"metadata": dict(patch)})

    def share(
        self,
        thread_id: str,
        *,
        visibility: Visibility | None = None,
        shared_with_support: bool | None = None,
    ) -> Thread:
        """``PATCH`` visibility and/or ``is_shared_with_support``."""
        edits.shared(Thread(), visibility, shared_with_support)  # validates the visibility
        patch = edits.sharing_patch(visibility, shared_with_support)
        return self._patch(thread_id, patch) if patch else self.load(thread_id)

    def fork(self, thread_id: str, *, up_to: int | None = None) -> Thread:
        """``POST …/fork``: the server makes the fork (private, owned by the caller)."""
        return self.client.fork_thread(str(edits.parse_id(thread_id)), up_to=up_to)

    def close(self) -> None:
        """Close the HTTP client."""
        self.client.close()


__all__ = ["FILE_UNSUPPORTED", "RemoteThreadStore", "ThreadSyncClient"]
