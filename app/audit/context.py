"""Who is writing and from where: the part of an audit event that comes from the request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from app.auth import CurrentPrincipal, Principal


@dataclass(frozen=True, slots=True)
class AuditContext:
    """The caller (``principal``), its address (``client_ip``, as the server saw it: behind a
    proxy, the address uvicorn takes from ``X-Forwarded-For`` of a trusted proxy) and the
    request id."""

    principal: Principal
    client_ip: str | None
    request_id: str | None


async def get_audit_context(request: Request, principal: CurrentPrincipal) -> AuditContext:
    """FastAPI dependency: the :class:`AuditContext` of this request."""
    return AuditContext(
        principal=principal,
        client_ip=request.client.host if request.client else None,
        request_id=request.scope.get("state", {}).get("request_id"),
    )


AuditDep = Annotated[AuditContext, Depends(get_audit_context)]
