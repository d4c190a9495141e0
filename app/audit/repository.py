"""Every SQL statement about the audit trail."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import uuid_utils
from sqlalchemy import ColumnElement, Row, insert, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.context import AuditContext
from app.audit.tables import audit_events


async def record(
    session: AsyncSession,
    context: AuditContext,
    action: str,
    thread_id: uuid.UUID,
    **details: Any,
) -> None:
    """Insert one event into the caller's open transaction; it commits (or rolls back) with the
    write it describes. ``details`` must be JSON-able.

    Raises:
        AssertionError: the principal is anonymous (a bug: writes need a token first).
    """
    if context.principal.user_id is None:
        raise AssertionError("audited writes need an authenticated principal")
    await _insert(session, context, action, thread_id, details)


async def record_by_anyone(
    session: AsyncSession,
    context: AuditContext,
    action: str,
    thread_id: uuid.UUID,
    **details: Any,
) -> None:
    """:func:`record` for an action anyone may take, signed in or not (a share link's use,
    issue 13): an anonymous principal is recorded with ``actor_id`` NULL."""
    await _insert(session, context, action, thread_id, details)


async def _insert(
    session: AsyncSession,
    context: AuditContext,
    action: str,
    thread_id: uuid.UUID,
    details: dict[str, Any],
) -> None:
    principal = context.principal
    await session.execute(
        insert(audit_events).values(
            id=uuid.UUID(str(uuid_utils.uuid7())),
            actor_id=principal.user_id,
            actor_org=principal.org_id,
            actor_roles=sorted(principal.roles),
            action=action,
            thread_id=thread_id,
            client_ip=context.client_ip,
            request_id=context.request_id,
            details=details,
        )
    )


async def list_events(
    session: AsyncSession,
    *,
    after: tuple[datetime, uuid.UUID] | None,
    limit: int,
    thread_id: uuid.UUID | None = None,
    actor_id: str | None = None,
    action: str | None = None,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 events, newest first, keyset-paginated after ``after`` =
    (occurred_at, id) of the previous page's last event, optionally filtered."""
    conditions: list[ColumnElement[bool]] = []
    if thread_id is not None:
        conditions.append(audit_events.c.thread_id == thread_id)
    if actor_id is not None:
        conditions.append(audit_events.c.actor_id == actor_id)
    if action is not None:
        conditions.append(audit_events.c.action == action)
    if after is not None:
        conditions.append(tuple_(audit_events.c.occurred_at, audit_events.c.id) < tuple_(*after))
    stmt = (
        select(audit_events)
        .where(*conditions)
        .order_by(audit_events.c.occurred_at.desc(), audit_events.c.id.desc())
        .limit(limit + 1)
    )
    return list((await session.execute(stmt)).all())
