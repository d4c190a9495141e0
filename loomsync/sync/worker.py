"""The background sync thread of SyncingThreadStore: push due queue entries, sleep until the
next one is due or a save wakes it up.

While the server refuses the token (a 401: :attr:`loomsync.sync.engine.SyncEngine.token_refused`,
issue 16 item 3) the entries wait for a new login: the thread then backs off as a whole
(exponential, with jitter, up to the engine's ``retry_cap``), and saves do not wake it, so a
refused token costs one request per backoff period, never one per save or per entry.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from loomsync import edits
from loomsync.store.summary import SyncOutcome
from loomsync.sync.engine import SyncEngine
from loomsync.sync.queue import PendingSyncQueue, backoff_delay

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
        refusals = 0  # runs in a row that ended on a refused token
        while not self._stop.is_set():
            self._wake.clear()
            delay: float | None = None
            try:
                due = [e for e in self._queue.entries() if e.due(edits.now())]
                if due:
                    self._engine.run(due, wait=False, progress=self._progress)
                if self._engine.token_refused is not None:
                    engine = self._engine
                    pause = backoff_delay(refusals, base=engine.retry_base, cap=engine.retry_cap)
                    refusals += 1
                    log.warning("the server refused the token; next try in %.1f s", pause)
                    self._stop.wait(timeout=pause)  # a save does not wake it: same token
                    continue
                refusals = 0
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
