"""A real server behind Debian's PgBouncer 1.18 in transaction mode (issue 18 item 3,
app/pooler.py): with ``LOOMSYNC_DB_POOLER=pgbouncer`` a concurrent mixed workload succeeds on
two shared server connections and leaves no prepared statement behind; without it the same
workload fails on asyncpg's prepared statements, and the connect-time settings are refused.
Ports 18311-18319 of the i18-pool range."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from app import pooler
from app.config import Settings
from app.database import SERVER_SETTINGS, head_revision, make_engine, migrate
from tests.conftest import TokenFactory
from tests.database import create_database, drop_database
from tests.infra.pgbouncer import PgBouncer, start_pgbouncer, upstream_of
from tests.infra.process import require
from tests.servers import app_env, uvicorn_server
from tests.workload import run_workload

POOL = 2  # PgBouncer's server connections, against the server's 8 client connections
CLIENTS, ROUNDS = 8, 3
#: What PgBouncer's per-database connect_query sets, as ALTER DATABASE … SET would.
SESSION_SQL = "; ".join(
    f"SET {k} = '{v}'" for k, v in pooler.session_defaults(SERVER_SETTINGS).items()
)
PREPARED_ERRORS = re.compile(r'prepared statement "[^"]*" (does not exist|already exists)')


def _bouncer(pg_server: str, port: int, folder: Path, **options: str | None) -> Iterator[PgBouncer]:
    require("pgbouncer", "pgbouncer")
    with start_pgbouncer(*upstream_of(pg_server), port, folder, pool_size=POOL, **options) as b:
        yield b


@pytest.fixture
def bouncer(pg_server: str, tmp_path: Path) -> Iterator[PgBouncer]:
    """PgBouncer in transaction mode whose connect_query sets the server's session settings."""
    yield from _bouncer(pg_server, 18311, tmp_path / "bouncer", connect_query=SESSION_SQL)


@pytest.fixture
def lenient_bouncer(pg_server: str, tmp_path: Path) -> Iterator[PgBouncer]:
    """PgBouncer in transaction mode that drops the server's startup settings instead of
    refusing them (``ignore_startup_parameters``), so connecting works and statements are what
    fails."""
    ignored = ",".join(["extra_float_digits", *pooler.session_defaults(SERVER_SETTINGS)])
    yield from _bouncer(pg_server, 18312, tmp_path / "lenient", ignore_startup_parameters=ignored)


def _env(database_url: str, settings: Settings, **extra: str) -> dict[str, str]:
    return app_env(database_url, settings, LOOMSYNC_DB_POOL_SIZE="8", **extra)


def _users(auth: TokenFactory, tag: str) -> list[dict[str, str]]:
    return [auth(f"pool-{tag}-{i}", org=f"pool-org-{tag}") for i in range(CLIENTS)]


async def _prepared_left(bouncer: PgBouncer, database_url: str) -> dict[int, int]:
    """``{backend pid: named prepared statements}`` seen through PgBouncer, asking often enough
    to reach each of its server connections."""
    dsn = bouncer.route(database_url.replace("+asyncpg", ""))
    seen: dict[int, int] = {}
    conn = await asyncpg.connect(dsn, statement_cache_size=0)
    try:
        for _ in range(20):
            async with conn.transaction():
                pid = await conn.fetchval("SELECT pg_backend_pid()")
                seen[pid] = await conn.fetchval("SELECT count(*) FROM pg_prepared_statements")
    finally:
        await conn.close()
    return seen


async def test_workload_through_pgbouncer_with_the_setting(
    bouncer: PgBouncer, database_url: str, settings: Settings, auth: TokenFactory
) -> None:
    """Every request of 8 concurrent clients succeeds over PgBouncer's 2 server connections;
    none of the prepared statements made on the way is left on a backend; the server found the
    session settings in place (no start-up warning)."""
    env = _env(bouncer.route(database_url), settings, LOOMSYNC_DB_POOLER="pgbouncer")
    users = _users(auth, "with")
    with uvicorn_server(env) as server:
        outcome = await run_workload(server.base_url, users.__getitem__, CLIENTS, ROUNDS)
        log = server.output()
    assert outcome.failures == []
    assert outcome.requests == CLIENTS * ROUNDS * 10
    assert not PREPARED_ERRORS.search(log)
    assert "LOOMSYNC_DB_POOLER=pgbouncer" not in log  # pooler.warn_if_unset stayed quiet
    servers = bouncer.show("SERVERS")
    assert 1 <= len(servers) <= POOL
    left = await _prepared_left(bouncer, database_url)
    assert left
    assert set(left.values()) == {0}, left


async def test_the_same_workload_without_the_setting_fails(
    lenient_bouncer: PgBouncer, database_url: str, settings: Settings, auth: TokenFactory
) -> None:
    """Without ``LOOMSYNC_DB_POOLER``, asyncpg's named, cached statements meet on the shared
    backends: requests fail with "prepared statement … does not exist / already exists"."""
    env = _env(lenient_bouncer.route(database_url), settings)
    users = _users(auth, "without")
    with uvicorn_server(env, ready_path="/health") as server:
        outcome = await run_workload(server.base_url, users.__getitem__, CLIENTS, ROUNDS)
        log = server.output()
    assert outcome.failures, "the workload passed without the setting: the test proves nothing"
    assert PREPARED_ERRORS.search(log), log[-3000:]


async def test_connect_time_settings_are_refused_without_the_setting(
    bouncer: PgBouncer, database_url: str, settings: Settings
) -> None:
    """PgBouncer refuses the startup parameters a direct connection sends
    (``plan_cache_mode``…): the server is never ready. With the setting it is."""
    env = _env(bouncer.route(database_url), settings)
    with uvicorn_server(env, ready_path="/health") as server:
        async with httpx.AsyncClient(base_url=server.base_url) as client:
            ready = await client.get("/health/ready")
    assert ready.status_code == 503
    assert "unsupported startup parameter" in bouncer.log.read_text()


async def test_start_up_check_names_the_missing_session_settings(
    lenient_bouncer: PgBouncer, bouncer: PgBouncer, database_url: str
) -> None:
    """Behind a pooler the session settings must be the database's (or connect_query's):
    :func:`app.pooler.missing_settings` finds them missing through a PgBouncer that does not set
    them, and in place through one that does; the warning names the ALTER DATABASE to run."""
    wanted = pooler.session_defaults(SERVER_SETTINGS)
    config = Settings(db_pooler="pgbouncer", _env_file=None)  # type: ignore[call-arg]
    found = {}
    for name, via in (("lenient", lenient_bouncer), ("set", bouncer)):
        engine = make_engine(via.route(database_url), config)
        try:
            found[name] = await pooler.missing_settings(engine, wanted)
        finally:
            await engine.dispose()
    assert set(found["lenient"]) == set(wanted)
    assert found["set"] == {}
    database = make_url(database_url).database
    sql = pooler.alter_database_sql(str(database), wanted)
    assert sql.startswith(f'ALTER DATABASE "{database}" SET ')
    assert sql.count("ALTER DATABASE") == len(wanted)


async def test_migrations_run_through_pgbouncer(pg_server: str, bouncer: PgBouncer) -> None:
    """``loomsync-server migrate`` with the setting brings a fresh database to head through
    PgBouncer (migrations/env.py connects as app/pooler.py says)."""
    url = await create_database(pg_server)
    try:
        await asyncio.to_thread(migrate, bouncer.route(url), "pgbouncer")
        conn = await asyncpg.connect(url.replace("+asyncpg", ""))
        try:
            revision = await conn.fetchval("SELECT version_num FROM alembic_version")
        finally:
            await conn.close()
        assert revision == head_revision()
    finally:
        await drop_database(pg_server, url)


async def test_the_start_up_warning_names_the_database_behind_a_pgbouncer_alias(
    pg_server: str, database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Behind an alias (``[databases] loomsync = … dbname=<real>``) the ALTER DATABASE the
    warning asks for names the server's database, not the alias (which it would not find).
    Port 18601 of the r18 range."""
    require("pgbouncer", "pgbouncer")
    real = str(make_url(database_url).database)
    ignored = ",".join(["extra_float_digits", *pooler.session_defaults(SERVER_SETTINGS)])
    config = Settings(db_pooler="pgbouncer", _env_file=None)  # type: ignore[call-arg]
    with start_pgbouncer(
        *upstream_of(pg_server),
        18601,
        tmp_path / "alias",
        pool_size=POOL,
        ignore_startup_parameters=ignored,
        aliases={"loomsync_alias": real},
    ) as via:
        aliased = make_url(via.route(database_url)).set(database="loomsync_alias")
        engine = make_engine(aliased.render_as_string(hide_password=False), config)
        try:
            with caplog.at_level("WARNING", logger="app.pooler"):
                await pooler.warn_if_unset(engine, SERVER_SETTINGS)
        finally:
            await engine.dispose()
    assert f'ALTER DATABASE "{real}" SET ' in caplog.text
    assert "loomsync_alias" not in caplog.text
