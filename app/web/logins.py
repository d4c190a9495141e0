"""Every SQL statement of browser sign-in (issue 13): one-time login codes and web sessions.

A login code is minted for the holder of a bearer token (``POST /api/login-codes``) or by the
operator (``loomsync-server token login``); it carries the token's identity and expiry. It is
exchanged once (:func:`redeem_code`: one ``UPDATE … WHERE used_at IS NULL … RETURNING``, so two
exchanges racing for one code cannot both win) for a session that ends with the token
(:func:`open_session`). Only SHA-256 hashes of codes and cookies are stored
(:func:`app.secrettokens.new_secret` makes both); each is 256 random bits.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.secrettokens import new_secret, secret_hash
from app.web.tables import login_codes, web_sessions

#: The latest instant a session may end: ``exp`` claims past year 9999 are clamped to it.
LATEST = datetime(9999, 12, 31, tzinfo=UTC)
#: Longest code or cookie value looked up; anything longer was not issued here.
MAX_SECRET_CHARS = 128


@dataclass(frozen=True, slots=True)
class LoginCode:
    """A minted code: the secret (shown once), when it stops working, the identity it opens."""

    code: str
    expires_at: datetime
    principal: Principal


@dataclass(frozen=True, slots=True)
class PendingLogin:
    """A live code as ``GET /login`` shows it: whose identity, until when the session would
    last."""

    principal: Principal
    session_expires_at: datetime


@dataclass(frozen=True, slots=True)
class OpenedSession:
    """A new session: the cookie value (shown once) and its expiry."""

    cookie: str
    expires_at: datetime


def token_expiry(exp: int) -> datetime:
    """A token's ``exp`` (seconds since the epoch) as an aware UTC datetime, clamped to
    :data:`LATEST`."""
    if exp >= LATEST.timestamp():
        return LATEST
    return datetime.fromtimestamp(exp, UTC)


def _principal(row: object) -> Principal:
    return Principal(
        user_id=row.user_id,  # type: ignore[attr-defined]
        org_id=row.org_id,  # type: ignore[attr-defined]
        roles=frozenset(row.roles),  # type: ignore[attr-defined]
    )


async def create_code(
    session: AsyncSession, principal: Principal, token_expires_at: datetime, ttl_seconds: float
) -> LoginCode:
    """Store a new one-time code for ``principal`` (expiring after ``ttl_seconds``, never after
    the token) and commit; expired codes are deleted in the same transaction.

    Raises:
        ValueError: an anonymous principal (codes are for token holders only).
    """
    if principal.user_id is None:
        raise ValueError("a login code needs a user")
    now = datetime.now(UTC)
    code = new_secret()
    expires_at = min(now + timedelta(seconds=ttl_seconds), token_expires_at)
    await session.execute(delete(login_codes).where(login_codes.c.expires_at < now))
    await session.execute(
        insert(login_codes).values(
            code_hash=code.hash,
            user_id=principal.user_id,
            org_id=principal.org_id,
            roles=sorted(principal.roles),
            token_expires_at=token_expires_at,
            expires_at=expires_at,
        )
    )
    await session.commit()
    return LoginCode(code=code.value, expires_at=expires_at, principal=principal)


def _usable(code: str) -> bool:
    return 0 < len(code) <= MAX_SECRET_CHARS


async def peek_code(session: AsyncSession, code: str) -> PendingLogin | None:
    """The identity a live code (unused, unexpired) would sign in as, without spending it (a
    link prefetcher or unfurler that fetches ``/login`` leaves the code usable); else None."""
    if not _usable(code):
        return None
    row = (
        await session.execute(
            select(login_codes).where(
                login_codes.c.code_hash == secret_hash(code),
                login_codes.c.used_at.is_(None),
                login_codes.c.expires_at > datetime.now(UTC),
            )
        )
    ).first()
    if row is None:
        return None
    return PendingLogin(principal=_principal(row), session_expires_at=row.token_expires_at)


async def redeem_code(session: AsyncSession, code: str) -> PendingLogin | None:
    """Spend a live code (one atomic statement) and return what it opens; None when it is
    unknown, used or expired. Not committed here: :func:`open_session` commits both."""
    if not _usable(code):
        return None
    now = datetime.now(UTC)
    row = (
        await session.execute(
            update(login_codes)
            .where(
                login_codes.c.code_hash == secret_hash(code),
                login_codes.c.used_at.is_(None),
                login_codes.c.expires_at > now,
            )
            .values(used_at=now)
            .returning(
                login_codes.c.user_id,
                login_codes.c.org_id,
                login_codes.c.roles,
                login_codes.c.token_expires_at,
            )
        )
    ).first()
    if row is None:
        return None
    return PendingLogin(principal=_principal(row), session_expires_at=row.token_expires_at)


async def open_session(session: AsyncSession, login: PendingLogin) -> OpenedSession:
    """Store a session for a redeemed code (a fresh cookie value and CSRF token) and commit;
    sessions that ended or expired are deleted in the same transaction."""
    now = datetime.now(UTC)
    cookie = new_secret()
    await session.execute(
        delete(web_sessions).where(
            (web_sessions.c.expires_at < now) | web_sessions.c.ended_at.is_not(None)
        )
    )
    await session.execute(
        insert(web_sessions).values(
            id_hash=cookie.hash,
            user_id=login.principal.user_id,
            org_id=login.principal.org_id,
            roles=sorted(login.principal.roles),
            csrf_token=secrets.token_urlsafe(32),
            expires_at=login.session_expires_at,
        )
    )
    await session.commit()
    return OpenedSession(cookie=cookie.value, expires_at=login.session_expires_at)


async def end_session(session: AsyncSession, cookie: str) -> bool:
    """End the session of ``cookie`` (sets ``ended_at``) and commit; True if one was live."""
    if not _usable(cookie):
        return False
    ended = (
        await session.execute(
            update(web_sessions)
            .where(
                web_sessions.c.id_hash == secret_hash(cookie),
                web_sessions.c.ended_at.is_(None),
            )
            .values(ended_at=datetime.now(UTC))
            .returning(web_sessions.c.id_hash)
        )
    ).first()
    await session.commit()
    return ended is not None
