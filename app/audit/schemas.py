"""Response models of ``GET /api/audit``."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

#: What an event records. ``thread.fork`` names the thread that was copied (the new thread's id
#: is ``details.fork``); ``thread.visibility`` and ``thread.support_sharing`` give ``details.from``
#: and ``details.to``; ``thread.secrets_redacted`` and ``thread.secrets_rejected`` (issue 12 item
#: 4, ``LOOMSYNC_SECRET_SCAN``) give ``details.kinds`` ({kind: count}), ``details.message_indexes``
#: and ``details.fields`` (top-level fields outside the messages), never a value.
AuditAction = Literal[
    "thread.create",
    "thread.delete",
    "thread.visibility",
    "thread.support_sharing",
    "thread.fork",
    "thread.secrets_redacted",
    "thread.secrets_rejected",
]
AUDIT_ACTIONS: tuple[str, ...] = get_args(AuditAction)


class AuditEvent(BaseModel):
    """One audited write: who (``actor_*``), what (``action``, ``details``), which thread, when
    (``occurred_at``, the write's transaction time) and from where (``client_ip``)."""

    id: str
    occurred_at: str
    actor_id: str
    actor_org: str | None
    actor_roles: list[str]
    action: AuditAction
    thread_id: str
    client_ip: str | None
    request_id: str | None
    details: dict[str, Any] = Field(description="Action-specific facts, e.g. {from, to}")


class AuditPage(BaseModel):
    """Events, newest first; pass ``next_cursor`` back as ``cursor`` for the next page (null: done)."""

    events: list[AuditEvent]
    next_cursor: str | None
