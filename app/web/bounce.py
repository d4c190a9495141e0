"""Arriving signed in from a link on another site, despite ``SameSite=Strict``.

A browser leaves a ``SameSite=Strict`` cookie out of a navigation that another site started (a
link in a chat app or a mail), so a signed-in person who follows a link to ``/t/{id}`` would
be shown the page as a stranger: a 404 for their own private thread. The usual remedy (as on
GitHub): a second, ``SameSite=Lax`` cookie that holds no secret, only "signed in here"
(:data:`HINT_COOKIE`). When a cross-site navigation to a signed-in page brings the hint and no
session cookie, the answer is a tiny page that loads the same URL again (``<meta
http-equiv="refresh">``, no script); that navigation starts on this site, so the browser sends
the Strict cookie. It happens at most once per arrival: the second request is same-origin.
The session cookie stays Strict, so a page of another site still cannot make a request that
carries it.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.web.session import COOKIE

HINT_COOKIE = "loomsync_signed_in"
#: The pages that show more to a signed-in person.
SIGNED_IN_PAGES = ("/", "/search")
SIGNED_IN_PREFIXES = ("/t/",)
_BOUNCE = (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">'
    '<meta name="referrer" content="no-referrer">'
    '<meta http-equiv="refresh" content="0"><title>loomsync</title></head>'
    "<body><p>Opening…</p></body></html>"
)
_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'; base-uri 'none'",
}


def needs_bounce(scope: Scope) -> bool:
    """True for a GET navigation from another site to a signed-in page that brings the hint
    cookie but not the session cookie."""
    if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD"):
        return False
    path: str = scope["path"]
    if path not in SIGNED_IN_PAGES and not path.startswith(SIGNED_IN_PREFIXES):
        return False
    headers = Headers(scope=scope)
    if headers.get("sec-fetch-mode") != "navigate":
        return False
    if headers.get("sec-fetch-site") not in ("cross-site", "same-site"):
        return False
    cookies = headers.get("cookie", "")
    names = {part.split("=", 1)[0].strip() for part in cookies.split(";")}
    return HINT_COOKIE in names and COOKIE not in names


class SessionBounceMiddleware:
    """Answers :func:`needs_bounce` requests with the reload page; passes the rest on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if needs_bounce(scope):
            await HTMLResponse(_BOUNCE, headers=_HEADERS)(scope, receive, send)
            return
        await self.app(scope, receive, send)
