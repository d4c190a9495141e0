"""The sync queue's share of an SDK save (issue 15 item 4 and the SDK save target), for
:mod:`bench.client_store`: a store whose queue already holds 10,000 threads (queued offline).

- :func:`queued_store`: a ``SyncingThreadStore`` (offline) whose ``queue.sqlite3`` holds
  ``count`` ``save`` entries, written in a RAM folder (``/dev/shm``: 10,000 fsyncs on this disk
  take minutes) and copied to ``folder``; its saves then run on the disk like the others.
- :func:`new_thread_saves`: the save of a new thread (it adds a queue entry: the case that must
  not cost O(queue)), ms, in a store with an empty queue and in one with 10,000 queued.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.store.local import LocalThreadStore
from loomsync.sync.queue import QUEUE_FILE, PendingSyncQueue
from loomsync.sync.syncing import SyncingThreadStore

QUEUED = 10_000


def queued_store(folder: Path, count: int = QUEUED) -> SyncingThreadStore:
    """An offline store in ``folder`` whose sync queue holds ``count`` threads."""
    sync_dir = folder / "sync"
    sync_dir.mkdir(parents=True)
    ram = Path(tempfile.mkdtemp(prefix="loomsync-bench-queue-", dir="/dev/shm"))
    try:
        queue = PendingSyncQueue(ram / QUEUE_FILE)
        for _ in range(count):
            queue.add(str(ThreadId.new()), "save")
        queue.close()  # checkpointed into the one file
        shutil.copy2(ram / QUEUE_FILE, sync_dir / QUEUE_FILE)
    finally:
        shutil.rmtree(ram, ignore_errors=True)
    store = SyncingThreadStore(
        LocalThreadStore(folder / "threads"), None, sync_dir=sync_dir, background=False
    )
    if len(store.status()) != count:
        raise RuntimeError("the queue was not copied whole")
    return store


def new_thread_saves(
    folder: Path, queued: SyncingThreadStore, seed: Callable[[int, int], Thread], saves: int
) -> dict[str, list[float]]:
    """ms of ``saves`` saves of a new thread of 10 messages (each adds a queue entry), in a
    fresh store (empty queue) and in ``queued``; interleaved."""
    empty = SyncingThreadStore(
        LocalThreadStore(folder / "empty-threads"), None, sync_dir=folder / "empty-sync",
        background=False,
    )  # fmt: skip
    out: dict[str, list[float]] = {"empty queue": [], f"{QUEUED:,} queued": []}
    try:
        for n in range(saves + 2):
            for name, store in ((f"{QUEUED:,} queued", queued), ("empty queue", empty)):
                thread = seed(10, 50_000 + n)
                thread = thread.model_copy(update={"id": ThreadId.new()})
                started = time.perf_counter()
                store.save(thread)
                if n >= 2:  # two warm-up saves
                    out[name].append((time.perf_counter() - started) * 1000)
    finally:
        empty.close()
    return out


__all__ = ["QUEUED", "new_thread_saves", "queued_store"]
