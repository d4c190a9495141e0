"""Open the store a coding agent or the CLI should use, from the client configuration."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from loomsync.config import ClientConfig, ClientPaths, default_paths, load_config

if TYPE_CHECKING:  # imported when used: the CLI's start-up pays only for what a command needs
    from loomsync.http.client import ThreadSyncClient
    from loomsync.store.memory import MemoryThreadStore
    from loomsync.sync.syncing import Report, SyncingThreadStore


def make_client(config: ClientConfig) -> ThreadSyncClient | None:
    """A client for the configured server, or None when not logged in (no URL or no token)."""
    if not config.logged_in:
        return None
    from loomsync.http.client import ThreadSyncClient

    return ThreadSyncClient.from_config(config)


def open_store(
    *,
    paths: ClientPaths | None = None,
    config: ClientConfig | None = None,
    background: bool = True,
    ephemeral: bool = False,
    on_report: Report | None = None,
) -> SyncingThreadStore | MemoryThreadStore:
    """The default store: local files synced to the configured server.

    Args:
        paths: the client's folders (default: XDG, see :func:`loomsync.config.default_paths`).
        config: the configuration (default: read with :func:`loomsync.config.load_config`).
        background: sync in a background thread.
        ephemeral: a :class:`MemoryThreadStore` instead: nothing on disk, nothing sent.
        on_report: called with notable sync outcomes (forks, 410s, failures).

    Not logged in, the store still saves locally and queues every change for later. What is
    stored and sent is redacted with the configured allow-list; new threads that set no
    visibility get ``default_visibility`` (issue 12).

    Raises:
        ConfigError: the configuration is invalid.
    """
    if ephemeral:
        from loomsync.store.memory import MemoryThreadStore

        return MemoryThreadStore()
    from loomsync.store.local import LocalThreadStore
    from loomsync.store.redaction import Redaction
    from loomsync.sync.syncing import SyncingThreadStore

    paths = paths or default_paths()
    config = config or load_config(paths)
    local = LocalThreadStore(
        paths.threads_dir,
        redaction=Redaction(config.redactor),
        default_visibility=config.default_visibility,
    )
    return SyncingThreadStore(
        local,
        make_client(config),
        sync_dir=paths.sync_dir,
        background=background,
        retry_cap=config.queue_backoff_max,
        on_report=on_report,
    )


@contextmanager
def syncing_store() -> Iterator[SyncingThreadStore]:
    """The default store (:func:`open_store`, no background thread) for one command or one
    tool call of ``loomsync mcp``, closed when the ``with`` block ends: the one helper of the
    CLI and the MCP server (issue 16 review item 7).

    Raises:
        ConfigError: the configuration is invalid.
    """
    from loomsync.sync.syncing import SyncingThreadStore

    store = open_store(background=False)
    assert isinstance(store, SyncingThreadStore)
    try:
        yield store
    finally:
        store.close()


__all__ = ["make_client", "open_store", "syncing_store"]
