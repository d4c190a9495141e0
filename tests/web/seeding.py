"""Rows the browser tests need that only another part of the app would make: a signed-in web
session (the sign-in flow's), a share link and a login code. Written straight to the test
database with the hashes the app looks up (app/web/session.py ``secret_hash``), from a thread
of their own (the browser fixtures keep an event loop running in the test's thread)."""

from __future__ import annotations

import asyncio
import secrets
import uuid
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import asyncpg

from app.web.session import secret_hash
from loomsync.ids import ThreadId
from tests.database import _asyncpg_dsn

T = TypeVar("T")
LIFETIME = timedelta(hours=1)


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion on a fresh event loop in another thread."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _execute(database_url: str, statement: str, *args: Any) -> None:
    conn = await asyncpg.connect(_asyncpg_dsn(database_url))
    try:
        await conn.execute(statement, *args)
    finally:
        await conn.close()


def web_session(database_url: str, user_id: str, org_id: str | None, roles: list[str]) -> str:
    """A live web session for ``user_id``; the cookie value that opens it."""
    cookie = secrets.token_urlsafe(32)
    run(
        _execute(
            database_url,
            "INSERT INTO web_sessions (id_hash, user_id, org_id, roles, csrf_token, expires_at)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            secret_hash(cookie),
            user_id,
            org_id,
            roles,
            secrets.token_urlsafe(32),
            datetime.now(UTC) + LIFETIME,
        )
    )
    return cookie


def share_link(database_url: str, thread_id: str, created_by: str) -> str:
    """A live share link to ``thread_id``; its secret (the ``/s/{secret}`` of its URL)."""
    secret = secrets.token_urlsafe(32)
    run(
        _execute(
            database_url,
            "INSERT INTO share_links (thread_id, id, secret_hash, created_by)"
            " VALUES ($1, $2, $3, $4)",
            ThreadId.parse(thread_id).uuid,
            uuid.uuid4(),
            secret_hash(secret),
            created_by,
        )
    )
    return secret


def login_code(database_url: str, user_id: str, org_id: str | None, roles: list[str]) -> str:
    """An unused login code for ``user_id`` (the ``/login?code=`` of a login URL)."""
    code = secrets.token_urlsafe(32)
    now = datetime.now(UTC)
    run(
        _execute(
            database_url,
            "INSERT INTO login_codes (code_hash, user_id, org_id, roles, token_expires_at,"
            " expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
            secret_hash(code),
            user_id,
            org_id,
            roles,
            now + LIFETIME,
            now + timedelta(minutes=5),
        )
    )
    return code
