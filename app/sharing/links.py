"""Opening a share link: from the secret in its URL to the thread it opens (API.md section 1).

The viewer page (``/s/{secret}``) and the JSON route (``GET /api/shared/{secret}``) both go
through these two calls, in this order::

    link = await resolve(session, secret)                  # NotFound / LinkGone
    await record_use(session, link, audit, via="page")     # counts, audits, commits; LinkGone
    ...read thread link.thread_id (app/threads/reads.load_row, render_row)...

:func:`resolve` only reads; :func:`record_use` writes and commits, so the session has no open
transaction afterwards and the thread can be read in a snapshot of its own
(:func:`app.threads.reads.begin_snapshot`). A link opens its thread whatever the thread's
visibility: holding the secret is the access (API.md section 1); the thread's access rules
(app/threads/access.py) are not consulted.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import and_, exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit import repository as audit_log
from app.audit.context import AuditContext
from app.errors import Gone, NotFound
from app.secrettokens import secret_hash
from app.sharing.tables import share_links
from app.threads.tables import threads

#: What :func:`app.secrettokens.new_secret` makes: 256 random bits (the issue asks for at least
#: 128) as 43 URL-safe base64 characters.
SECRET_PATTERN = "^[A-Za-z0-9_-]{43}$"
_SECRET = re.compile(SECRET_PATTERN)
#: How much of a ``User-Agent`` a use's audit event keeps.
USER_AGENT_CHARS = 200

#: Where a use came from (the audit event's ``details.via``).
Via = Literal["api", "page", "page_json", "fragment"]
#: Why a link no longer opens its thread (:attr:`LinkGone.reason`).
GoneReason = Literal["revoked", "expired", "thread_deleted"]

_GONE_DETAIL: dict[GoneReason, str] = {
    "revoked": "This share link was revoked.",
    "expired": "This share link has expired.",
    "thread_deleted": "The shared thread was deleted.",
}


class LinkGone(Gone):
    """410: the link exists but opens nothing any more; ``reason`` says why (``revoked``,
    ``expired``, ``thread_deleted``), for a page that wants to tell the reader."""

    def __init__(self, reason: GoneReason) -> None:
        super().__init__(_GONE_DETAIL[reason])
        self.reason: GoneReason = reason


@dataclass(frozen=True, slots=True)
class LiveLink:
    """A share link that opened its thread when it was resolved.

    ``id`` (the link id, as listed and revoked), ``thread_id`` (the thread's UUID; its
    ``T-`` form is ``loomsync.core.document.ids.ThreadId.from_uuid(thread_id)``), ``created_by`` (user id),
    ``created_at``, ``expires_at`` (aware UTC; None: never) and ``use_count`` before this use.
    """

    id: uuid.UUID
    thread_id: uuid.UUID
    created_by: str
    created_at: datetime
    expires_at: datetime | None
    use_count: int


def is_secret(text: str) -> bool:
    """True when ``text`` has the shape of a secret :func:`app.secrettokens.new_secret` makes. Anything else
    names no link (and is never hashed or looked up)."""
    return _SECRET.fullmatch(text) is not None


def _expired() -> Any:
    return and_(share_links.c.expires_at.is_not(None), share_links.c.expires_at <= func.now())


async def resolve(session: AsyncSession, secret: str) -> LiveLink:
    """The live link whose URL holds ``secret``; one indexed lookup, no write.

    Expiry is judged by the database clock (the one that set ``expires_at``).

    Raises:
        NotFound: ``secret`` is malformed or names no link (404, ``not_found``).
        LinkGone: the link was revoked, has expired, or its thread was deleted (410, ``gone``).
    """
    if not is_secret(secret):
        raise NotFound("No such share link.")
    row = (
        await session.execute(
            select(
                share_links.c.id,
                share_links.c.thread_id,
                share_links.c.created_by,
                share_links.c.created_at,
                share_links.c.expires_at,
                share_links.c.use_count,
                share_links.c.revoked_at,
                _expired().label("expired"),
                threads.c.deleted_at,
                threads.c.id.label("thread_exists"),
            )
            .select_from(share_links.outerjoin(threads, threads.c.id == share_links.c.thread_id))
            .where(share_links.c.secret_hash == secret_hash(secret))
        )
    ).first()
    if row is None:
        raise NotFound("No such share link.")
    if row.thread_exists is None or row.deleted_at is not None:
        raise LinkGone("thread_deleted")  # first: its deletion revoked the link too
    if row.revoked_at is not None:
        raise LinkGone("revoked")
    if row.expired:
        raise LinkGone("expired")
    return LiveLink(
        id=row.id,
        thread_id=row.thread_id,
        created_by=row.created_by,
        created_at=row.created_at,
        expires_at=row.expires_at,
        use_count=row.use_count,
    )


async def record_use(
    session: AsyncSession,
    link: LiveLink,
    audit: AuditContext,
    *,
    via: Via,
    user_agent: str | None = None,
) -> int:
    """Count one use of ``link`` (``use_count + 1``, ``last_used_at = now()``) and audit it
    (``share_link.use``: actor ``audit.principal``, which may be anonymous; details ``link``,
    ``via``, ``use_count``, ``user_agent`` cut to :data:`USER_AGENT_CHARS`), then commit.

    The count is one ``UPDATE … WHERE`` the link is still live, so a link revoked (or a thread
    deleted) after :func:`resolve` is not used: that raises LinkGone and records nothing.
    ``audit`` is what ``app.audit.context.get_audit_context(request, principal)`` returns; a
    page passes its ``WebPrincipal``. Call it once per opening of the link (the page or the
    JSON), not for the fragments a page loads afterwards.

    Returns:
        The link's use count, this use included.

    Raises:
        LinkGone: the link stopped being live since :func:`resolve` (410).
    """
    live_thread = exists().where(
        threads.c.id == share_links.c.thread_id, threads.c.deleted_at.is_(None)
    )
    count = (
        await session.execute(
            update(share_links)
            .where(
                share_links.c.id == link.id,
                share_links.c.revoked_at.is_(None),
                or_(share_links.c.expires_at.is_(None), share_links.c.expires_at > func.now()),
                live_thread,
            )
            .values(use_count=share_links.c.use_count + 1, last_used_at=func.now())
            .returning(share_links.c.use_count)
        )
    ).scalar()
    if count is None:
        await session.rollback()
        raise await _why_gone(session, link.id)
    await audit_log.record_by_anyone(
        session,
        audit,
        "share_link.use",
        link.thread_id,
        link=str(link.id),
        via=via,
        use_count=count,
        user_agent=user_agent[:USER_AGENT_CHARS] if user_agent else None,
    )
    await session.commit()
    return int(count)


async def _why_gone(session: AsyncSession, link_id: uuid.UUID) -> LinkGone:
    """The LinkGone of a link that :func:`record_use` found no longer live."""
    row = (
        await session.execute(
            select(
                share_links.c.revoked_at,
                _expired().label("expired"),
                threads.c.deleted_at,
            )
            .select_from(share_links.outerjoin(threads, threads.c.id == share_links.c.thread_id))
            .where(share_links.c.id == link_id)
        )
    ).first()
    await session.rollback()
    if row is None or row.deleted_at is not None:
        return LinkGone("thread_deleted")
    if row.revoked_at is not None:
        return LinkGone("revoked")
    if row.expired:
        return LinkGone("expired")
    return LinkGone("thread_deleted")  # its thread row is gone altogether
