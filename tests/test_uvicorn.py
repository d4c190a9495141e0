"""A few checks through a real uvicorn process (STYLE.md "Tests"): auth headers, body limits and
streaming behave differently over real HTTP than through ASGITransport."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory, load_thread, real_threads
from tests.servers import app_env, uvicorn_server

BODY_LIMIT = 1_000_000


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[str]:
    """Base URL of a uvicorn process serving the app, with a 1 MB body limit."""
    env = app_env(database_url, settings, LOOMSYNC_MAX_BODY_BYTES=str(BODY_LIMIT))
    with uvicorn_server(env) as running:
        yield running.base_url


@pytest.fixture
def http(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=60) as client:
        yield client


def assert_problem(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    return body


def test_private_thread_without_token_is_404(
    http: httpx.Client, auth: TokenFactory, new_user: Any
) -> None:
    tid = ThreadId.new()
    put = http.put(
        f"/api/threads/{tid}", json={"visibility": "private"}, headers=auth(new_user("alice"))
    )
    assert put.status_code == 201, put.text
    body = assert_problem(http.get(f"/api/threads/{tid}"), 404)
    assert body["code"] == "not_found"


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer not-a-jwt",
        "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.",
        "Bearer",
        "Basic YWxpY2U6c2VjcmV0",
    ],
)
def test_bad_token_is_401_with_www_authenticate(http: httpx.Client, authorization: str) -> None:
    response = http.get(f"/api/threads/{ThreadId.new()}", headers={"Authorization": authorization})
    body = assert_problem(response, 401)
    assert body["code"] == "unauthorized"
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


def test_token_signed_with_another_secret_is_401(http: httpx.Client) -> None:
    other = Settings(jwt_secret="x" * 64, _env_file=None)
    token = create_token(other, "mallory")
    response = http.get("/api/threads", headers={"Authorization": f"Bearer {token}"})
    assert_problem(response, 401)
    assert response.headers["www-authenticate"] == 'Bearer error="invalid_token"'


def test_body_over_limit_with_content_length_is_413(
    http: httpx.Client, auth: TokenFactory, new_user: Any
) -> None:
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": "x" * BODY_LIMIT}]}}
    body = json.dumps(doc).encode()
    headers = {**auth(new_user("alice")), "Content-Type": "application/json"}
    response = http.put(f"/api/threads/{tid}", content=body, headers=headers)
    assert response.request.headers["content-length"] == str(len(body))
    problem = assert_problem(response, 413)
    assert problem["code"] == "payload_too_large"
    assert response.headers["x-request-id"]
    # answered before routing, and still with the security headers
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"


def test_chunked_body_over_limit_is_413_before_it_is_all_sent(
    http: httpx.Client, auth: TokenFactory, new_user: Any
) -> None:
    headers = {**auth(new_user("alice")), "Content-Type": "application/json"}
    tid = ThreadId.new()
    chunk = b"x" * 65_536
    total_chunks = 1_024  # 64 MiB: far more than the socket buffers can hold
    sent = 0

    def body() -> Iterator[bytes]:
        nonlocal sent
        yield b'{"conversation": {"messages": [{"role": "user", "content": "'
        for _ in range(total_chunks):
            sent += 1
            yield chunk
        yield b'"}]}}'

    response = http.put(f"/api/threads/{tid}", content=body(), headers=headers)
    assert response.request.headers["transfer-encoding"] == "chunked"
    assert_problem(response, 413)
    assert sent < total_chunks, "the server read the whole body before answering"
    with httpx.Client(base_url=str(http.base_url)) as fresh:
        assert fresh.get(f"/api/threads/{tid}", headers=headers).status_code == 404


def test_request_id_is_returned(http: httpx.Client) -> None:
    first = http.get("/health").headers["x-request-id"]
    second = http.get("/health").headers["x-request-id"]
    assert first
    assert first != second


def test_request_id_is_honoured_when_sent(http: httpx.Client) -> None:
    response = http.get(f"/api/threads/{ThreadId.new()}", headers={"X-Request-ID": "req-42.a:b"})
    assert response.status_code == 404
    assert response.headers["x-request-id"] == "req-42.a:b"


def test_unsafe_request_id_is_replaced(http: httpx.Client) -> None:
    unsafe = "evil\tvalue" + "x" * 200
    response = http.get("/health", headers={"X-Request-ID": unsafe})
    assert response.headers["x-request-id"]
    assert response.headers["x-request-id"] != unsafe


def test_real_thread_round_trips(http: httpx.Client, auth: TokenFactory, new_user: Any) -> None:
    path = max(
        (p for p in real_threads() if p.stat().st_size < BODY_LIMIT), key=lambda p: p.stat().st_size
    )
    # A fresh id: thread ids are global, and other tests store this thread under its own.
    doc = {**load_thread(path), "id": ThreadId.new()}
    headers = auth(new_user("alice"))
    put = http.put(f"/api/threads/{doc['id']}", json=doc, headers=headers)
    assert put.status_code == 201, put.text
    got = http.get(f"/api/threads/{doc['id']}", headers=headers)
    assert got.status_code == 200
    assert got.headers["etag"] == '"1"'
    thread = got.json()
    assert thread["conversation"]["messages"] == doc["conversation"]["messages"]
    server_set = {"version", "updated_at", "owner_id", "org_id", "archived_at", "message_count"}
    for key, value in doc.items():
        if key not in server_set:
            assert thread[key] == value, key
    assert thread["message_count"] == len(doc["conversation"]["messages"])
