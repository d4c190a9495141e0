"""Prometheus metrics (``GET /metrics``) and one access-log line per request.

- ``loomsync_http_requests_total{method, route, status}``: requests answered;
- ``loomsync_http_request_duration_seconds{method, route, status}``: time to the last byte;
- ``loomsync_http_requests_in_progress``: requests being served now;
- ``loomsync_secrets_total{kind, action}``: credentials found in writes
  (``LOOMSYNC_SECRET_SCAN``, app/threads/scanning.py), ``action`` ``redacted`` or ``rejected``;
- ``loomsync_rate_limit_storage_errors_total``, ``loomsync_rate_limit_unchecked_total``: the
  rate-limit storage failing, and requests let through unchecked meanwhile (app/ratelimit.py);
- ``loomsync_db_pool_*``: the connection pool, read at scrape time.

Every response also carries ``Server-Timing: app;dur=<ms>`` (W3C Server Timing): the time from
the request's arrival at the app to the start of its response, in milliseconds, which is what
the benchmarks (bench/README.md) report as server time.

``route`` is the route template (``/api/threads/{thread_id}``), never the raw path, so that
thread ids do not explode the number of series; paths no route matches count as ``unmatched``,
and methods other than :data:`METHODS` as ``other``. A request whose client went away before
its response began counts (and is logged) as status 499 (``CLIENT_CLOSED_REQUEST``), never
as an error of the server's. The access line writes the path as the client sent it
(:func:`app.logs.logged_target`).
Each app has its own registry: the numbers are this process's (docs/operations.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from fastapi import Request, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.logs import logged_target
from app.middleware import CLIENT_CLOSED_REQUEST, client_closed
from app.routes import ApiRouter, template_of

access_log = logging.getLogger("app.access")

#: Paths whose access lines are logged at DEBUG only (probes and scrapes run every few seconds).
QUIET_PATHS = frozenset({"/health", "/health/ready", "/metrics"})
#: Methods counted under their own name. The client picks the method, and each label value is a
#: series Prometheus keeps, so any other method (``PROPFIND``, or any token an HTTP parser lets
#: through) is counted as ``other``.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class PoolCollector(Collector):
    """Gauges of the engine's connection pool, read when Prometheus scrapes."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    def collect(self) -> Iterator[GaugeMetricFamily]:
        """Yield size, checked-out, idle and overflow connection counts."""
        pool: Any = self.engine.sync_engine.pool
        for name, doc, read in (
            ("size", "Configured pool size (LOOMSYNC_DB_POOL_SIZE)", "size"),
            ("checked_out", "Connections in use by requests", "checkedout"),
            ("checked_in", "Idle connections in the pool", "checkedin"),
            (
                "overflow",
                "Connections open beyond the pool size (negative: not yet opened)",
                "overflow",
            ),
        ):
            getter = getattr(pool, read, None)
            if getter is not None:
                yield GaugeMetricFamily(f"loomsync_db_pool_{name}", doc, value=float(getter()))


class Metrics:
    """The metric objects of one app, in a registry of its own."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.registry = CollectorRegistry()
        labels = ("method", "route", "status")
        self.requests = Counter(
            "loomsync_http_requests",
            "HTTP requests answered, by method, route template and status",
            labels,
            registry=self.registry,
        )
        self.latency = Histogram(
            "loomsync_http_request_duration_seconds",
            "Time from the request's arrival to the response's last byte",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.secrets = Counter(
            "loomsync_secrets",
            "Credentials found in writes (LOOMSYNC_SECRET_SCAN), by kind and what was done:"
            " redacted (stored as markers) or rejected (422)",
            ("kind", "action"),
            registry=self.registry,
        )
        self.rate_limit_storage_errors = Counter(
            "loomsync_rate_limit_storage_errors",
            "Calls to the rate-limit storage (LOOMSYNC_RATE_LIMIT_STORAGE) that failed or timed"
            " out; the request went through unchecked (fail open)",
            registry=self.registry,
        )
        self.rate_limit_unchecked = Counter(
            "loomsync_rate_limit_unchecked",
            "Requests let through without a rate-limit check because the storage failed or is"
            " in its back-off after a failure",
            registry=self.registry,
        )
        self.in_progress = Gauge(
            "loomsync_http_requests_in_progress",
            "HTTP requests being served",
            registry=self.registry,
        )
        self.registry.register(PoolCollector(engine))

    def render(self) -> bytes:
        """The text exposition format of every metric."""
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts and times every HTTP request, adds its ``Server-Timing`` header, and writes its
    access-log line."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: list[BaseRoute]) -> None:
        self.app = app
        self.metrics = metrics
        self.routes = routes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def recording_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                elapsed_ms = (time.perf_counter() - started) * 1000
                timing = (b"server-timing", b"app;dur=%.3f" % elapsed_ms)
                message["headers"] = [*message.get("headers", []), timing]
            await send(message)

        self.metrics.in_progress.inc()
        try:
            await self.app(scope, receive, recording_send)
        finally:
            self.metrics.in_progress.dec()
            if client_closed(scope):
                status = CLIENT_CLOSED_REQUEST
            self._record(scope, status, time.perf_counter() - started)

    def _record(self, scope: Scope, status: int, seconds: float) -> None:
        method = scope["method"]
        route = template_of(self.routes, scope) or "unmatched"
        labels = (method if method in METHODS else "other", route, str(status))
        self.metrics.requests.labels(*labels).inc()
        self.metrics.latency.labels(*labels).observe(seconds)
        level = logging.DEBUG if scope["path"] in QUIET_PATHS else logging.INFO
        if not access_log.isEnabledFor(level):
            return  # /health and /metrics at the default level: no line to build
        client = scope.get("client")
        target = logged_target(scope)
        access_log.log(
            level,
            "%s %s %s %.1f ms",
            method,
            target,
            status,
            seconds * 1000,
            extra={
                "method": method,
                "path": target,
                "route": route,
                "status": status,
                "duration_ms": round(seconds * 1000, 3),
                "client": client[0] if client else None,
            },
        )


router = ApiRouter(include_in_schema=False)


@router.get("/metrics")
async def metrics(request: Request) -> Response:
    """Prometheus text exposition of this process's metrics."""
    registry: Metrics = request.app.state.metrics
    return Response(registry.render(), media_type=CONTENT_TYPE_LATEST)
