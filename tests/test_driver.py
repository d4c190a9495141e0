"""The hot statements' driver SQL (app/threads/hotsql.py: ``first_row``, ``execute``, through
SQLAlchemy's public ``exec_driver_sql``) behaves as the session's own statements do: one
transaction with them, errors raised as SQLAlchemy raises them (so app/errors.py answers
409/500/503 as before), a lost connection invalidated, and a cancelled statement never leaves
a busy connection in the pool, and the engine's listeners see each statement. Real PostgreSQL,
the app's own engine."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import _is_database_outage
from app.threads.hotsql import execute, first_row

SETTING = "SELECT current_setting('loomsync.driver_test', true)"


async def _row(session: AsyncSession, sql: str) -> Sequence[Any]:
    row = await first_row(session, sql, ())
    assert row is not None
    return row


async def test_driver_statements_share_the_sessions_transaction(app: FastAPI) -> None:
    async with app.state.sessionmaker() as session:
        await first_row(session, "SELECT set_config('loomsync.driver_test', $1, true)", ("on",))
        assert (await session.execute(text(SETTING))).scalar() == "on"
        await session.rollback()
        assert (await _row(session, SETTING))[0] in (None, "")


async def test_errors_are_sqlalchemys_and_the_session_recovers(app: FastAPI) -> None:
    async with app.state.sessionmaker() as session:
        with pytest.raises(DBAPIError) as raised:
            await first_row(session, "SELECT 1 / $1", (0,))
        assert getattr(raised.value.orig, "sqlstate", None) == "22012"
        assert not _is_database_outage(raised.value)
        await session.rollback()
        with pytest.raises(IntegrityError):  # a unique violation, as a session statement raises it
            await execute(
                session, "DO $$ BEGIN RAISE unique_violation USING MESSAGE = 'taken'; END $$", ()
            )
        await session.rollback()
        assert (await session.execute(text("SELECT 1"))).scalar() == 1


async def test_a_lost_connection_is_an_outage_and_invalidated(app: FastAPI) -> None:
    async with app.state.sessionmaker() as session:
        pid = (await _row(session, "SELECT pg_backend_pid()"))[0]
        async with app.state.engine.connect() as other:
            await other.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(DBAPIError) as raised:
            await first_row(session, "SELECT 1", ())
        assert _is_database_outage(raised.value)
        assert raised.value.connection_invalidated
        await session.rollback()
    async with app.state.sessionmaker() as session:
        assert (await _row(session, "SELECT 1"))[0] == 1


async def test_a_cancelled_statement_leaves_the_pool_clean(app: FastAPI) -> None:
    async with app.state.sessionmaker() as session:
        pid = (await _row(session, "SELECT pg_backend_pid()"))[0]
        task = asyncio.create_task(execute(session, "SELECT pg_sleep(30)", ()))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    async with app.state.engine.connect() as other:
        for _ in range(50):  # the invalidated connection's backend goes away
            busy = (
                await other.execute(
                    text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid"), {"pid": pid}
                )
            ).scalar()
            if not busy:
                break
            await asyncio.sleep(0.1)
        assert busy == 0
    async with app.state.sessionmaker() as session:
        assert (await _row(session, "SELECT 1"))[0] == 1
        assert (await _row(session, SETTING))[0] in (None, "")


async def test_the_engines_listeners_see_driver_statements(app: FastAPI) -> None:
    seen: list[tuple[str, object]] = []

    def listener(
        _conn: object, _cursor: object, statement: str, params: object, *_: object
    ) -> None:
        seen.append((statement, params))

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", listener)
    try:
        async with app.state.sessionmaker() as session:
            await first_row(session, "SELECT $1::int + 1", (41,))
    finally:
        event.remove(engine, "before_cursor_execute", listener)
    assert ("SELECT $1::int + 1", (41,)) in seen
