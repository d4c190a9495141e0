"""Security headers on every response (pure ASGI middleware).

- ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer`` everywhere;
- ``Cache-Control: no-store`` on everything but the interactive documentation: API answers hold
  private threads and must not be kept by shared or browser caches;
- a ``Content-Security-Policy`` that allows nothing (``default-src 'none'``, no framing): the
  API serves JSON, never pages. The interactive documentation (``/docs``, ``/redoc``) is a page
  that loads its scripts and styles from a CDN, so it gets no CSP from here.

A header the route set itself is left as it is.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})

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


class SecurityHeadersMiddleware:
    """Adds the headers above to each HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = _ALWAYS if scope["path"] in DOCS_PATHS else API_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in extra if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
