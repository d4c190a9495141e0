"""Security and caching headers on every response (pure ASGI middleware).

Three kinds of answer, told apart by path (:func:`path_kind`):

- **API** (``/api``, ``/health``, ``/metrics``, ``/openapi.json`` and anything that is neither a
  page nor an asset): ``Cache-Control: no-store`` (answers hold private threads and must not be
  kept by shared or browser caches) and a ``Content-Security-Policy`` that allows nothing
  (``default-src 'none'``, no framing).
- **Pages** (app/web: ``/``, ``/t/…``, ``/s/…``, ``/login``, ``/docs``, error pages): the page sets
  its own strict CSP with a per-response nonce and ``no-store`` (app/web/pages.py,
  app/web/docs.py); a page that set none gets the API's, which allow nothing.
- **Assets** (``/static/…``, ``/docs/assets/…``): files the same for everyone, so cacheable:
  ``Cache-Control: public, max-age=600`` (:data:`STATIC_CACHE`; an upgrade's new CSS or script is
  picked up within ten minutes, revalidated by ``ETag``/``Last-Modified`` after that), or what the
  route set (Swagger UI's files live under a versioned path and are ``immutable``). They keep the
  API's CSP: an SVG or HTML file opened directly from ``/static`` runs nothing.

Everywhere: ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (a share link's
secret is in the page's URL) and ``X-Frame-Options: DENY``. A header the route set itself is
left as it is.
"""

from __future__ import annotations

from typing import Literal

from starlette.types import ASGIApp, Message, Receive, Scope, Send

API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
#: Paths (and their sub-paths) of the JSON API and the probes: errors there are problem JSON.
API_PREFIXES = ("/api", "/health", "/metrics", "/openapi.json")
#: Paths under which the app serves files as they are.
ASSET_PREFIXES = ("/static/", "/docs/assets/")
#: How long a browser may use an asset from ``/static`` before revalidating it.
STATIC_CACHE = "public, max-age=600"

_ALWAYS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
_API_ONLY = (
    (b"cache-control", b"no-store"),
    (b"content-security-policy", API_CSP.encode()),
)
#: The headers of an API answer, for answers given before the app (app/protocol.py).
API_HEADERS = _ALWAYS + _API_ONLY
#: The headers of an asset.
ASSET_HEADERS = (
    *_ALWAYS,
    (b"cache-control", STATIC_CACHE.encode()),
    (b"content-security-policy", API_CSP.encode()),
)

PathKind = Literal["api", "asset", "other"]


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


def is_api_path(path: str) -> bool:
    """True for ``/api``, ``/health``, ``/metrics``, ``/openapi.json`` and their sub-paths."""
    return any(_under(path, prefix) for prefix in API_PREFIXES)


def path_kind(path: str) -> PathKind:
    """``"api"`` (the JSON API and probes), ``"asset"`` (static files) or ``"other"`` (pages,
    and paths that match nothing)."""
    if is_api_path(path):
        return "api"
    if path.startswith(ASSET_PREFIXES) or path == "/favicon.ico":
        return "asset"
    return "other"


class SecurityHeadersMiddleware:
    """Adds the headers above to each HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = ASSET_HEADERS if path_kind(scope["path"]) == "asset" else API_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in extra if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
