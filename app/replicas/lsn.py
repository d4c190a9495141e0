"""WAL positions as integers, and the primary's current one read once for many waiting reads."""

from __future__ import annotations

import asyncio

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

#: The primary's WAL write position as bytes since ``0/0``: every transaction whose commit was
#: acknowledged ends at or before it (``synchronous_commit`` on, the default, flushes the commit
#: record before the commit returns). No table is read.
PRIMARY_LSN = text("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")
#: On a standby: whether it is one, and how far it has replayed (bytes since ``0/0``; NULL when
#: the server is not in recovery, e.g. promoted). A transaction is visible to a snapshot on the
#: standby once its commit record is replayed, before this position moves past it.
REPLAY_LSN = text(
    "SELECT pg_is_in_recovery() AS standby,"
    " pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint AS replayed"
)


async def replayed(session: AsyncSession) -> int | None:
    """How far the replica behind ``session`` has replayed (bytes since ``0/0``), or None when
    it is not a standby (then it is no replica to read from)."""
    row = (await session.execute(REPLAY_LSN)).one()
    return int(row.replayed) if row.standby and row.replayed is not None else None


class PrimaryLsn:
    """The primary's current WAL position, read so that each caller gets a reading taken after
    it asked, while at most one reading per server process is in flight.

    Callers that ask while a reading is on its way wait for the next one, which starts as soon
    as the first returns and serves all of them: under load the primary sees one tiny
    statement per round trip, not one per read (a read would otherwise cost the primary a
    checkout and a statement of its own). A reading that fails fails every caller it serves.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self._next: asyncio.Future[int] | None = None
        self._task: asyncio.Task[None] | None = None

    async def current(self) -> int:
        """A WAL position (bytes since ``0/0``) the primary had reached after this call began.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the primary did not answer.
        """
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        waiting = self._next
        if self._task is None:
            self._task = asyncio.create_task(self._read_batches())
        return await asyncio.shield(waiting)

    async def _read_batches(self) -> None:
        try:
            while self._next is not None:
                batch, self._next = self._next, None
                try:
                    async with self._engine.connect() as conn:
                        position = int(await conn.scalar(PRIMARY_LSN))
                except asyncio.CancelledError:
                    batch.cancel()
                    raise
                except Exception as exc:  # every waiter gets the failure; the next batch retries
                    batch.set_exception(exc)
                    batch.exception()  # retrieved: no "never retrieved" warning for 0 waiters
                else:
                    batch.set_result(position)
        finally:
            self._task = None
