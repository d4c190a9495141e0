"""HTTP layer of ``GET /api/audit``: the audit trail, for admins."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Query
from fastapi.responses import JSONResponse

from app.audit import repository
from app.audit.schemas import AuditAction, AuditPage
from app.auth import CurrentPrincipal, Principal
from app.database import SessionDep
from app.errors import BadRequest, Forbidden, Unauthorized
from app.openapi import THREAD_ID_PATTERN
from app.problems import problem_responses
from app.routes import ApiRouter
from app.threads.cursors import CursorParam, CursorsDep
from app.times import rfc3339
from loomsync.core.document.ids import InvalidThreadId, ThreadId

router = ApiRouter(prefix="/api/audit", tags=["audit"])


async def _admin(principal: CurrentPrincipal) -> Principal:
    if principal.is_anonymous:
        raise Unauthorized("The audit trail needs a bearer token.", token_sent=False)
    if not principal.is_admin:
        raise Forbidden("The audit trail is for admins (role admin).")
    return principal


Admin = Annotated[Principal, Depends(_admin)]


def _event(row: Any) -> dict[str, Any]:
    return {
        "id": str(row.id),
        "occurred_at": rfc3339(row.occurred_at),
        "actor_id": row.actor_id,
        "actor_org": row.actor_org,
        "actor_roles": list(row.actor_roles),
        "action": row.action,
        "thread_id": ThreadId.from_uuid(row.thread_id),
        "client_ip": row.client_ip,
        "request_id": row.request_id,
        "details": row.details,
    }


@router.get("", response_model=AuditPage, responses=problem_responses(400, 401, 403, 422, 503))
async def list_audit_events(
    session: SessionDep,
    _: Admin,
    signer: CursorsDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: CursorParam = None,
    thread: Annotated[
        str | None,
        Query(
            description="Only this thread's events",
            json_schema_extra={"pattern": THREAD_ID_PATTERN},
        ),
    ] = None,
    actor: Annotated[
        str | None, Query(max_length=1024, description="Only this user's events")
    ] = None,
    action: AuditAction | None = None,
) -> JSONResponse:
    """Audit events, newest first, keyset-paginated; admins only (403 for others)."""
    if actor is not None and "\x00" in actor:
        return JSONResponse({"events": [], "next_cursor": None})  # no user id holds NUL
    thread_id = None
    if thread is not None:
        try:
            thread_id = ThreadId.parse(thread).uuid
        except InvalidThreadId as exc:
            raise BadRequest(f"Not a thread id: {exc}.") from None
    rows = await repository.list_events(
        session,
        after=signer.decode("audit", cursor, datetime, uuid.UUID) if cursor else None,
        limit=limit,
        thread_id=thread_id,
        actor_id=actor,
        action=action,
    )
    page, next_cursor = signer.page("audit", rows, limit, lambda r: (r.occurred_at, r.id))
    return JSONResponse({"events": [_event(r) for r in page], "next_cursor": next_cursor})
