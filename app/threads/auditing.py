"""Which thread writes leave an audit event, and what the event says (app/audit).

Called inside the write's transaction, before its commit: an event exists exactly when its
write committed.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.audit import repository as audit_log
from app.audit.context import AuditContext
from loomsync.core.document.ids import ThreadId


async def created(
    session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID, visibility: str, shared: bool
) -> None:
    """A new thread (POST, or a PUT that created it)."""
    await audit_log.record(
        session,
        audit,
        "thread.create",
        thread_id,
        visibility=visibility,
        is_shared_with_support=shared,
    )


async def sharing_changed(
    session: AsyncSession,
    audit: AuditContext,
    thread_id: uuid.UUID,
    before: tuple[str, bool],
    after: tuple[str, bool],
) -> None:
    """One event per changed field of (visibility, is_shared_with_support); none if unchanged."""
    if before[0] != after[0]:
        await audit_log.record(
            session, audit, "thread.visibility", thread_id, **{"from": before[0], "to": after[0]}
        )
    if before[1] != after[1]:
        await audit_log.record(
            session,
            audit,
            "thread.support_sharing",
            thread_id,
            **{"from": before[1], "to": after[1]},
        )


def sharing_of(doc: dict[str, Any]) -> tuple[str, bool]:
    """(visibility, is_shared_with_support) of a stored document, with the model's defaults."""
    return str(doc.get("visibility", "private")), bool(doc.get("is_shared_with_support"))


async def forked(
    session: AsyncSession,
    audit: AuditContext,
    source_id: uuid.UUID,
    source_version: int,
    fork_id: uuid.UUID,
    up_to: int,
) -> None:
    """A fork: the event names the thread that was copied; ``details.fork`` the new one."""
    await audit_log.record(
        session,
        audit,
        "thread.fork",
        source_id,
        fork=ThreadId.from_uuid(fork_id),
        source_version=source_version,
        up_to=up_to,
    )


async def secrets_redacted(
    session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID, details: dict[str, Any]
) -> None:
    """Credentials in a stored write were replaced by markers (``LOOMSYNC_SECRET_SCAN=redact``,
    issue 12 item 4). ``details``: :meth:`app.threads.scanning.Scanned.details`, never a value."""
    await audit_log.record(session, audit, "thread.secrets_redacted", thread_id, **details)


async def secrets_rejected(
    session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID, details: dict[str, Any]
) -> None:
    """A write refused for its credentials (``LOOMSYNC_SECRET_SCAN=reject``); committed on its
    own, since the write is not. ``thread_id`` is the thread the write named (a create without
    an id: the id it would have had). ``details`` as for :func:`secrets_redacted`."""
    await audit_log.record(session, audit, "thread.secrets_rejected", thread_id, **details)


async def deleted(session: AsyncSession, audit: AuditContext, thread_id: uuid.UUID) -> None:
    """A soft delete."""
    await audit_log.record(session, audit, "thread.delete", thread_id)
