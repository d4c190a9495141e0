"""What a write route of /api/threads needs from its request, as one FastAPI dependency.

FastAPI solves every dependency of a route on each request (looking up its own dependencies,
its cache, calling it): for an append that was 15-18% of the server's CPU (bench.writeprofile,
issue 18 item 1). The settings, the writer check, the audit context and the secret scan are
read from the app's state in one step here, instead of four dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from app.audit.context import AuditContext, audit_context
from app.auth import CurrentPrincipal
from app.config import Settings
from app.errors import Unauthorized
from app.threads.scanning import SecretScan


@dataclass(frozen=True, slots=True)
class WriteContext:
    """A bearer writer's request: the app's ``settings`` and secret ``scan``, and the
    ``audit`` context (caller, address, request id) of the events the write leaves."""

    settings: Settings
    audit: AuditContext
    scan: SecretScan


async def get_write_context(request: Request, principal: CurrentPrincipal) -> WriteContext:
    """FastAPI dependency of the write routes.

    Raises:
        Unauthorized: no bearer token (401 with a bare ``Bearer`` challenge; a bad token was
            refused already by :func:`app.auth.get_principal`).
    """
    if principal.is_anonymous:
        raise Unauthorized("Writes need a bearer token.", token_sent=False)
    state = request.app.state
    return WriteContext(state.settings, audit_context(request, principal), state.secret_scan)


WriteDep = Annotated[WriteContext, Depends(get_write_context)]
