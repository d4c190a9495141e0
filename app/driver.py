"""The asyncpg connection under a request's session, for the few hot statements of the writes
(issue 18 item 1).

A statement run through ``AsyncSession.execute`` passes the ORM's execution path, SQLAlchemy's
compiled cache, its cursor adapter and result rows: for an append's two statements that was
most of SQLAlchemy's 1.1 ms of server CPU (bench.writeprofile). :func:`driver` hands out the
session's own asyncpg connection instead, so the hot statements run with ``$n`` parameters on
asyncpg directly, and everything else stays as it was:

- **One transaction.** The statements run inside the session's transaction on the session's
  pooled connection (SQLAlchemy's asyncpg adapter starts it, as it would for its own first
  statement), so the route's other statements, its commit and its rollback cover them.
- **Errors as SQLAlchemy raises them.** An asyncpg error is translated by SQLAlchemy's own
  adapter and wrapped by its ``Connection`` (``DBAPIError`` subclasses: ``IntegrityError``,
  ``OperationalError`` …, a lost connection invalidated), so the 409/503 handlers
  (app/errors.py) see exactly what a session statement would raise.
- **Cancellation.** A request cancelled inside a statement is handled as SQLAlchemy handles
  an exit exception in its own statements: the connection is invalidated (closed, never
  returned to the pool mid-statement), and the session's rollback discards the transaction.
- **Events.** The engine's ``before_cursor_execute`` listeners are called for these statements
  too (with no cursor or context): what captures or logs SQL sees every statement
  (bench/writes.py replays them as its floor).
- **Prepared statements.** asyncpg's statement cache applies (``statement_cache_size``, 0
  behind PgBouncer in transaction mode, where asyncpg uses the unnamed statement:
  app/pooler.py).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession
from sqlalchemy.util import greenlet_spawn

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Driver:
    """A session's asyncpg connection (``raw``), its SQLAlchemy adapter (``adapter``) and the
    SQLAlchemy ``connection`` that owns it; made by :func:`driver`."""

    connection: AsyncConnection
    adapter: Any
    raw: Any

    async def fetchrow(self, sql: str, *args: Any) -> Any:
        """Run ``sql`` (``$n`` parameters ``args``) and return its first row (an
        ``asyncpg.Record``, or None). Raises ``sqlalchemy.exc.DBAPIError`` subclasses."""
        return await self._run(sql, args, lambda: self.raw.fetchrow(sql, *args))

    async def execute(self, sql: str, *args: Any) -> str:
        """Run ``sql`` (``$n`` parameters ``args``) and return its status (``INSERT 0 3``).
        Raises ``sqlalchemy.exc.DBAPIError`` subclasses."""
        status: str = await self._run(sql, args, lambda: self.raw.execute(sql, *args))
        return status

    async def _run(self, sql: str, args: tuple[Any, ...], call: Callable[[], Awaitable[T]]) -> T:
        adapter = self.adapter
        sync = self.connection.sync_connection
        assert sync is not None
        if sync._has_events or sync.engine._has_events:  # listeners see these statements too
            sync.dispatch.before_cursor_execute(sync, None, sql, args, None, False)
        try:
            async with adapter._execute_mutex:
                if adapter._transaction is None:
                    await adapter._start_transaction()  # raises the adapter's DB-API errors
                try:
                    return await call()
                except Exception as error:
                    adapter._handle_exception(error)  # raises it as a DB-API error
                    raise  # not reached
        except BaseException as error:
            # SQLAlchemy's own handling: wraps DB-API errors in DBAPIError subclasses,
            # invalidates a lost (or, on an exit exception, interrupted) connection; raises.
            await greenlet_spawn(_handle, sync, error, sql, args)
            raise  # not reached: the handler always raises


def _handle(sync: Any, error: BaseException, sql: str, args: tuple[Any, ...]) -> None:
    """SQLAlchemy's handling of ``error`` (in its greenlet, with ``error`` as the exception
    being handled, as the handler reads it from ``sys.exc_info()``); always raises."""
    try:
        raise error
    except BaseException as handled:
        sync._handle_dbapi_exception(handled, sql, args, None, None)


async def driver(session: AsyncSession) -> Driver:
    """The asyncpg connection of ``session``'s transaction (checked out, and the transaction
    begun, if this is the session's first statement).

    Raises:
        sqlalchemy.exc.DBAPIError: the connection could not be had (as a session statement).
    """
    connection = await session.connection()
    pooled = await connection.get_raw_connection()
    adapter = pooled.dbapi_connection
    assert adapter is not None  # a checked-out connection always has one
    return Driver(connection, adapter, adapter.driver_connection)
