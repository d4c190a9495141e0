"""Where a list or search runs (issue 18 item 2; docs/scaling.md "Read replicas").

Without replicas every read runs on the primary (:class:`PrimaryReads`). With them
(:class:`ReplicaReads`) a read goes to the next replica that answers and is within
``LOOMSYNC_REPLICA_MAX_LAG``, once that replica has replayed the primary's WAL up to the
position the primary had when the read began (read on the primary, :mod:`app.replicas.lsn`).
Whatever any server instance acknowledged before the read began is therefore in the replica's
snapshot: read-your-writes holds across instances, for any client (curl too), with no state
carried by the caller. A replica that has not caught up within ``LOOMSYNC_REPLICA_WAIT``
seconds, does not answer, fails the read, or has not finished it within
``LOOMSYNC_REPLICA_READ_TIMEOUT`` seconds (frozen mid-read; it is skipped until a probe finds it
answering) leaves the read to the primary: the caller never sees the replica's trouble, only
(at worst) the primary's time.

Writes, the GET of one thread and everything else keep using the primary's session
(:data:`app.database.SessionDep`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Protocol, TypeVar, cast

from fastapi import Depends, Request
from prometheus_client import CollectorRegistry
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.config import Settings
from app.database import make_engine, make_sessionmaker
from app.errors import AppError
from app.replicas import metrics
from app.replicas.lsn import PrimaryLsn, replayed
from app.replicas.monitor import Monitor, NotAStandby
from app.replicas.state import PrimaryHistory, Replica, replica_name

log = logging.getLogger(__name__)

T = TypeVar("T")
#: A read: a coroutine function of a session, run on whichever database routing picks. It must
#: not write, and may run twice (on a replica that fails it, then on the primary).
Read = Callable[[AsyncSession], Awaitable[T]]

#: Seconds between two looks at a replica's replay position while a read waits for it.
POLL_SECONDS = 0.002


class Reads(Protocol):
    """What the list and search handlers run their reads through."""

    async def run(self, read: Read[T]) -> T:
        """``read`` on a session of the database routing picks; its result."""
        ...

    def start(self) -> None:
        """Start background work (the app's lifespan calls it; a read does when it was not)."""
        ...

    async def close(self) -> None:
        """Stop background work and close the engines this object opened."""
        ...


class PrimaryReads:
    """No replicas configured: every read in a primary session, as :func:`app.database.
    get_session` opens one (nothing is counted, nothing runs in the background)."""

    def __init__(self, maker: async_sessionmaker[AsyncSession]) -> None:
        self._maker = maker

    async def run(self, read: Read[T]) -> T:
        """``read`` on a new primary session."""
        async with self._maker() as session:
            return await read(session)

    def start(self) -> None:
        """Nothing runs in the background."""

    async def close(self) -> None:
        """Nothing to close (the app closes the primary's engine)."""


def _is_outage(exc: BaseException) -> bool:
    """The replica is unreachable or went away (not: the statement was wrong)."""
    if isinstance(exc, (OSError, TimeoutError, NotAStandby, InterfaceError, OperationalError)):
        return True
    return isinstance(exc, DBAPIError) and exc.connection_invalidated


class ReplicaReads:
    """Reads routed to ``replicas`` under the rules of this module; counted in
    ``loomsync_db_reads_total`` (:mod:`app.replicas.metrics`). The probe
    (:class:`app.replicas.monitor.Monitor`) starts with the app (:meth:`start`), so the replica
    gauges are measured before the first read, or else with the first read."""

    def __init__(
        self,
        primary: AsyncEngine,
        maker: async_sessionmaker[AsyncSession],
        replicas: list[Replica],
        settings: Settings,
        registry: CollectorRegistry,
    ) -> None:
        self.primary = PrimaryReads(maker)
        self.replicas = replicas
        self.max_lag = settings.replica_max_lag
        self.wait = settings.replica_wait
        self.timeout = settings.replica_connect_timeout
        self.read_timeout = settings.replica_read_timeout
        self.lsn = PrimaryLsn(primary)
        history = PrimaryHistory(2 * settings.replica_max_lag + settings.replica_check_interval)
        self.monitor = Monitor(
            self.lsn,
            replicas,
            history,
            interval=settings.replica_check_interval,
            timeout=settings.replica_connect_timeout,
        )
        self.routed = metrics.register(registry, replicas)
        self._turn = itertools.count()
        self._probe: asyncio.Task[None] | None = None

    async def run(self, read: Read[T]) -> T:
        """``read`` on a caught-up replica, else on the primary (module docstring).

        Raises:
            whatever ``read`` raises on the primary; an :class:`app.errors.AppError` (a 4xx,
            a 429, a search's 503) from the replica as it is.
        """
        self.start()
        replica, reason = self._pick()
        if replica is not None:
            position = await self.lsn.current()
            reason, result = await self._on_replica(replica, position, read)
            if reason == metrics.CAUGHT_UP:
                self.routed.labels(metrics.REPLICA, reason).inc()
                return cast(T, result)
        self.routed.labels(metrics.PRIMARY, reason).inc()
        return await self.primary.run(read)

    def _pick(self) -> tuple[Replica | None, str]:
        usable = [r for r in self.replicas if r.usable(self.max_lag)]
        if usable:
            return usable[next(self._turn) % len(usable)], metrics.CAUGHT_UP
        if any(r.up for r in self.replicas):
            return None, metrics.LAGGING
        return None, metrics.REPLICA_DOWN

    async def _on_replica(
        self, replica: Replica, position: int, read: Read[T]
    ) -> tuple[str, T | None]:
        """(``caught-up``, the result) or (why not, None): the read is bounded by
        ``LOOMSYNC_REPLICA_READ_TIMEOUT``, and any failure but an :class:`app.errors.AppError`
        is the replica's (a timeout or lost connection skips it)."""
        try:
            async with replica.sessionmaker() as session:
                try:
                    if not await self._caught_up(session, position):
                        return metrics.NOT_REPLICATED_YET, None
                    async with asyncio.timeout(self.read_timeout):  # a replica frozen mid-read
                        return metrics.CAUGHT_UP, await read(session)
                except TimeoutError:
                    await session.invalidate()  # no rollback on a connection that hangs
                    raise
        except AppError:
            raise
        except Exception as exc:  # whatever the replica does, the read runs on the primary
            if _is_outage(exc):
                replica.trip(exc)
                return metrics.REPLICA_DOWN, None
            log.warning("a read failed on replica %s; running it on the primary", replica.name,
                        exc_info=exc)  # fmt: skip
            return metrics.REPLICA_ERROR, None

    async def _caught_up(self, session: AsyncSession, position: int) -> bool:
        """Whether the replica of ``session`` replays ``position`` within ``wait`` seconds
        (looked at every :data:`POLL_SECONDS`). Connecting and every look together are
        bounded by twice ``LOOMSYNC_REPLICA_CONNECT_TIMEOUT`` beyond the wait.

        Raises:
            TimeoutError: the replica took longer than that to answer.
            NotAStandby: the server is not in recovery.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait
        async with asyncio.timeout(self.wait + 2 * self.timeout):
            while True:
                done = await replayed(session)
                if done is None:
                    raise NotAStandby("the server is not a standby (not in recovery)")
                if done >= position:
                    return True
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return False
                await asyncio.sleep(min(POLL_SECONDS, remaining))

    def start(self) -> None:
        """Start the probe unless it runs (in a running event loop)."""
        if self._probe is None:
            self._probe = asyncio.get_running_loop().create_task(self.monitor.run())

    async def close(self) -> None:
        """Stop the probe and close the replicas' engines."""
        if self._probe is not None:
            self._probe.cancel()
            await asyncio.gather(self._probe, return_exceptions=True)
            self._probe = None
        await asyncio.gather(*(r.engine.dispose() for r in self.replicas))


def make_reads(
    settings: Settings,
    primary: AsyncEngine,
    maker: async_sessionmaker[AsyncSession],
    registry: CollectorRegistry,
) -> Reads:
    """The app's read routing: :class:`PrimaryReads` without ``LOOMSYNC_DATABASE_REPLICA_URLS``,
    else :class:`ReplicaReads` with one engine per replica (connecting gives up after
    ``LOOMSYNC_REPLICA_CONNECT_TIMEOUT`` seconds)."""
    urls = settings.replica_urls
    if not urls:
        return PrimaryReads(maker)
    quick = settings.model_copy(update={"db_connect_timeout": settings.replica_connect_timeout})
    replicas = []
    for url in urls:
        engine = make_engine(url, quick)
        replicas.append(Replica(replica_name(url), engine, make_sessionmaker(engine)))
    return ReplicaReads(primary, maker, replicas, settings, registry)


async def get_reads(request: Request) -> Reads:
    """FastAPI dependency: the app's :class:`Reads`."""
    reads: Reads = request.app.state.reads
    return reads


ReadsDep = Annotated[Reads, Depends(get_reads)]
