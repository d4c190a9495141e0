"""Rows the web tests need that another part of the app makes through its own routes: a
signed-in web session (the sign-in pages'), a share link (also already expired or revoked,
which the API cannot make) and a login code. Written straight into the test database with
asyncpg, holding only the hashes the app looks up (:func:`app.secrettokens.new_secret`).

The inserts are coroutines; a browser test (whose thread keeps playwright's event loop running)
runs one with :func:`run`, on a loop of its own in another thread.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Coroutine
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import asyncpg

from app.secrettokens import new_secret
from app.web.session import COOKIE
from loomsync.core.document.ids import ThreadId
from tests.database import _asyncpg_dsn

T = TypeVar("T")
LIFETIME = timedelta(hours=1)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion on a fresh event loop in another thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@asynccontextmanager
async def connect(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """An asyncpg connection to the test database, closed afterwards."""
    connection = await asyncpg.connect(_asyncpg_dsn(database_url))
    try:
        yield connection
    finally:
        await connection.close()


async def _execute(database_url: str, statement: str, *args: Any) -> None:
    async with connect(database_url) as connection:
        await connection.execute(statement, *args)


async def session_cookie(
    database_url: str, user: str, org: str | None = None, roles: tuple[str, ...] = ()
) -> str:
    """A live web session for ``user``; the cookie value that opens it."""
    cookie = new_secret()
    await _execute(
        database_url,
        "INSERT INTO web_sessions (id_hash, user_id, org_id, roles, csrf_token, expires_at)"
        " VALUES ($1, $2, $3, $4, $5, $6)",
        cookie.hash,
        user,
        org,
        list(roles),
        new_secret().value,
        datetime.now(UTC) + LIFETIME,
    )
    return cookie.value


async def insert_session(
    database_url: str, user: str, org: str | None = None, roles: tuple[str, ...] = ()
) -> dict[str, str]:
    """A live web session for ``user``; the request headers that carry its cookie."""
    return {"Cookie": f"{COOKIE}={await session_cookie(database_url, user, org, roles)}"}


async def insert_share_link(
    database_url: str,
    thread_id: str,
    created_by: str,
    *,
    expires_at: datetime | None = None,
    revoked: bool = False,
) -> str:
    """A share link of ``thread_id`` (``T-…``); its secret (the ``/s/{secret}`` of its URL)."""
    secret = new_secret()
    await _execute(
        database_url,
        "INSERT INTO share_links (thread_id, id, secret_hash, created_by, expires_at,"
        " revoked_at) VALUES ($1, $2, $3, $4, $5, $6)",
        ThreadId.parse(thread_id).uuid,
        uuid.uuid4(),
        secret.hash,
        created_by,
        expires_at,
        datetime.now(UTC) if revoked else None,
    )
    return secret.value


async def insert_login_code(
    database_url: str, user: str, org: str | None = None, roles: tuple[str, ...] = ()
) -> str:
    """An unused login code for ``user`` (the ``/login?code=`` of a login URL)."""
    code = new_secret()
    now = datetime.now(UTC)
    await _execute(
        database_url,
        "INSERT INTO login_codes (code_hash, user_id, org_id, roles, token_expires_at,"
        " expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
        code.hash,
        user,
        org,
        list(roles),
        now + LIFETIME,
        now + timedelta(minutes=5),
    )
    return code.value
