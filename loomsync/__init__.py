"""loomsync: keep, sync and search the conversations of AI coding agents.

The client SDK. Start with :func:`open_store` (local files synced to the configured server), or
build a store yourself: :class:`LocalThreadStore`, :class:`RemoteThreadStore` (over
:class:`ThreadSyncClient`), :class:`SyncingThreadStore`, :class:`MemoryThreadStore`. All four
satisfy the :class:`ThreadStore` protocol.

Imports are lazy (PEP 562): ``import loomsync`` is cheap, and the server, which only uses
:mod:`loomsync.model` and :mod:`loomsync.ids`, never loads the HTTP client or the CLI.
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from loomsync._version import __version__

# A library logs; the application decides where to. Nothing is printed unless it configures it.
logging.getLogger(__name__).addHandler(logging.NullHandler())

if TYPE_CHECKING:
    from loomsync.client import ThreadSyncClient
    from loomsync.config import ClientConfig, ClientPaths, default_paths, load_config
    from loomsync.connect import make_client, open_store
    from loomsync.errors import (
        AuthError,
        ConfigError,
        ConflictError,
        CorruptThreadError,
        GoneError,
        InvalidInputError,
        InvalidResponseError,
        InvalidThreadFileError,
        LoomsyncError,
        NetworkError,
        PrivateThreadError,
        QueueUnreadableError,
        RefusedError,
        RemoteNotFoundError,
        ServerError,
        StoreLockedError,
        SyncError,
        ThreadNotFoundError,
        UnsupportedOperationError,
    )
    from loomsync.export import export, to_markdown
    from loomsync.git import normalize_remote_url, snapshot_git_state
    from loomsync.ids import InvalidThreadId, ThreadId
    from loomsync.memory import MemoryThreadStore
    from loomsync.model import AgentState, Conversation, Message, Metadata, Thread, ToolCall
    from loomsync.remote import RemoteThreadStore
    from loomsync.resume import ResumeChanges, Resumed, resume
    from loomsync.sharelinks import ShareLink
    from loomsync.store import LocalThreadStore, ThreadStore, atomic_write, read_thread_file
    from loomsync.summary import SearchHit, SearchResults, SyncOutcome, ThreadSummary
    from loomsync.syncing import SyncingThreadStore
    from loomsync.syncstate import PendingEntry, PendingSyncQueue

#: Public name -> the module that defines it (imported on first use).
_EXPORTS = {
    "ThreadSyncClient": "loomsync.client",
    "ClientConfig": "loomsync.config",
    "ClientPaths": "loomsync.config",
    "default_paths": "loomsync.config",
    "load_config": "loomsync.config",
    "make_client": "loomsync.connect",
    "open_store": "loomsync.connect",
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
    "NetworkError": "loomsync.errors",
    "PrivateThreadError": "loomsync.errors",
    "RefusedError": "loomsync.errors",
    "RemoteNotFoundError": "loomsync.errors",
    "ServerError": "loomsync.errors",
    "StoreLockedError": "loomsync.errors",
    "SyncError": "loomsync.errors",
    "ThreadNotFoundError": "loomsync.errors",
    "UnsupportedOperationError": "loomsync.errors",
    "export": "loomsync.export",
    "to_markdown": "loomsync.export",
    "normalize_remote_url": "loomsync.git",
    "snapshot_git_state": "loomsync.git",
    "InvalidThreadId": "loomsync.ids",
    "ThreadId": "loomsync.ids",
    "MemoryThreadStore": "loomsync.memory",
    "AgentState": "loomsync.model",
    "Conversation": "loomsync.model",
    "Message": "loomsync.model",
    "Metadata": "loomsync.model",
    "Thread": "loomsync.model",
    "ToolCall": "loomsync.model",
    "RemoteThreadStore": "loomsync.remote",
    "ResumeChanges": "loomsync.resume",
    "Resumed": "loomsync.resume",
    "resume": "loomsync.resume",
    "ShareLink": "loomsync.sharelinks",
    "LocalThreadStore": "loomsync.store",
    "ThreadStore": "loomsync.store",
    "atomic_write": "loomsync.store",
    "read_thread_file": "loomsync.store",
    "SearchHit": "loomsync.summary",
    "SearchResults": "loomsync.summary",
    "SyncOutcome": "loomsync.summary",
    "ThreadSummary": "loomsync.summary",
    "SyncingThreadStore": "loomsync.syncing",
    "PendingEntry": "loomsync.syncstate",
    "PendingSyncQueue": "loomsync.syncstate",
}

__all__ = [
    "AgentState",
    "AuthError",
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
    "ToolCall",
    "UnsupportedOperationError",
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
