"""Rendering a page: one Jinja2 environment (autoescaping on), one strict Content-Security-Policy
per response with a fresh nonce, and the headers every page carries.

The policy allows only what the app itself serves (``'self'``) plus scripts and styles carrying
the response's nonce; nothing inline without it, no plugins, no framing, forms posting only to
this origin. Text from a thread is always escaped by the template, or sanitized HTML (see the
renderer) that the policy keeps inert even if sanitizing missed something.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

TEMPLATES = Path(__file__).with_name("templates")
STATIC = Path(__file__).with_name("static")

environment = Environment(
    loader=FileSystemLoader(TEMPLATES),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def page_csp(nonce: str | None) -> str:
    """The Content-Security-Policy of a page whose scripts and styles carry ``nonce`` (None:
    a page, such as ``/docs``, whose scripts and styles are all files of this origin)."""
    own = "'self'" if nonce is None else f"'self' 'nonce-{nonce}'"
    return (
        "default-src 'none'; "
        f"script-src {own}; "
        f"style-src {own}; "
        "img-src 'self' data:; "
        "font-src 'self'; "
        "connect-src 'self'; "
        "form-action 'self'; "
        "frame-ancestors 'none'; "
        "base-uri 'none'"
    )


def page_headers(nonce: str | None) -> dict[str, str]:
    """The headers of every page: its CSP, no caching (pages hold private threads), no referrer
    (a share link's secret is in the page's URL)."""
    return {
        "Content-Security-Policy": page_csp(nonce),
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    }


def render(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    """``template`` rendered with ``context`` (plus ``request`` and ``nonce``) as a page.

    Returns an HTMLResponse with :func:`page_headers`; ``status_code`` as given (404 and 410
    pages are pages too).
    """
    nonce = secrets.token_urlsafe(16)
    html = environment.get_template(template).render(request=request, nonce=nonce, **context)
    return HTMLResponse(html, status_code=status_code, headers=page_headers(nonce))


def notice(request: Request, status: int, heading: str, text: str) -> HTMLResponse:
    """A small page (``notice.html``) that says what happened and what to do, with
    ``status_code`` ``status``: every refusal of the sign-in, home and search pages."""
    return render(request, "notice.html", {"heading": heading, "text": text}, status_code=status)
