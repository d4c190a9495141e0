"""The background probe: every ``LOOMSYNC_REPLICA_CHECK_INTERVAL`` seconds it reads the
primary's WAL position and each replica's replay position, sets their lag, skips a replica that
does not answer and lets it rejoin once it does."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from app.replicas.lsn import PrimaryLsn, replayed
from app.replicas.state import PrimaryHistory, Replica, now

log = logging.getLogger(__name__)


class NotAStandby(Exception):
    """The server behind a replica URL is not in recovery (a primary, or a promoted replica):
    its data may have left the primary's history, so it is not read from."""


class Monitor:
    """Probes ``replicas`` against the primary (through ``lsn``); ``timeout`` bounds each
    probe in seconds (``LOOMSYNC_REPLICA_CONNECT_TIMEOUT``)."""

    def __init__(
        self,
        lsn: PrimaryLsn,
        replicas: Sequence[Replica],
        history: PrimaryHistory,
        *,
        interval: float,
        timeout: float,
    ) -> None:
        self.lsn = lsn
        self.replicas = replicas
        self.history = history
        self.interval = interval
        self.timeout = timeout

    async def run(self) -> None:
        """Probe forever, every ``interval`` seconds (until cancelled)."""
        while True:
            await self.check()
            await asyncio.sleep(self.interval)

    async def check(self) -> None:
        """One round: the primary's position, then every replica's, at once. A primary that
        does not answer leaves the lags as they were (reads go to the primary then anyway)."""
        moment = now()
        try:
            async with asyncio.timeout(self.timeout):
                primary: int | None = await self.lsn.current()
        except Exception as exc:  # the primary's own outage is the requests' 503, not ours
            log.debug("replica probe: the primary did not answer: %r", exc)
            primary = None
        if primary is not None:
            self.history.add(moment, primary)
        await asyncio.gather(*(self._probe(r, primary) for r in self.replicas))

    async def _probe(self, replica: Replica, primary: int | None) -> None:
        try:
            async with asyncio.timeout(self.timeout):
                async with replica.sessionmaker() as session:
                    position = await replayed(session)
            if position is None:
                raise NotAStandby("the server is not a standby (not in recovery)")
        except Exception as exc:
            replica.trip(exc)
            return
        replica.replayed = position
        if primary is not None:
            replica.lag_bytes = max(0, primary - position)
        replica.lag_seconds = self.history.staleness(position, now())
        replica.rejoin()
