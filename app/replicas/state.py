"""One read replica (its engine, whether it answers, how stale it is) and the primary's recent
WAL positions that staleness is measured against."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass, field

from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

log = logging.getLogger(__name__)


def replica_name(url: str) -> str:
    """``host:port/database`` of a database URL (no user, no password): the ``replica`` label."""
    parts = make_url(url)
    return f"{parts.host or 'localhost'}:{parts.port or 5432}/{parts.database or ''}"


class PrimaryHistory:
    """The primary's WAL position as read at known moments (``time.monotonic()`` seconds,
    bytes since ``0/0``), kept for ``horizon`` seconds (at least the newest one).

    A replica that has replayed up to ``R`` holds everything the primary had written at the
    newest moment whose position is ``<= R``, so it is at most ``now`` minus that moment stale:
    a bound from this process's own clock, never from the two servers' clocks, and not fooled
    by an idle primary (``now() - pg_last_xact_replay_timestamp()`` grows while nothing is
    written). Its resolution is the time between readings (``LOOMSYNC_REPLICA_CHECK_INTERVAL``).
    """

    def __init__(self, horizon: float) -> None:
        self.horizon = horizon
        self._samples: deque[tuple[float, int]] = deque()
        self._dropped: float | None = None  # the moment of the newest sample let go

    def add(self, moment: float, position: int) -> None:
        """Record that the primary had reached ``position`` by ``moment``."""
        self._samples.append((moment, position))
        while len(self._samples) > 1 and self._samples[0][0] < moment - self.horizon:
            self._dropped = self._samples.popleft()[0]

    def newest(self) -> int | None:
        """The newest position recorded, or None before the first."""
        return self._samples[-1][1] if self._samples else None

    def staleness(self, replayed: int, now: float) -> float:
        """Seconds by which a replica that replayed up to ``replayed`` is at most behind:
        0 when it holds the newest position recorded; when it holds none of them, ``now``
        minus the moment of the newest sample let go (past the horizon: older than anything
        kept), or of the oldest kept when none was let go yet (a lower bound)."""
        if not self._samples or replayed >= self._samples[-1][1]:
            return 0.0
        for moment, position in reversed(self._samples):
            if position <= replayed:
                return max(0.0, now - moment)
        oldest = self._dropped if self._dropped is not None else self._samples[0][0]
        return max(0.0, now - oldest)


@dataclass(eq=False)
class Replica:
    """A read replica. ``up`` is its circuit breaker: False from the first failed connection
    or probe until a probe of :class:`app.replicas.monitor.Monitor` succeeds again; while it is
    False no request tries it. ``lag_seconds`` and ``lag_bytes`` are the last probe's."""

    name: str
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    up: bool = True
    lag_seconds: float = 0.0
    lag_bytes: int = 0
    replayed: int | None = None
    _disposing: set[asyncio.Task[None]] = field(default_factory=set)

    def usable(self, max_lag: float) -> bool:
        """Answering, and no more than ``max_lag`` seconds behind at the last probe."""
        return self.up and self.lag_seconds <= max_lag

    def trip(self, why: object) -> None:
        """Stop sending reads here until a probe succeeds; its pooled connections are closed
        in the background (a replica that hangs must not hold up the request that found it)."""
        if self.up:
            log.warning("read replica %s skipped until it answers again: %r", self.name, why)
        self.up = False
        task = asyncio.get_running_loop().create_task(self.engine.dispose())
        self._disposing.add(task)
        task.add_done_callback(self._disposing.discard)

    def rejoin(self) -> None:
        """A probe succeeded: reads may come here again."""
        if not self.up:
            log.warning("read replica %s answers again; reads go to it", self.name)
        self.up = True


def now() -> float:
    """The clock of :class:`PrimaryHistory` (monotonic seconds)."""
    return time.monotonic()
