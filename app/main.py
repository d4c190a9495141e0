"""Application factory: ``create_app(settings, database_url) -> FastAPI``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from app import pooler
from app.audit.router import router as audit_router
from app.auth import TokenVerifier
from app.config import Settings
from app.database import SERVER_SETTINGS, head_revision, make_engine, make_sessionmaker
from app.errors import install_handlers
from app.headers import SecurityHeadersMiddleware
from app.health import router as health_router
from app.metrics import Metrics, MetricsMiddleware
from app.metrics import router as metrics_router
from app.middleware import (
    BodyLimitMiddleware,
    ErrorBoundaryMiddleware,
    RequestIdMiddleware,
    TimeoutMiddleware,
)
from app.openapi import build_openapi
from app.provenance.router import router as provenance_router
from app.ratelimit import RateLimiter, enforce_rate_limit, make_storage
from app.replicas.routing import make_reads
from app.routes import redirect_slashes_relatively
from app.sharing.router import router as sharing_router
from app.threads.collection import router as collection_router
from app.threads.cursors import CursorCodec
from app.threads.router import router as threads_router
from app.threads.scanning import SecretScan
from app.usage.router import router as usage_router
from app.web.errors import PageErrorMiddleware
from app.web.routes import include_web
from loomsync.core.secrets import default_redactor
from loomsync.core.version import __version__

log = logging.getLogger(__name__)


def create_app(settings: Settings, database_url: str | None = None) -> FastAPI:
    """Build the API for ``settings``; ``database_url`` overrides ``settings.database_url``
    (the embedded server passes its own). The engine opens and closes with the app's lifespan.

    Middleware, outermost first: request id (and its logging context), metrics and the access
    log, security headers, error pages for page requests (app/web/errors.py), the request and
    body time limits, the 500 boundary (and clients that disconnect), the body limit.

    Raises:
        ValueError: no database URL at all.
    """
    url = database_url or settings.async_database_url
    if not url:
        raise ValueError("create_app needs a database URL (LOOMSYNC_DATABASE_URL)")

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.db_pooler != "none":
            await pooler.warn_if_unset(app.state.engine, SERVER_SETTINGS)
        limiter = app.state.rate_limiter
        if limiter is not None and not await limiter.check():
            log.warning(
                "the rate-limit storage (LOOMSYNC_RATE_LIMIT_STORAGE) does not answer; requests"
                " go through unchecked until it does"
            )
        app.state.reads.start()  # the replica probe: gauges are true before the first read
        yield
        await app.state.reads.close()
        await app.state.engine.dispose()

    app = FastAPI(
        title="loomsync",
        version=__version__,
        description="Keep, sync and search the conversations of AI coding agents.",
        lifespan=lifespan,
        separate_input_output_schemas=False,
        # /docs is served by app/web/docs.py (Swagger UI from this app, no CDN); no ReDoc
        docs_url=None,
        redoc_url=None,
        swagger_ui_oauth2_redirect_url=None,
    )
    engine = make_engine(url, settings)
    app.state.settings = settings
    app.state.engine = engine
    app.state.sessionmaker = make_sessionmaker(engine)
    app.state.verifier = TokenVerifier(settings)
    app.state.cursors = CursorCodec(settings)
    app.state.head_revision = head_revision()
    app.state.metrics = Metrics(engine)
    app.state.rate_limiter = (
        RateLimiter(
            settings.rate_limit,
            make_storage(settings.rate_limit_storage),
            app.state.metrics.rate_limit_storage_errors,
            app.state.metrics.rate_limit_unchecked,
        )
        if settings.rate_limit_enabled
        else None
    )
    app.state.reads = make_reads(
        settings, engine, app.state.sessionmaker, app.state.metrics.registry
    )
    app.state.secret_scan = SecretScan(
        settings.secret_scan, default_redactor(), app.state.metrics.secrets
    )
    install_handlers(app)
    limited = [Depends(enforce_rate_limit)]
    # the hot writes' router first: a request is matched route by route, twice (FastAPI's
    # nested routers), and no route of the others serves a method and path of its routes
    app.include_router(threads_router, dependencies=limited)
    app.include_router(health_router)
    app.include_router(collection_router, dependencies=limited)
    app.include_router(audit_router, dependencies=limited)
    app.include_router(sharing_router, dependencies=limited)
    app.include_router(provenance_router, dependencies=limited)
    app.include_router(usage_router, dependencies=limited)
    if settings.metrics:
        app.include_router(metrics_router)
    include_web(app)
    redirect_slashes_relatively(app.router)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(ErrorBoundaryMiddleware)
    app.add_middleware(
        TimeoutMiddleware,
        seconds=settings.request_timeout,
        body_seconds=settings.body_timeout,
    )
    app.add_middleware(PageErrorMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics, routes=app.router.routes)
    app.add_middleware(RequestIdMiddleware)
    app.openapi = lambda: build_openapi(app)  # type: ignore[method-assign]
    return app
