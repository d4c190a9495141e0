"""Liveness and readiness probes (API.md section 6)."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from app.database import schema_revision
from app.errors import RETRY_AFTER_SECONDS, problem
from app.problems import problem_responses
from app.routes import ApiRouter

router = ApiRouter(tags=["health"])
_RETRY = {"Retry-After": str(RETRY_AFTER_SECONDS)}


@router.get("/health")
async def health() -> dict[str, str]:
    """The process is up (no database call)."""
    return {"status": "ok"}


@router.get("/health/ready", responses=problem_responses(503))
async def ready(request: Request) -> JSONResponse:
    """200 when the database answers and its schema is at the latest migration, else 503."""
    expected: str = request.app.state.head_revision
    try:
        current = await schema_revision(request.app.state.engine)
    except (SQLAlchemyError, OSError) as exc:
        return problem(503, f"The database is unreachable: {type(exc).__name__}.", headers=_RETRY)
    if current != expected:
        return problem(
            503,
            f"The schema is at {current}, not {expected}; run `loomsync-server migrate`.",
            headers=_RETRY,
        )
    return JSONResponse({"status": "ready", "schema": current})
