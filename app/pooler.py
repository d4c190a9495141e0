"""What every server connection is opened with, directly or behind PgBouncer in transaction mode
(``LOOMSYNC_DB_POOLER``, issue 18 item 3; docs/operations.md "Behind PgBouncer").

In transaction mode PgBouncer hands a client a server connection for one transaction at a time,
so nothing may outlive a transaction on the server side:

- **Prepared statements.** asyncpg names and caches them per connection (``__asyncpg_stmt_1__``
  …), so behind PgBouncer a cached statement is looked for on another backend ("prepared
  statement … does not exist") or a name is taken twice ("… already exists"). PgBouncer 1.18,
  Debian bookworm's, cannot track them (``max_prepared_statements`` came in 1.21). With
  ``pgbouncer``, asyncpg's cache is off (``statement_cache_size=0``), SQLAlchemy's too
  (``prepared_statement_cache_size=0``), and SQLAlchemy's own prepare uses the *unnamed*
  statement (``prepared_statement_name_func`` returning ``""``): it lives until the next
  statement is parsed, inside the transaction that pins the backend, so nothing is left behind.
  The recipe in SQLAlchemy's docs, a uuid name per statement, leaves statements on the backends
  (asyncpg closes one only after the next is prepared, which for a transaction's last statement
  is in a later transaction, often on another backend): measured, 56-59 named statements on one
  backend after 200 two-statement transactions; with the unnamed statement 0
  (tests/test_pgbouncer.py checks it).
- **Startup parameters.** PgBouncer refuses any but a few (``application_name``,
  ``client_encoding``, ``DateStyle``, ``TimeZone``, ``standard_conforming_strings``):
  "unsupported startup parameter". With ``pgbouncer`` only ``application_name`` is sent; the
  others of :data:`app.database.SERVER_SETTINGS` must be the database's own defaults, set once
  with ``ALTER DATABASE … SET`` (or PgBouncer's per-database ``connect_query``): see
  :func:`missing_settings`, which the server checks at start-up and logs.
- **Session state.** ``SET LOCAL`` / ``set_config(…, true)`` (search, snippets) end with their
  transaction and are fine. The search-vector rebuild's lock is a transaction-level advisory
  lock held by a transaction open for the rebuild (app/threads/reindex.py), so it stays on its
  backend.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

#: ``LOOMSYNC_DB_POOLER``: ``none`` connects straight to PostgreSQL (or a session-mode pooler);
#: ``pgbouncer`` is safe behind PgBouncer (or any pooler) in transaction mode.
Pooler = Literal["none", "pgbouncer"]
#: The startup parameters PgBouncer passes on (its docs, "ignore_startup_parameters"), of those
#: the server sets.
POOLER_STARTUP_PARAMETERS = frozenset({"application_name"})


def connect_args(
    pooler: Pooler, server_settings: Mapping[str, str], timeout: float
) -> dict[str, Any]:
    """The engine's ``connect_args`` for ``pooler``: asyncpg's startup ``server_settings`` (all
    of them directly, only ``application_name`` behind a pooler), the connect ``timeout`` in
    seconds, and behind a pooler no named or cached prepared statement (module docstring)."""
    if pooler == "none":
        return {"server_settings": dict(server_settings), "timeout": timeout}
    startup = {k: v for k, v in server_settings.items() if k in POOLER_STARTUP_PARAMETERS}
    return {
        "server_settings": startup,
        "timeout": timeout,
        "statement_cache_size": 0,
        "prepared_statement_cache_size": 0,
        "prepared_statement_name_func": unnamed_statement,
    }


def unnamed_statement() -> str:
    """SQLAlchemy's ``prepared_statement_name_func``: ``""``, PostgreSQL's unnamed statement."""
    return ""


def session_defaults(server_settings: Mapping[str, str]) -> dict[str, str]:
    """The settings of ``server_settings`` a pooler does not pass on, which the database's
    defaults must carry instead (``ALTER DATABASE … SET``)."""
    return {k: v for k, v in server_settings.items() if k not in POOLER_STARTUP_PARAMETERS}


async def missing_settings(engine: AsyncEngine, wanted: Mapping[str, str]) -> dict[str, str]:
    """``{name: value now}`` of the ``wanted`` settings a new session does not have; empty when
    all are as wanted. One short read-only transaction.

    Raises:
        sqlalchemy.exc.SQLAlchemyError, OSError: the database did not answer.
    """
    names = sorted(wanted)
    async with engine.connect() as conn:
        row = (
            await conn.execute(
                text("SELECT name, setting FROM pg_settings WHERE name = ANY(:names)"),
                {"names": names},
            )
        ).all()
    now = {str(name): str(setting) for name, setting in row}
    return {n: now.get(n, "?") for n in names if now.get(n) != wanted[n]}


def alter_database_sql(database: str, settings: Mapping[str, str]) -> str:
    """The ``ALTER DATABASE "<database>" SET …;`` statements that make ``settings`` the
    database's defaults (what docs/operations.md asks for behind PgBouncer)."""
    name = database.replace('"', '""')
    return " ".join(f"ALTER DATABASE \"{name}\" SET {k} = '{v}';" for k, v in settings.items())


async def _database_name(engine: AsyncEngine) -> str | None:
    """The server's name of the database (``current_database()``): behind PgBouncer the URL's
    may be an alias of it, which ``ALTER DATABASE`` would not find. None when it cannot be read."""
    try:
        async with engine.connect() as conn:
            return str(await conn.scalar(text("SELECT current_database()")))
    except Exception as exc:  # the warning falls back to the URL's name
        log.debug("could not read the database's name: %s", exc)
        return None


async def warn_if_unset(engine: AsyncEngine, server_settings: Mapping[str, str]) -> None:
    """Log a WARNING naming the ``ALTER DATABASE`` to run when the database's defaults lack the
    session settings a pooler does not pass on (searches are slower without them, never
    wrong). A database that does not answer is left to the readiness probe (logged at DEBUG)."""
    wanted = session_defaults(server_settings)
    try:
        missing = await missing_settings(engine, wanted)
    except Exception as exc:  # the probe and the first requests report an unreachable database
        log.debug("could not read the session settings: %s", exc)
        return
    if missing:
        database = await _database_name(engine) or engine.url.database or "loomsync"
        log.warning(
            "LOOMSYNC_DB_POOLER=pgbouncer: the database's defaults lack %s (now %s), which a"
            " pooler does not pass on at connect; run once: %s",
            ", ".join(f"{k}={wanted[k]}" for k in missing),
            ", ".join(f"{k}={v}" for k, v in missing.items()),
            alter_database_sql(database, {k: wanted[k] for k in missing}),
        )
