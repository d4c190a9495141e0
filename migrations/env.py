"""Alembic environment: async engine, URL from the caller's config or LOOMSYNC_DATABASE_URL."""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import Settings, normalize_database_url
from app.pooler import connect_args
from app.tables import ALL_METADATA

config = context.config
target_metadata = list(ALL_METADATA)


def _url() -> str:
    url = config.attributes.get("database_url") or config.get_main_option("sqlalchemy.url")
    if not url:
        url = Settings().database_url
    if not url:
        raise RuntimeError("set LOOMSYNC_DATABASE_URL (or use `loomsync-server migrate`)")
    return normalize_database_url(url)


def run_migrations_offline() -> None:
    """Emit SQL to stdout (``alembic upgrade head --sql``)."""
    context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata)
    with context.begin_transaction():
        context.run_migrations()


async def run_migrations_online() -> None:
    """Run the migrations over an asyncpg connection."""
    pooler = config.attributes.get("db_pooler", "none")
    # behind PgBouncer in transaction mode: no named or cached prepared statements (app/pooler.py)
    extra = {} if pooler == "none" else {"connect_args": connect_args(pooler, {}, 30.0)}
    engine = create_async_engine(_url(), **extra)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(_run)
            await connection.commit()
    finally:
        await engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    asyncio.run(run_migrations_online())
