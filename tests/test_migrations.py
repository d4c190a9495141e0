"""Alembic: upgrade, downgrade and upgrade again on a fresh database; models match the schema."""

from __future__ import annotations

import asyncio

import asyncpg
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine

from app.database import alembic_config, head_revision, migrate
from app.tables import ALL_METADATA
from tests.database import create_database, drop_database

TABLES = {"threads", "thread_messages", "thread_commits", "audit_events", "idempotency_keys"}


async def _tables(url: str) -> set[str]:
    conn = await asyncpg.connect(
        make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    )
    try:
        rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return {r["tablename"] for r in rows}
    finally:
        await conn.close()


async def test_upgrade_downgrade_upgrade(pg_server: str) -> None:
    url = await create_database(pg_server)
    try:
        await asyncio.to_thread(migrate, url)
        assert TABLES <= await _tables(url)
        await asyncio.to_thread(command.downgrade, alembic_config(url), "base")
        assert not (TABLES & await _tables(url))
        await asyncio.to_thread(migrate, url)
        assert TABLES <= await _tables(url)
    finally:
        await drop_database(pg_server, url)


async def test_table_definitions_match_the_migrated_schema(database_url: str) -> None:
    engine = create_async_engine(database_url)

    def diff(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection)
        return list(compare_metadata(context, list(ALL_METADATA)))  # type: ignore[arg-type]

    try:
        async with engine.connect() as conn:
            differences = await conn.run_sync(diff)
    finally:
        await engine.dispose()
    assert differences == []


def test_head_revision_is_0009_usage() -> None:
    assert head_revision() == "0009_usage"
