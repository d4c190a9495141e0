"""Database plumbing: the async engine, the per-request session, migrations and the embedded server."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from fastapi import Depends, Request
from sqlalchemy import event, exc, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from app import pgtime, pooler
from app.config import Settings, normalize_database_url
from app.pooler import Pooler
from loomsync.core.document import jsontext

T = TypeVar("T")

log = logging.getLogger(__name__)

EMBEDDED_DATABASE = "loomsync"


#: Session settings of every server connection. Search plans depend on how common the searched
#: words are, so statements are planned with their actual parameters (never a generic plan).
#: JIT compilation and parallel workers cost more than they save on these short statements
#: (measured on the search benchmark: a parallel plan's worker start-up was 10 of 15 ms), and
#: concurrent requests already use every core.
SERVER_SETTINGS = {
    "application_name": "loomsync",
    "plan_cache_mode": "force_custom_plan",
    "jit": "off",
    "max_parallel_workers_per_gather": "0",
}


def make_engine(url: str, settings: Settings) -> AsyncEngine:
    """Create the async engine. Each pooled connection is checked at checkout
    (:func:`_replace_closed`), so connections that a database restart or
    ``pg_terminate_backend`` closed are replaced instead of failing the request; connecting gives
    up after ``LOOMSYNC_DB_CONNECT_TIMEOUT`` seconds, so a database that does not answer costs a
    503, never a hang. Every connection reads ``timestamptz`` as aware UTC (:mod:`app.pgtime`).
    ``LOOMSYNC_DB_POOLER=pgbouncer`` makes it safe behind PgBouncer in transaction mode
    (:mod:`app.pooler`)."""
    engine = create_async_engine(
        normalize_database_url(url),
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=30,
        connect_args=pooler.connect_args(
            settings.db_pooler, SERVER_SETTINGS, settings.db_connect_timeout
        ),
        json_deserializer=jsontext.loads,  # a json column's numbers keep their text (API.md §2)
        json_serializer=jsontext.dumps,
    )
    event.listen(engine.sync_engine.pool, "checkout", _replace_closed)
    event.listen(engine.sync_engine, "connect", pgtime.on_connect)
    return engine


async def run_autocommit(url: str, settings: Settings, work: Callable[[Connection], T]) -> T:
    """``work(connection)`` on a synchronous view of one connection in autocommit mode (a
    backfill's batches of short transactions: app/provenance/backfill.py,
    app/usage/backfill.py); the engine is disposed of after. Raises what ``work`` raises."""
    engine = make_engine(url, settings)
    try:
        async with engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            return await auto.run_sync(work)
    finally:
        await engine.dispose()


def _replace_closed(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    """Pool checkout hook: a connection whose socket the server closed (a restart,
    ``pg_terminate_backend``, an idle timeout) is discarded and the pool opens another
    (``DisconnectionError``; SQLAlchemy "Disconnect Handling - Pessimistic").

    PostgreSQL closes the socket of every backend it ends, and asyncpg notices the close as
    soon as the event loop reads it, so this costs no round trip. ``pool_pre_ping`` found the
    same connections with three (``BEGIN``, ``;``, ``ROLLBACK``): 30% more statements for an
    append (bench/README.md, write throughput)."""
    if dbapi_connection.driver_connection.is_closed():
        raise exc.DisconnectionError("the database closed this pooled connection")


def make_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions that keep attribute values after commit (``expire_on_commit=False``)."""
    return async_sessionmaker(engine, expire_on_commit=False)


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """FastAPI dependency: one session per request. Writes commit inside the repository call,
    before the response is sent; anything uncommitted is rolled back when the request ends."""
    maker: async_sessionmaker[AsyncSession] = request.app.state.sessionmaker
    async with maker() as session:
        yield session


SessionDep = Annotated[AsyncSession, Depends(get_session)]


async def get_settings(request: Request) -> Settings:
    """FastAPI dependency: the Settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_settings)]


def migrations_dir() -> Path:
    """The Alembic script folder: packaged in the wheel, or ``migrations/`` in a checkout."""
    packaged = Path(__file__).parent / "_migrations"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str, pooler: Pooler = "none") -> Config:
    """An Alembic config for ``url`` that needs no alembic.ini on disk; ``pooler`` is
    ``LOOMSYNC_DB_POOLER`` (migrations/env.py connects as :mod:`app.pooler` says)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    config.attributes["database_url"] = normalize_database_url(url)
    config.attributes["db_pooler"] = pooler
    return config


def head_revision() -> str:
    """The newest migration revision id."""
    head = ScriptDirectory.from_config(alembic_config("postgresql://x/x")).get_current_head()
    assert head is not None
    return head


def migrate(url: str, pooler: Pooler = "none") -> None:
    """Bring the schema at ``url`` to the latest revision (``alembic upgrade head``), connecting
    as ``LOOMSYNC_DB_POOLER`` ``pooler`` says.

    Runs the async ``env.py`` in its own event loop, so call it from synchronous code (or a
    worker thread).
    """
    command.upgrade(alembic_config(url, pooler), "head")


async def schema_revision(engine: AsyncEngine) -> str | None:
    """The revision recorded in ``alembic_version``, or None when the schema was never migrated."""
    async with engine.connect() as conn:
        exists = await conn.scalar(text("SELECT to_regclass('alembic_version') IS NOT NULL"))
        if not exists:
            return None
        revision = await conn.scalar(text("SELECT version_num FROM alembic_version"))
        return str(revision) if revision is not None else None


def _pgserver() -> Any:
    """``pgserver.postgres_server``, imported without the ``RuntimeDirWarning`` that
    platformdirs raises at its import when ``XDG_RUNTIME_DIR`` is unset (a container, ``su``,
    cron: issue 30 item 8, printed by every ``loomsync-server`` command). pgserver computes its
    lock file's folder at import time, and falls back to ``/tmp/runtime-<uid>``, the folder it
    then uses: the warning tells an operator nothing to act on. Only that category, only
    during that import, is silenced; every other warning still shows."""
    import warnings

    from platformdirs import RuntimeDirWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeDirWarning)
        from pgserver import postgres_server
    return postgres_server


def _forget_dead_handles(pgdata: Path) -> None:
    """Drop the pids of processes that no longer exist from pgserver's list of processes using
    the server (``pgdata/.handle_pids.json``). pgserver stops the server only when the last
    listed process lets go of it, and never prunes the list: one ``kill -9``, crash or reboot
    while serving would otherwise leave the embedded PostgreSQL running after every later
    clean exit."""
    path = pgdata / ".handle_pids.json"
    with _pgserver().PostgresServer._lock:
        try:
            pids = [int(pid) for pid in json.loads(path.read_text())]
        except (OSError, ValueError, TypeError):
            return
        alive = [pid for pid in pids if _process_exists(pid)]
        if alive != pids:
            path.write_text(json.dumps(alive))


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_embedded(data_dir: Path) -> Any:
    """Start (or attach to) the embedded PostgreSQL under ``data_dir/pgdata``; return the handle.

    The handle's ``get_uri()`` is a ``postgresql://`` URL over a Unix socket; the server stops
    when the last process using it exits.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(data_dir / "pgdata")
    server = _pgserver().get_server(data_dir / "pgdata", cleanup_mode="stop")
    exists = server.psql(f"SELECT 1 FROM pg_database WHERE datname = '{EMBEDDED_DATABASE}';")
    if "(1 row)" not in exists:
        server.psql(f"CREATE DATABASE {EMBEDDED_DATABASE};")
    return server


def embedded_url(server: Any) -> str:
    """The SQLAlchemy URL of the embedded server's ``loomsync`` database."""
    url = make_url(normalize_database_url(server.get_uri()))
    return url.set(database=EMBEDDED_DATABASE).render_as_string(hide_password=False)


def embedded_secret(data_dir: Path) -> str:
    """The embedded server's HS256 secret, created on first use in ``data_dir/jwt_secret`` (0600)."""
    path = data_dir / "jwt_secret"
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(48))
    path.chmod(0o600)
    return path.read_text().strip()


async def migrate_async(url: str) -> None:
    """:func:`migrate` from async code (Alembic's async env.py needs its own loop)."""
    await asyncio.to_thread(migrate, url)
