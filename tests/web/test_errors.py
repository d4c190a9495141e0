"""Errors on pages are HTML pages, errors of the API stay problem JSON (app/web/errors.py),
through a real uvicorn (plain ``def`` tests: the browser fixtures' sync playwright keeps an
event loop running, so async tests after them in a run cannot start one)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from app.config import Settings
from app.errors import PROBLEM_JSON
from app.main import create_app
from tests.conftest import TokenFactory
from tests.servers import Server
from tests.web import rows

HOSTILE = "<script>alert(1)</script>"


@pytest.fixture
def http(web_server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=web_server.base_url, timeout=30) as client:
        yield client


def assert_error_page(response: httpx.Response, status: int) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["cache-control"] == "no-store"
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self' 'nonce-" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-request-id"]
    assert "www-authenticate" not in response.headers
    assert f'<h1 id="error-title">{status} ' in response.text
    assert int(response.headers["content-length"]) == len(response.content)


@pytest.mark.parametrize(
    "path",
    [
        "/no/such/page",
        "/t",  # a page prefix, but no page
        f"/{HOSTILE}",
        "/static/no-such-file.css",
        "/docs/assets/swagger-ui-0/whatever.js",
    ],
)
def test_an_unknown_page_path_is_a_404_page(http: httpx.Client, path: str) -> None:
    response = http.get(path, headers={"Accept": "text/html,*/*;q=0.8"})
    assert_error_page(response, 404)
    assert HOSTILE not in response.text
    assert "Not Found" not in response.text  # the title says it once


@pytest.mark.parametrize("accept", ["", "*/*", "application/json", "text/css,*/*;q=0.1"])
def test_a_client_that_does_not_ask_for_html_gets_problem_json(
    http: httpx.Client, accept: str
) -> None:
    response = http.get("/no/such/page", headers={"Accept": accept})
    assert response.status_code == 404
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.json()["code"] == "not_found"


def test_a_wrong_method_on_a_page_is_a_405_page_with_allow(http: httpx.Client) -> None:
    response = http.post("/docs", headers={"Accept": "text/html"})
    assert_error_page(response, 405)
    assert "GET" in response.headers["allow"]


def test_a_too_large_body_to_a_page_is_a_413_page(http: httpx.Client, settings: Settings) -> None:
    response = http.post(
        "/login", content=b"x" * (settings.max_body_bytes + 1), headers={"Accept": "text/html"}
    )
    assert_error_page(response, 413)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/no-such-route", 404),
        ("/api/threads?limit=0", 422),
        ("/health/nothing", 404),
        ("/openapi.json/x", 404),
    ],
)
def test_the_api_keeps_problem_json_even_for_browsers(
    http: httpx.Client, auth: TokenFactory, path: str, status: int
) -> None:
    response = http.get(path, headers={"Accept": "text/html", **auth("errors-reader")})
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.json()["status"] == status


def test_the_error_page_loads_only_this_origin(http: httpx.Client) -> None:
    response = http.get("/no/such/page", headers={"Accept": "text/html"})
    nonce = re.search(r"'nonce-([^']+)'", response.headers["content-security-policy"])
    assert nonce is not None
    for url in re.findall(r'(?:src|href|action)="([^"]*)"', response.text):
        assert url.startswith("/"), url
        assert not url.startswith("//"), url
    assert "<script>" not in response.text
    assert "<style" not in response.text


Get = Callable[[str, dict[str, str]], httpx.Response]


@pytest.fixture(scope="module")
def crashing(settings: Settings) -> Get:
    """GET from the app with a page route and an API route that fail with a bug, in-process
    (no real server has a route that crashes on purpose), on an event loop of its own."""
    app = create_app(settings)

    async def crash() -> None:
        raise RuntimeError("a bug, with <b>markup</b> in its message")

    app.add_api_route("/crash-page", crash)
    app.add_api_route("/api/crash", crash)

    def get(path: str, headers: dict[str, str]) -> httpx.Response:
        async def one() -> httpx.Response:
            transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
                return await http.get(path, headers=headers)

        return rows.run(one())

    return get


def test_a_crash_on_a_page_is_a_500_page_with_the_request_id(crashing: Get) -> None:
    response = crashing("/crash-page", {"Accept": "text/html", "X-Request-ID": "r-42"})
    assert_error_page(response, 500)
    assert "<code>r-42</code>" in response.text
    assert "a bug" not in response.text  # the exception's text stays in the log


def test_a_crash_in_the_api_stays_problem_json(crashing: Get) -> None:
    response = crashing("/api/crash", {"Accept": "text/html", "X-Request-ID": "r-43"})
    assert response.status_code == 500
    assert response.headers["content-type"] == PROBLEM_JSON
    assert response.json()["request_id"] == "r-43"
