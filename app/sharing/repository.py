"""Every SQL statement that creates, lists and revokes share links (opening one is
app/sharing/links.py).

Only the thread's owner or an admin manages its links (API.md section 4, "write"): another
caller who may read the thread gets 403, one who may not gets 404 (as for a missing thread), a
deleted thread 410. Each write commits before returning, with its audit event in the same
transaction.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import uuid_utils
from sqlalchemy import Row, func, insert, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit import repository as audit_log
from app.audit.context import AuditContext
from app.auth import Principal
from app.errors import Forbidden, Gone, NotFound
from app.secrettokens import new_secret
from app.sharing.tables import share_links
from app.threads.access import can_read, can_write
from app.threads.reads import facts
from app.threads.tables import threads

#: What a listing returns of each link (never its hash).
LISTED = (
    share_links.c.id,
    share_links.c.thread_id,
    share_links.c.created_by,
    share_links.c.created_at,
    share_links.c.expires_at,
    share_links.c.revoked_at,
    share_links.c.last_used_at,
    share_links.c.use_count,
    func.now().label("now"),
)


@dataclass(frozen=True, slots=True)
class CreatedLink:
    """A link just made: its ``id``, the ``secret`` of its URL (shown once, never stored),
    ``created_at`` and ``expires_at`` (None: never expires)."""

    id: uuid.UUID
    secret: str
    created_at: datetime
    expires_at: datetime | None


async def check_manager(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID, *, lock: bool = False
) -> None:
    """Refuse a caller who may not manage the links of ``thread_id``. ``lock``: hold the
    thread's row with ``FOR SHARE`` until the transaction ends, so a concurrent delete waits
    for a link being made (and then revokes it with the others).

    Raises:
        NotFound: no such thread, or the caller may not read it (404).
        Gone: the thread was deleted (410).
        Forbidden: the caller reads the thread but is neither its owner nor an admin (403).
    """
    stmt = select(
        threads.c.owner_id,
        threads.c.org_id,
        threads.c.visibility,
        threads.c.is_shared_with_support,
        threads.c.deleted_at,
    ).where(threads.c.id == thread_id)
    if lock:
        stmt = stmt.with_for_update(read=True)
    row = (await session.execute(stmt)).first()
    if row is None or not can_read(principal, facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone()
    if not can_write(principal, facts(row)):
        raise Forbidden("Only the thread's owner or an admin manages its share links.")


async def create(
    session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID, expires_in: int | None
) -> CreatedLink:
    """Make a link to ``thread_id`` that expires ``expires_in`` seconds from now (by the
    database clock; None: never), audited as ``share_link.create``, and commit.

    Raises:
        NotFound, Gone, Forbidden: as :func:`check_manager`.
    """
    principal = audit.principal
    assert principal.user_id is not None, "routes refuse anonymous callers first"
    await check_manager(session, principal, thread_id, lock=True)
    secret = new_secret()
    link_id = uuid.UUID(str(uuid_utils.uuid7()))
    expires_at = None if expires_in is None else func.now() + timedelta(seconds=expires_in)
    row = (
        await session.execute(
            insert(share_links)
            .values(
                thread_id=thread_id,
                id=link_id,
                secret_hash=secret.hash,
                created_by=principal.user_id,
                expires_at=expires_at,
            )
            .returning(share_links.c.created_at, share_links.c.expires_at)
        )
    ).one()
    await audit_log.record(
        session,
        audit,
        "share_link.create",
        thread_id,
        link=str(link_id),
        expires_at=row.expires_at.isoformat() if row.expires_at else None,
    )
    await session.commit()
    return CreatedLink(link_id, secret.value, row.created_at, row.expires_at)


async def list_links(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    *,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 links of ``thread_id`` (revoked and expired ones too), newest first,
    keyset-paginated after ``after`` = (created_at, id) of the previous page's last link. Each
    row: :data:`LISTED` (``now`` is the database clock, to tell expired links).

    Raises:
        NotFound, Gone, Forbidden: as :func:`check_manager`.
    """
    await check_manager(session, principal, thread_id)
    conditions = [share_links.c.thread_id == thread_id]
    if after is not None:
        conditions.append(tuple_(share_links.c.created_at, share_links.c.id) < tuple_(*after))
    stmt = (
        select(*LISTED)
        .where(*conditions)
        .order_by(share_links.c.created_at.desc(), share_links.c.id.desc())
        .limit(limit + 1)
    )
    return list((await session.execute(stmt)).all())


async def revoke(
    session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID, link_id: uuid.UUID
) -> bool:
    """Revoke link ``link_id`` of ``thread_id`` (``revoked_at = now()``), audited as
    ``share_link.revoke``, and commit. Revoking a revoked link changes nothing (DELETE is
    idempotent, RFC 9110 section 9.2.2) and records no second event.

    Returns:
        True when this call revoked it, False when it was revoked already.

    Raises:
        NotFound, Gone, Forbidden: as :func:`check_manager`; NotFound too when the thread has
            no link ``link_id``.
    """
    await check_manager(session, audit.principal, thread_id)
    revoked = (
        await session.execute(
            update(share_links)
            .where(
                share_links.c.thread_id == thread_id,
                share_links.c.id == link_id,
                share_links.c.revoked_at.is_(None),
            )
            .values(revoked_at=func.now())
            .returning(share_links.c.id)
        )
    ).first()
    if revoked is None:
        known = (
            await session.execute(
                select(share_links.c.id).where(
                    share_links.c.thread_id == thread_id, share_links.c.id == link_id
                )
            )
        ).first()
        await session.rollback()
        if known is None:
            raise NotFound("The thread has no such share link.")
        return False
    await audit_log.record(
        session, audit, "share_link.revoke", thread_id, link=str(link_id), reason="revoked"
    )
    await session.commit()
    return True


async def revoke_all(session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID) -> None:
    """Revoke every live link of ``thread_id`` in the caller's transaction (a thread's deletion
    kills its links), one ``share_link.revoke`` event each with ``reason: thread_deleted``. The
    caller commits."""
    revoked = (
        await session.execute(
            update(share_links)
            .where(share_links.c.thread_id == thread_id, share_links.c.revoked_at.is_(None))
            .values(revoked_at=func.now())
            .returning(share_links.c.id)
        )
    ).scalars()
    for link_id in revoked.all():
        await audit_log.record(
            session,
            audit,
            "share_link.revoke",
            thread_id,
            link=str(link_id),
            reason="thread_deleted",
        )


__all__ = ["CreatedLink", "check_manager", "create", "list_links", "revoke", "revoke_all"]
