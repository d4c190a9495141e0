"""Syncing the local store with a server: the pending queue, the engine, merges, pulls, the worker.

:mod:`loomsync.sync.syncing` is :class:`SyncingThreadStore`, the store the CLI uses.
"""
