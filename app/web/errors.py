"""Errors on pages are pages: the problem JSON of an error (API.md section 7) becomes an HTML
page (``templates/error.html``) with the same status when a browser asked for a page.

One pure ASGI middleware does it for every error, whoever raised it: a route's ``NotFound`` or
``Gone`` (app/errors.py handlers), a path no route serves (404), a 405, the body limit's 413,
the time limits' 408/503 and the 500 boundary (app/middleware.py). The API keeps problem JSON:

- paths under ``/api``, ``/health``, ``/metrics`` and ``/openapi.json``
  (:func:`app.headers.is_api_path`) are never touched;
- elsewhere the page is for a request whose ``Accept`` names HTML (``text/html`` or
  ``application/xhtml+xml``), as a browser's navigation does; other clients (``curl``, the
  page's own ``fetch`` of a fragment, ``GET /s/{secret}`` with ``Accept: application/json``)
  keep the problem JSON a program can read.

The page keeps the status and the headers that matter to a browser (``Allow``, ``Retry-After``,
``Connection``), shows the problem's title and detail (escaped: text in a detail may come from
the request) and, for a 5xx, the request id to quote; it carries the strict page CSP and
``Cache-Control: no-store`` of every page (app/web/pages.py). Below 500 the session is looked up
(``current_session``; free without the cookie) so that the site navigation names who is signed
in, as on every other page.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import PROBLEM_JSON
from app.headers import is_api_path
from app.web.pages import render
from app.web.session import current_session

log = logging.getLogger(__name__)

#: Headers of the problem answer a page keeps (the others describe the JSON body, or are the
#: API's bearer challenge).
KEPT_HEADERS = frozenset({b"allow", b"retry-after", b"connection"})


def wants_page(scope: Scope) -> bool:
    """True when an error for this request is to be an HTML page (see the module's text)."""
    if is_api_path(scope["path"]):
        return False
    accept = dict(scope.get("headers", [])).get(b"accept", b"").decode("latin-1").lower()
    return "text/html" in accept or "application/xhtml+xml" in accept


def error_context(status: int, problem: dict[str, Any]) -> dict[str, Any]:
    """What ``error.html`` shows for a problem body ``{title, detail, request_id?}``."""
    title = str(problem.get("title") or "Error")
    detail = str(problem.get("detail") or "")
    return {
        "status": status,
        "title": title,
        "detail": "" if detail.lower() == title.lower() else detail,  # Starlette's "Not Found"
        "request_id": str(problem["request_id"])
        if status >= 500 and "request_id" in problem
        else None,
    }


class PageErrorMiddleware:
    """Turn the problem JSON of a page request into ``templates/error.html``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not wants_page(scope):
            await self.app(scope, receive, send)
            return
        held: Message | None = None
        body = bytearray()

        async def send_pages(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                if headers.get(b"content-type", b"").startswith(PROBLEM_JSON.encode()):
                    held = message
                    return
            elif message["type"] == "http.response.body" and held is not None:
                body.extend(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await self._send_page(scope, held, bytes(body), send)
                return
            await send(message)

        await self.app(scope, receive, send_pages)

    @staticmethod
    async def _send_page(scope: Scope, start: Message, body: bytes, send: Send) -> None:
        status: int = start["status"]
        try:
            problem = json.loads(body)
        except ValueError:
            problem = {}
        if not isinstance(problem, dict):
            problem = {}
        request = Request(scope)
        if status < 500:  # the navigation names who is signed in; a 5xx may be the database's
            try:
                await current_session(request)
            except Exception:  # the error page is shown all the same, without the name
                log.warning("no session lookup for the %s page", status, exc_info=True)
        page = render(request, "error.html", error_context(status, problem), status)
        kept = [(n, v) for n, v in start.get("headers", []) if n.lower() in KEPT_HEADERS]
        await send(
            {"type": "http.response.start", "status": status, "headers": page.raw_headers + kept}
        )
        await send({"type": "http.response.body", "body": page.body})
