"""Response models of ``GET /api/audit``."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

#: What an event records. ``thread.fork`` names the thread that was copied (the new thread's id
#: is ``details.fork``); ``thread.visibility`` and ``thread.support_sharing`` give ``details.from``
#: and ``details.to``; ``thread.secrets_redacted`` and ``thread.secrets_rejected`` (issue 12 item
#: 4, ``LOOMSYNC_SECRET_SCAN``) give ``details.kinds`` ({kind: count}), ``details.message_indexes``
#: and ``details.fields`` (top-level fields outside the messages), never a value.
#: ``share_link.create`` gives ``details.link`` (the link id) and ``details.expires_at`` (null:
#: never); ``share_link.revoke`` gives ``details.link`` and ``details.reason`` (``revoked``, or
#: ``thread_deleted`` for the links a thread's deletion revoked); ``share_link.use`` (issue 13:
#: every use) gives ``details.link``, ``details.via`` (``api``: ``GET /api/shared/{secret}``;
#: ``page``: the viewer at ``/s/{secret}``; ``page_json``: that URL asked for JSON;
#: ``fragment``: a piece of that page, ``/s/{secret}/messages``, ``/m/{seq}[/body|/raw]``),
#: ``details.use_count`` (this use included) and ``details.user_agent`` (cut to 200
#: characters), never the secret; its actor is whoever opened the link, ``actor_id`` null when
#: anonymous.
AuditAction = Literal[
    "thread.create",
    "thread.delete",
    "thread.visibility",
    "thread.support_sharing",
    "thread.fork",
    "thread.secrets_redacted",
    "thread.secrets_rejected",
    "share_link.create",
    "share_link.revoke",
    "share_link.use",
]
AUDIT_ACTIONS: tuple[str, ...] = get_args(AuditAction)


class AuditEvent(BaseModel):
    """One audited action: who (``actor_*``), what (``action``, ``details``), which thread, when
    (``occurred_at``, the write's transaction time) and from where (``client_ip``)."""

    id: str
    occurred_at: str
    actor_id: str | None = Field(description="The user; null for an anonymous share-link use")
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
