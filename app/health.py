"""Liveness and readiness probes (API.md section 6)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from app.database import schema_revision
from app.errors import problem

router = APIRouter(tags=["health"])


@router.get("/health")
async def health() -> dict[str, str]:
    """The process is up (no database call)."""
    return {"status": "ok"}


@router.get(
    "/health/ready", responses={503: {"description": "Database unreachable or schema behind"}}
)
async def ready(request: Request) -> JSONResponse:
    """200 when the database answers and its schema is at the latest migration, else 503."""
    expected: str = request.app.state.head_revision
    try:
        current = await schema_revision(request.app.state.engine)
    except (SQLAlchemyError, OSError) as exc:
        return problem(
            503, f"The database is unreachable: {type(exc).__name__}.", headers={"Retry-After": "2"}
        )
    if current != expected:
        return problem(
            503, f"The schema is at {current}, not {expected}; run `loomsync-server migrate`."
        )
    return JSONResponse({"status": "ready", "schema": current})
