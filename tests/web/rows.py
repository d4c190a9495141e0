"""Rows the viewer tests need that other work creates through its own routes: a web session
(the sign-in pages make these) and a share link (also already expired or revoked, which the
API cannot make). Written straight into the test database with asyncpg, holding only hashes
as the real code does."""

from __future__ import annotations

import secrets
import uuid
from datetime import UTC, datetime, timedelta

import asyncpg

from app.web.session import COOKIE, secret_hash


def asyncpg_dsn(database_url: str) -> str:
    """The test database URL as asyncpg takes it."""
    return database_url.replace("postgresql+asyncpg://", "postgresql://", 1)


async def insert_session(
    database_url: str, user: str, org: str | None = None, roles: tuple[str, ...] = ()
) -> dict[str, str]:
    """A live web session for ``user``; returns the request headers that carry its cookie."""
    value = secrets.token_urlsafe(32)
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await connection.execute(
            "INSERT INTO web_sessions (id_hash, user_id, org_id, roles, csrf_token, expires_at)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            secret_hash(value),
            user,
            org,
            list(roles),
            secrets.token_urlsafe(16),
            datetime.now(UTC) + timedelta(hours=1),
        )
    finally:
        await connection.close()
    return {"Cookie": f"{COOKIE}={value}"}


async def insert_share_link(
    database_url: str,
    thread_id: str,
    created_by: str,
    *,
    expires_at: datetime | None = None,
    revoked: bool = False,
) -> str:
    """A share link of ``thread_id`` (``T-…``); returns its secret."""
    secret = secrets.token_urlsafe(32)
    connection = await asyncpg.connect(asyncpg_dsn(database_url))
    try:
        await connection.execute(
            "INSERT INTO share_links (thread_id, id, secret_hash, created_by, expires_at,"
            " revoked_at) VALUES ($1, $2, $3, $4, $5, $6)",
            uuid.UUID(thread_id[2:]),
            uuid.uuid4(),
            secret_hash(secret),
            created_by,
            expires_at,
            datetime.now(UTC) if revoked else None,
        )
    finally:
        await connection.close()
    return secret
