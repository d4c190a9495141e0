"""HEAD wherever GET (RFC 9110 section 9.3.2) and trailing-slash redirects that never read the
``Host`` header (app/routes.py), through a real uvicorn process: uvicorn is what drops a HEAD
answer's body and what passes a client's ``Host`` through."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from app.config import Settings
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.servers import app_env, uvicorn_server

HOSTILE_HOST = "evil.example"


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[str]:
    """Base URL of a uvicorn process serving the app."""
    with uvicorn_server(app_env(database_url, settings)) as running:
        yield running.base_url


@pytest.fixture
def http(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


@pytest.fixture
def reader(
    http: httpx.Client, auth: TokenFactory, new_user: Callable[[str], str]
) -> dict[str, Any]:
    """An admin's headers and the id of a thread they own (so that every GET answers 200)."""
    headers = auth(new_user("alice"), roles=("admin",))
    tid = ThreadId.new()
    doc = {"title": "head check", "conversation": {"messages": [{"role": "user", "content": "hi"}]}}
    put = http.put(f"/api/threads/{tid}", json=doc, headers=headers)
    assert put.status_code == 201, put.text
    return {"headers": headers, "thread": tid}


#: Headers a HEAD answer must share with GET's (the others, dates and timings, vary).
SAME_HEADERS = ("etag", "content-type", "content-length", "cache-control", "location")
#: Paths whose GET answer changes between two requests (the metrics count them).
CHANGING = frozenset({"/metrics"})


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/health", 200),
        ("/health/ready", 200),
        ("/api/threads/{thread}", 200),
        ("/api/threads", 200),
        ("/api/threads?limit=1&scope=visible", 200),
        ("/api/threads/search?q=head", 200),
        ("/api/audit", 200),
        ("/metrics", 200),
        ("/docs", 200),
        ("/openapi.json", 200),
        ("/api/threads/T-00000000-0000-7000-8000-000000000000", 404),
        ("/api/threads/search", 422),
        ("/api/threads?limit=0", 422),
    ],
)
def test_head_answers_like_get_without_a_body(
    http: httpx.Client, reader: dict[str, Any], path: str, status: int
) -> None:
    url = path.format(thread=reader["thread"])
    get = http.get(url, headers=reader["headers"])
    assert get.status_code == status, get.text
    head = http.head(url, headers=reader["headers"])
    assert head.status_code == status, head.text
    assert head.content == b""
    for name in SAME_HEADERS:
        if path in CHANGING and name == "content-length":
            assert int(head.headers[name]) > 0
            continue
        assert head.headers.get(name) == get.headers.get(name), name
    assert head.headers["x-request-id"]
    if path == "/api/threads/{thread}":
        assert head.headers["etag"] == '"1"'


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("DELETE", "/health", "GET, HEAD"),
        ("POST", "/health/ready", "GET, HEAD"),
        ("PUT", "/api/threads", "GET, HEAD, POST"),
        ("POST", "/api/threads/{thread}", "DELETE, GET, HEAD, PATCH, PUT"),
        ("PUT", "/api/threads/search", "GET, HEAD"),
        ("PATCH", "/api/audit", "GET, HEAD"),
        ("POST", "/metrics", "GET, HEAD"),
        ("GET", "/api/threads/{thread}/messages", "POST"),
    ],
)
def test_405_allow_lists_head_wherever_get_is(
    http: httpx.Client, reader: dict[str, Any], method: str, path: str, allowed: str
) -> None:
    response = http.request(method, path.format(thread=reader["thread"]), headers=reader["headers"])
    assert response.status_code == 405, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.headers["allow"] == allowed


@pytest.mark.parametrize(
    ("path", "target"),
    [
        ("/api/threads/", "/api/threads"),
        ("/api/threads///", "/api/threads"),
        ("/health/", "/health"),
        ("/health/ready/", "/health/ready"),
        ("/api/threads/?limit=1&scope=visible", "/api/threads?limit=1&scope=visible"),
        ("/api/threads/search/?q=a%20b%0A", "/api/threads/search?q=a%20b%0A"),
        ("/api/audit/", "/api/audit"),
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD", "POST"])
def test_trailing_slash_redirect_is_relative_whatever_host_says(
    http: httpx.Client, server: str, reader: dict[str, Any], method: str, path: str, target: str
) -> None:
    headers = {
        **reader["headers"],
        "Host": HOSTILE_HOST,
        "X-Forwarded-Host": HOSTILE_HOST,
        "X-Forwarded-Proto": "https",
    }
    response = http.request(method, server + path, headers=headers)  # the path exactly as written
    assert response.status_code == 307, response.text
    assert response.headers["location"] == target
    assert HOSTILE_HOST not in response.text
    # the target serves the request (GET, HEAD) or names the methods it serves (POST: 405)
    followed = http.request(method, target, headers=reader["headers"])
    assert followed.status_code in (200, 201, 400, 405, 422), followed.text


@pytest.mark.parametrize("path", ["//health/", "//evil.example/", "/\\evil.example/", "/nowhere/"])
def test_paths_without_a_twin_route_are_404_never_a_redirect(
    http: httpx.Client, server: str, path: str
) -> None:
    response = http.get(server + path, headers={"Host": HOSTILE_HOST})
    assert response.request.url.raw_path.startswith(path[:2].encode())
    assert response.status_code == 404, response.text
    assert "location" not in response.headers
    assert response.headers["content-type"].startswith("application/problem+json")
