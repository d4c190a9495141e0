"""Cross-site request forgery checks for every state-changing form (issue 13, item 3).

Two independent checks, both required (OWASP CSRF Prevention Cheat Sheet):

1. **Where the request comes from** (:func:`origin_problem`). A non-``null`` ``Origin`` must
   be this server's origin: ``LOOMSYNC_PUBLIC_URL``'s when set, else the request's own host.
   Pages are served with ``Referrer-Policy: no-referrer``, under which browsers send
   ``Origin: null`` with a form POST even to the same origin (Fetch standard, "append a request
   Origin header"); then the browser's ``Sec-Fetch-Site`` (Fetch Metadata) must say
   ``same-origin``. A request with neither header is refused: every browser that runs these
   pages sends one of them, and a form is not an API.
2. **A token the page carried** (:func:`token_matches`): the session's synchronizer token
   (``web_sessions.csrf_token``) on ``/logout``; before there is a session (``/login``), a
   random value set in an HttpOnly, SameSite=Strict cookie by ``GET /login`` and repeated in
   the form (double submit), so a login can only be completed from the page this browser was
   shown. Each code has a cookie of its own (app/web/signin.py ``login_cookie``), so several
   sign-in pages open at once each keep their form.
"""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from fastapi import Request

from app.config import Settings


def _origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def origin_problem(request: Request) -> str | None:
    """Why this POST may come from another site, as a sentence; None when it comes from a page
    of this server (see the module docstring)."""
    settings: Settings = request.app.state.settings
    origin = request.headers.get("origin")
    if origin is not None and origin != "null":
        if settings.public_url:
            expected = _origin_of(settings.public_url)
            return None if origin.lower() == expected else "The form came from another site."
        host = request.headers.get("host", "")
        sent = urlsplit(origin)
        same = bool(host) and sent.netloc.lower() == host.lower()
        return None if same else "The form came from another site."
    site = request.headers.get("sec-fetch-site")
    if site == "same-origin":
        return None
    if site is None and origin is None:
        return "The request carries neither Origin nor Sec-Fetch-Site; send it from the page."
    return "The form came from another site."


def token_matches(expected: str | None, given: str | None) -> bool:
    """True when ``given`` equals the non-empty ``expected`` (constant time)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(
        expected.encode("utf-8", "surrogatepass"), given.encode("utf-8", "surrogatepass")
    )


def is_https(request: Request) -> bool:
    """True when pages are served over HTTPS: the request's scheme (uvicorn applies
    ``X-Forwarded-Proto`` from trusted proxies) or ``LOOMSYNC_PUBLIC_URL``'s."""
    settings: Settings = request.app.state.settings
    if settings.public_url and settings.public_url.lower().startswith("https://"):
        return True
    return request.url.scheme == "https"


def base_url(request: Request) -> str:
    """The server's public base URL, no trailing slash: ``LOOMSYNC_PUBLIC_URL``, else the
    request's own (scheme and host)."""
    settings: Settings = request.app.state.settings
    if settings.public_url:
        return settings.public_url.rstrip("/")
    return str(request.base_url).rstrip("/")
