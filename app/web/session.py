"""Who is looking at a page: the web session behind the ``loomsync_session`` cookie.

Pages only: the API reads bearer tokens (app/auth.py) and ignores this cookie, so a page can be
forged into reading nothing the API would not give the cookie's holder. The cookie holds 256
random bits; the table (app/web/tables.py) holds their SHA-256.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy import select

from app.auth import ANONYMOUS, Principal
from app.secrettokens import secret_hash
from app.web.tables import web_sessions

COOKIE = "loomsync_session"


@dataclass(frozen=True, slots=True)
class WebSession:
    """A live session: its principal, CSRF token and expiry (aware UTC)."""

    principal: Principal
    csrf_token: str
    expires_at: datetime


async def current_session(request: Request) -> WebSession | None:
    """The live session of the request's cookie, or None (no cookie, unknown, ended, expired).

    One primary-key lookup; a request without the cookie costs nothing. The answer is kept on
    ``request.state.web_session`` (``_nav.html`` reads it there), and a second call for the
    same request reuses it."""
    if hasattr(request.state, "web_session"):
        known: WebSession | None = request.state.web_session
        return known
    request.state.web_session = None
    cookie = request.cookies.get(COOKIE)
    if not cookie or len(cookie) > 128:
        return None
    now = datetime.now(UTC)
    async with request.app.state.sessionmaker() as session:
        row = (
            await session.execute(
                select(web_sessions).where(
                    web_sessions.c.id_hash == secret_hash(cookie),
                    web_sessions.c.ended_at.is_(None),
                    web_sessions.c.expires_at > now,
                )
            )
        ).first()
    if row is None:
        return None
    principal = Principal(user_id=row.user_id, org_id=row.org_id, roles=frozenset(row.roles))
    found = WebSession(principal=principal, csrf_token=row.csrf_token, expires_at=row.expires_at)
    request.state.web_session = found
    return found


async def web_principal(request: Request) -> Principal:
    """FastAPI dependency for pages: the session's principal, or ANONYMOUS."""
    found = await current_session(request)
    return found.principal if found is not None else ANONYMOUS


WebSessionDep = Annotated[WebSession | None, Depends(current_session)]
WebPrincipal = Annotated[Principal, Depends(web_principal)]
