"""loomsync: keep, sync and search the conversations of AI coding agents.

The client SDK. Start with :func:`open_store` (local files synced to the configured server), or
build a store yourself: :class:`LocalThreadStore`, :class:`RemoteThreadStore` (over
:class:`ThreadSyncClient`), :class:`SyncingThreadStore`, :class:`MemoryThreadStore`. All four
satisfy the :class:`ThreadStore` protocol.

Imports are lazy (PEP 562): ``import loomsync`` is cheap, and the server, which only uses
:mod:`loomsync.core` (the thread document, text search, secrets), never loads the HTTP client or
the CLI.

The package is grouped by job: ``core/`` (shared with the server), ``store/`` (local storage),
``sync/`` (syncing with a server), ``http/`` (talking to it), ``cli/`` (the ``loomsync`` command),
``importers/`` (other agents' session files).
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from loomsync.core.version import __version__

# A library logs; the application decides where to. Nothing is printed unless it configures it.
logging.getLogger(__name__).addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from loomsync.config import ClientConfig, ClientPaths, default_paths, load_config
    from loomsync.core.document.ids import InvalidThreadId, ThreadId
    from loomsync.core.document.model import (
        AgentState,
        Conversation,
        Message,
        Metadata,
        Thread,
        ToolCall,
    )
    from loomsync.errors import (
        AmbiguousThreadIdError,
        AuthError,
        BadArgumentError,
        ConfigError,
        ConflictError,
        CorruptThreadError,
        GoneError,
        InvalidInputError,
        InvalidResponseError,
        InvalidThreadFileError,
        LoomsyncError,
        NetworkError,
        NoServiceManagerError,
        NotAThreadIdError,
        NotLoggedInError,
        PrivateThreadError,
        QueueUnreadableError,
        RefusedError,
        RemoteNotFoundError,
        ServerError,
        ServiceError,
        StoreLockedError,
        SyncError,
        ThreadNotFoundError,
        TokenRefusedError,
        UnsupportedOperationError,
        WatchRunningError,
    )
    from loomsync.export import export, to_markdown
    from loomsync.git import normalize_remote_url, snapshot_git_state
    from loomsync.http.client import ThreadSyncClient
    from loomsync.http.connect import make_client, open_store
    from loomsync.http.remote import RemoteThreadStore
    from loomsync.http.sharelinks import ShareLink
    from loomsync.resume import ResumeChanges, Resumed, resume
    from loomsync.store.local import LocalThreadStore, ThreadStore, atomic_write, read_thread_file
    from loomsync.store.memory import MemoryThreadStore
    from loomsync.store.summary import SearchHit, SearchResults, SyncOutcome, ThreadSummary
    from loomsync.sync.queue import PendingEntry, PendingSyncQueue
    from loomsync.sync.syncing import SyncingThreadStore

#: Public name -> the module that defines it (imported on first use).
_EXPORTS = {
    "ThreadSyncClient": "loomsync.http.client",
    "ClientConfig": "loomsync.config",
    "ClientPaths": "loomsync.config",
    "default_paths": "loomsync.config",
    "load_config": "loomsync.config",
    "make_client": "loomsync.http.connect",
    "open_store": "loomsync.http.connect",
    "AuthError": "loomsync.errors",
    "ConfigError": "loomsync.errors",
    "ConflictError": "loomsync.errors",
    "CorruptThreadError": "loomsync.errors",
    "GoneError": "loomsync.errors",
    "InvalidInputError": "loomsync.errors",
    "InvalidResponseError": "loomsync.errors",
    "InvalidThreadFileError": "loomsync.errors",
    "LoomsyncError": "loomsync.errors",
    "QueueUnreadableError": "loomsync.errors",
    "WatchRunningError": "loomsync.errors",
    "AmbiguousThreadIdError": "loomsync.errors",
    "NotAThreadIdError": "loomsync.errors",
    "BadArgumentError": "loomsync.errors",
    "NotLoggedInError": "loomsync.errors",
    "TokenRefusedError": "loomsync.errors",
    "NetworkError": "loomsync.errors",
    "PrivateThreadError": "loomsync.errors",
    "RefusedError": "loomsync.errors",
    "RemoteNotFoundError": "loomsync.errors",
    "ServerError": "loomsync.errors",
    "ServiceError": "loomsync.errors",
    "NoServiceManagerError": "loomsync.errors",
    "StoreLockedError": "loomsync.errors",
    "SyncError": "loomsync.errors",
    "ThreadNotFoundError": "loomsync.errors",
    "UnsupportedOperationError": "loomsync.errors",
    "export": "loomsync.export",
    "to_markdown": "loomsync.export",
    "normalize_remote_url": "loomsync.git",
    "snapshot_git_state": "loomsync.git",
    "InvalidThreadId": "loomsync.core.document.ids",
    "ThreadId": "loomsync.core.document.ids",
    "MemoryThreadStore": "loomsync.store.memory",
    "AgentState": "loomsync.core.document.model",
    "Conversation": "loomsync.core.document.model",
    "Message": "loomsync.core.document.model",
    "Metadata": "loomsync.core.document.model",
    "Thread": "loomsync.core.document.model",
    "ToolCall": "loomsync.core.document.model",
    "RemoteThreadStore": "loomsync.http.remote",
    "ResumeChanges": "loomsync.resume",
    "Resumed": "loomsync.resume",
    "resume": "loomsync.resume",
    "ShareLink": "loomsync.http.sharelinks",
    "LocalThreadStore": "loomsync.store.local",
    "ThreadStore": "loomsync.store.local",
    "atomic_write": "loomsync.store.local",
    "read_thread_file": "loomsync.store.local",
    "SearchHit": "loomsync.store.summary",
    "SearchResults": "loomsync.store.summary",
    "SyncOutcome": "loomsync.store.summary",
    "ThreadSummary": "loomsync.store.summary",
    "SyncingThreadStore": "loomsync.sync.syncing",
    "PendingEntry": "loomsync.sync.queue",
    "PendingSyncQueue": "loomsync.sync.queue",
}

__all__ = [
    "AgentState",
    "AmbiguousThreadIdError",
    "AuthError",
    "BadArgumentError",
    "ClientConfig",
    "ClientPaths",
    "ConfigError",
    "ConflictError",
    "Conversation",
    "CorruptThreadError",
    "GoneError",
    "InvalidInputError",
    "InvalidResponseError",
    "InvalidThreadFileError",
    "InvalidThreadId",
    "LocalThreadStore",
    "LoomsyncError",
    "MemoryThreadStore",
    "Message",
    "Metadata",
    "NetworkError",
    "NoServiceManagerError",
    "NotAThreadIdError",
    "NotLoggedInError",
    "PendingEntry",
    "PendingSyncQueue",
    "PrivateThreadError",
    "QueueUnreadableError",
    "RefusedError",
    "RemoteNotFoundError",
    "RemoteThreadStore",
    "ResumeChanges",
    "Resumed",
    "SearchHit",
    "SearchResults",
    "ServerError",
    "ServiceError",
    "ShareLink",
    "StoreLockedError",
    "SyncError",
    "SyncOutcome",
    "SyncingThreadStore",
    "Thread",
    "ThreadId",
    "ThreadNotFoundError",
    "ThreadStore",
    "ThreadSummary",
    "ThreadSyncClient",
    "TokenRefusedError",
    "ToolCall",
    "UnsupportedOperationError",
    "WatchRunningError",
    "__version__",
    "atomic_write",
    "default_paths",
    "export",
    "load_config",
    "make_client",
    "normalize_remote_url",
    "open_store",
    "read_thread_file",
    "resume",
    "snapshot_git_state",
    "to_markdown",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loomsync' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
