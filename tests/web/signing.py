"""Helpers of the sign-in tests: mint a code, sign an httpx client in through /login as a
browser does (Origin of the page, the form's double-submit token)."""

from __future__ import annotations

import re
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')
CSRF_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


async def login_code(
    client: httpx.AsyncClient, headers: dict[str, str], **body: Any
) -> dict[str, Any]:
    """``POST /api/login-codes`` with ``headers`` (a bearer token); the 201 body."""
    response = await client.post("/api/login-codes", headers=headers, json=body or None)
    assert response.status_code == 201, response.text
    data: dict[str, Any] = response.json()
    return data


def code_of(url: str) -> str:
    """The ``code`` query parameter of a login URL."""
    return parse_qs(urlsplit(url).query)["code"][0]


def page_origin(client: httpx.AsyncClient) -> dict[str, str]:
    """The headers a browser's form POST from one of the server's pages carries."""
    return {"Origin": str(client.base_url).rstrip("/"), "Sec-Fetch-Site": "same-origin"}


async def sign_in(client: httpx.AsyncClient, headers: dict[str, str], **body: Any) -> str:
    """Sign ``client`` in as the holder of ``headers``' token; the ``Location`` it lands on."""
    made = await login_code(client, headers, **body)
    page = await client.get(urlsplit(made["url"]).path + "?" + urlsplit(made["url"]).query)
    assert page.status_code == 200, page.text
    token = unescape(FORM_TOKEN.search(page.text).group(1))  # type: ignore[union-attr]
    form = {"code": made["code"], "form_token": token, "next": body.get("next") or "/"}
    done = await client.post("/login", data=form, headers=page_origin(client))
    assert done.status_code == 303, done.text
    return done.headers["location"]


async def login_form(client: httpx.AsyncClient, code: str) -> dict[str, str]:
    """The fields of the sign-in form ``GET /login?code=…`` shows (and sets the cookie of)."""
    page = await client.get("/login", params={"code": code})
    assert page.status_code == 200, page.text
    found = FORM_TOKEN.search(page.text)
    assert found is not None
    return {"code": code, "form_token": unescape(found.group(1))}


def csrf_of(html: str) -> str:
    """The session's CSRF token in a page's sign-out form."""
    found = CSRF_TOKEN.search(html)
    assert found is not None, "no sign-out form on the page"
    return unescape(found.group(1))
