"""The background sync thread of SyncingThreadStore: push due queue entries, sleep until the
next one is due or a save wakes it up."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from loomsync import edits
from loomsync.store.summary import SyncOutcome
from loomsync.sync.engine import SyncEngine
from loomsync.sync.queue import PendingSyncQueue

log = logging.getLogger(__name__)

MIN_DELAY = 0.5  # seconds between looks at entries another process is syncing
ERROR_DELAY = 5.0  # seconds after an unexpected error


class BackgroundSync:
    """A daemon thread running ``engine`` over due entries of ``queue``.

    :meth:`wake` after enqueuing; :meth:`stop` to end it. Entries that fail for the network
    are backed off by the engine (exponential, with jitter); the thread sleeps until the
    soonest is due. It never waits on another process syncing the same thread.
    """

    def __init__(
        self,
        engine: SyncEngine,
        queue: PendingSyncQueue,
        progress: Callable[[SyncOutcome], None] | None = None,
    ) -> None:
        """Start the thread; ``progress`` is called (from it) with each entry's outcome
        (``loomsync watch`` logs them, issue 17 item 1)."""
        self._engine = engine
        self._progress = progress
        self._queue = queue
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loomsync-sync", daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Look at the queue now."""
        self._wake.set()

    def stop(self, timeout: float) -> None:
        """Stop after the current entry, waiting up to ``timeout`` seconds."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            delay: float | None = None
            try:
                due = [e for e in self._queue.entries() if e.due(edits.now())]
                if due:
                    self._engine.run(due, wait=False, progress=self._progress)
                remaining = [e for e in self._queue.entries() if not e.failed]
                if remaining:
                    now = edits.now()
                    soonest = min(e.next_attempt_at or now for e in remaining)
                    delay = max(MIN_DELAY, (soonest - now).total_seconds())
            except Exception as exc:  # keep the thread alive; try again a little later
                log.warning("background sync error: %s", exc)
                delay = ERROR_DELAY
            self._wake.wait(timeout=delay)


__all__ = ["BackgroundSync"]
