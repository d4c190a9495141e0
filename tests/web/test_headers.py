"""The headers of each kind of answer (app/headers.py), from a real uvicorn: assets cacheable
and revalidated, pages and API answers never stored, every answer unsniffable and unframable."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from app.headers import API_CSP, STATIC_CACHE
from app.web.pages import STATIC
from tests.servers import Server

ALWAYS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}


@pytest.fixture
def http(web_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server.base_url, timeout=30) as client:
        yield client


@pytest.mark.parametrize("name", sorted(p.name for p in STATIC.iterdir() if p.is_file()))
def test_static_files_are_cacheable_and_revalidated(http: httpx.Client, name: str) -> None:
    first = http.get(f"/static/{name}")
    assert first.status_code == 200
    assert first.headers["cache-control"] == STATIC_CACHE
    assert first.headers["content-security-policy"] == API_CSP  # an SVG opened alone runs nothing
    for header, value in ALWAYS.items():
        assert first.headers[header] == value
    etag = first.headers["etag"]
    again = http.get(f"/static/{name}", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""


@pytest.mark.parametrize(
    ("path", "accept"),
    [
        ("/docs", "text/html"),
        ("/no-such-page", "text/html"),  # the 404 page
        ("/static/no-such-file.js", "text/html"),  # a missing asset is not cached either
        ("/api/threads", "application/json"),
        ("/health", "*/*"),
        ("/openapi.json", "application/json"),
    ],
)
def test_pages_and_api_answers_are_never_stored(http: httpx.Client, path: str, accept: str) -> None:
    response = http.get(path, headers={"Accept": accept})
    assert response.headers["cache-control"] == "no-store", response.status_code
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
    for header, value in ALWAYS.items():
        assert response.headers[header] == value


async def test_favicon_is_served_and_linked_from_every_page(client: httpx.AsyncClient) -> None:
    icon = await client.get("/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg")
    assert (await client.head("/favicon.ico")).status_code == 200
    linked = await client.get("/static/favicon.svg")
    assert linked.status_code == 200
    assert linked.content == icon.content
    assert icon.headers["cache-control"] == linked.headers["cache-control"]
    page = await client.get("/login")
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page.text
