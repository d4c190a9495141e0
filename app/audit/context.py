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


def audit_context(request: Request, principal: Principal) -> AuditContext:
    """The :class:`AuditContext` of ``request`` made by ``principal``: the API's bearer caller
    (:func:`get_audit_context`) or a page's session holder (app/web/shared.py)."""
    return AuditContext(
        principal=principal,
        client_ip=request.client.host if request.client else None,
        request_id=request.scope.get("state", {}).get("request_id"),
    )


async def get_audit_context(request: Request, principal: CurrentPrincipal) -> AuditContext:
    """FastAPI dependency: the :class:`AuditContext` of this request (bearer caller)."""
    return audit_context(request, principal)


AuditDep = Annotated[AuditContext, Depends(get_audit_context)]
