"""Application factory: ``create_app(settings, database_url) -> FastAPI``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import TypeAdapter

from app.auth import TokenVerifier
from app.config import Settings
from app.database import head_revision, make_engine, make_sessionmaker
from app.errors import install_handlers
from app.health import router as health_router
from app.middleware import BodyLimitMiddleware, RequestIdMiddleware
from app.threads.router import router as threads_router
from app.threads.schemas import AppendRequest, ConflictProblem, ForkRequest, Problem, ThreadPatch
from loomsync import __version__
from loomsync.model import Thread

_EXTRA_MODELS: tuple[type[Any], ...] = (
    Thread,
    AppendRequest,
    ThreadPatch,
    ForkRequest,
    Problem,
    ConflictProblem,
)
_PROBLEM_422 = {
    "description": "Validation error",
    "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}},
}


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document: body and problem models that routes parse or render themselves are
    registered, and FastAPI's default 422 schema is replaced by problem JSON (API.md §7)."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(
        title=app.title, version=app.version, description=app.description, routes=app.routes
    )
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for model in _EXTRA_MODELS:
        model_schema = TypeAdapter(model).json_schema(ref_template="#/components/schemas/{model}")
        for name, definition in model_schema.pop("$defs", {}).items():
            components.setdefault(name, definition)
        components[model.__name__] = model_schema
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            if "422" in operation.get("responses", {}):
                operation["responses"]["422"] = _PROBLEM_422
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    schema["components"]["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    }
    schema["security"] = [{"bearer": []}, {}]
    app.openapi_schema = schema
    return schema


def create_app(settings: Settings, database_url: str | None = None) -> FastAPI:
    """Build the API for ``settings``; ``database_url`` overrides ``settings.database_url``
    (the embedded server passes its own). The engine opens and closes with the app's lifespan.

    Raises:
        ValueError: no database URL at all.
    """
    url = database_url or settings.async_database_url
    if not url:
        raise ValueError("create_app needs a database URL (LOOMSYNC_DATABASE_URL)")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await app.state.engine.dispose()

    app = FastAPI(
        title="loomsync",
        version=__version__,
        description="Keep, sync and search the conversations of AI coding agents.",
        lifespan=lifespan,
        separate_input_output_schemas=False,
    )
    engine = make_engine(url, settings)
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.verifier = TokenVerifier(settings)
    app.state.head_revision = head_revision()
    install_handlers(app)
    app.include_router(health_router)
    app.include_router(threads_router)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(RequestIdMiddleware)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app
