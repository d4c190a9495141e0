"""The statements of the two hot writes, an append's claim and a PUT's create, as SQL text built
once at import and run as driver SQL on the session's connection (:func:`first_row`; issue 18
item 1, issue 30 item 7).

Built per request with SQLAlchemy's expression language, these two cost the server more than
PostgreSQL spent running them: building the ``update()``/``insert()`` (``version + 1``,
``in_()``, ``values()``), its cache key, and expanding ``version IN (…)`` for every execution
(a "post-compile" parameter) were 60% of SQLAlchemy's CPU on an append (bench.writeprofile);
run through the session's ORM execution path, even as ``text()``, the ORM's result rows were
most of the rest. Here each is plain SQL with ``$n`` parameters (the asyncpg dialect's
paramstyle, ``numeric_dollar``, so SQLAlchemy passes it to asyncpg as it is), typed by PostgreSQL from the
columns they are compared with or stored in (the values are what the columns' SQLAlchemy types
would pass to asyncpg unchanged: UUIDs, strings, aware datetimes, ints, lists). They say what
:func:`app.threads.repository.claim` and :func:`~app.threads.repository.create_or_replace`
say, for the cases the hot writes take:

- :data:`CLAIM_APPEND`: bump the version, add the appended messages to ``message_count`` and
  set ``last_activity_at`` (the request's, else now), on a live thread the caller may write
  (:func:`app.threads.access.writable`: an admin any, else the owner) whose version matches
  (``If-Match: *`` any; else ``version = ANY($n)``, an empty list matching none, as an
  empty ``IN`` does). Returns what an append uses: the new version and message count and the
  document before the append.
- :data:`INSERT_THREAD`: a create (``ON CONFLICT DO NOTHING RETURNING``), version 1, its
  timestamps the document's (else now), with the document text, vector and derived columns.

They run through SQLAlchemy's public ``AsyncConnection.exec_driver_sql`` on the session's own
connection (:func:`first_row`, :func:`execute`), which keeps what a session statement has: one
transaction with the route's other statements (its commit and rollback cover them), errors as
``sqlalchemy.exc.DBAPIError`` subclasses (``IntegrityError``, ``OperationalError`` …, a lost
or cancelled connection invalidated: the 409/503 handlers of app/errors.py see what they
expect), the engine's ``before_cursor_execute`` listeners (bench/writes.py captures its floor
that way), and asyncpg's prepared-statement cache (``statement_cache_size``, 0 behind
PgBouncer: app/pooler.py). It skips the ORM's execution path and SQL compilation, not the
Core connection: no private part of SQLAlchemy or asyncpg is touched.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.threads.preconditions import Precondition

#: The columns :func:`app.threads.documents.derived_columns` returns, in the statement's order.
DERIVED_COLUMNS = (
    "visibility",
    "is_shared_with_support",
    "title",
    "tags",
    "is_pinned",
    "workspace_root",
    "git_branch",
    "git_remote_url",
    "provider",
    "model",
)
#: What a create returns to render its answer (repository ``_RENDERED``).
RENDERED_COLUMNS = (
    "id",
    "version",
    "created_at",
    "updated_at",
    "last_activity_at",
    "owner_id",
    "org_id",
    "archived_at",
    "message_count",
)


class Rendered(NamedTuple):
    """The columns a create returns to render its answer (:data:`RENDERED_COLUMNS`, in that order)."""

    id: uuid.UUID
    version: int
    created_at: datetime
    updated_at: datetime
    last_activity_at: datetime
    owner_id: str
    org_id: str | None
    archived_at: datetime | None
    message_count: int


class AppendClaim(NamedTuple):
    """What an append's claim returns: the new ``version`` and ``message_count`` and the
    ``document_text`` as it was before the append."""

    version: int
    message_count: int
    document_text: str


def _claim_append(admin: bool, any_version: bool) -> str:
    where = ["id = $1", "deleted_at IS NULL"]
    if not admin:
        where.append("owner_id = $4")
    if not any_version:
        where.append(f"version = ANY(${4 if admin else 5})")
    return (
        "UPDATE threads SET version = version + 1, updated_at = now(),"
        " message_count = message_count + $2,"
        " last_activity_at = COALESCE($3, now())"
        f" WHERE {' AND '.join(where)}"
        " RETURNING version, message_count, CAST(document AS text) AS document_text"
    )


#: ``(admin?, any version?)`` -> the append's claim, driver SQL (:func:`first_row`): ``$1`` id, ``$2`` messages added, ``$3`` activity time (None: now), then
#: the owner (not for an admin) and the base versions (not for ``If-Match: *``).
CLAIM_APPEND = {
    (admin, any_version): _claim_append(admin, any_version)
    for admin in (False, True)
    for any_version in (False, True)
}


def claim_append_params(
    principal: Principal,
    thread_id: Any,
    precondition: Precondition | None,
    added: int,
    last_activity_at: Any,
) -> tuple[str, tuple[Any, ...]]:
    """The claim of an append of ``added`` messages (SQL with ``$n`` parameters) and its
    arguments (``thread_id`` a UUID; ``last_activity_at``: a datetime or None for now).
    ``principal`` is a writer (never anonymous: the route refused those). The row returned
    has ``version``, ``message_count`` (both after the append) and ``document_text``."""
    any_version = precondition is None or precondition.any_version
    args: list[Any] = [thread_id, added, last_activity_at]
    if not principal.is_admin:
        args.append(principal.user_id)
    if not any_version:
        assert precondition is not None
        args.append(sorted(precondition.versions))
    return CLAIM_APPEND[(principal.is_admin, any_version)], tuple(args)


#: The parameters of :data:`INSERT_THREAD`, in their ``$n`` order.
INSERT_THREAD_PARAMS = (
    "id",
    "owner_id",
    "org_id",
    "created_at",
    "last_activity_at",
    "message_count",
    "document",
    "vector",
    "search_version",
    *DERIVED_COLUMNS,
)
_DERIVED_AT = len(INSERT_THREAD_PARAMS) - len(DERIVED_COLUMNS) + 1
INSERT_THREAD = (
    "INSERT INTO threads (id, owner_id, org_id, version, created_at, updated_at,"
    " last_activity_at, message_count, document, search_vector, search_version,"
    f" {', '.join(DERIVED_COLUMNS)})"
    " VALUES ($1, $2, $3, 1, COALESCE($4, now()), now(),"
    " COALESCE($5, now()), $6, CAST(CAST($7 AS text) AS json),"
    " CAST(CAST($8 AS text) AS tsvector), $9,"
    f" {', '.join(f'${_DERIVED_AT + i}' for i in range(len(DERIVED_COLUMNS)))})"
    f" ON CONFLICT (id) DO NOTHING RETURNING {', '.join(RENDERED_COLUMNS)}"
)


def insert_thread_args(params: dict[str, Any]) -> tuple[Any, ...]:
    """:data:`INSERT_THREAD`'s arguments from ``params`` (one value for each name of
    :data:`INSERT_THREAD_PARAMS`; ``created_at``/``last_activity_at`` None for now)."""
    return tuple(params[name] for name in INSERT_THREAD_PARAMS)


async def first_row(session: AsyncSession, sql: str, args: tuple[Any, ...]) -> Sequence[Any] | None:
    """Run ``sql`` (``$n`` parameters ``args``) in ``session``'s transaction (begun if this is
    its first statement) and return its first row, or None (module docstring).

    Raises:
        sqlalchemy.exc.DBAPIError: as a session statement raises it (a subclass per error).
    """
    connection = await session.connection()
    result = await connection.exec_driver_sql(sql, args)
    return result.first()


async def execute(session: AsyncSession, sql: str, args: tuple[Any, ...]) -> None:
    """Run ``sql`` (``$n`` parameters ``args``, no rows returned) in ``session``'s transaction
    (module docstring).

    Raises:
        sqlalchemy.exc.DBAPIError: as a session statement raises it (a subclass per error).
    """
    connection = await session.connection()
    await connection.exec_driver_sql(sql, args)
