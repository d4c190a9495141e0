"""Clients that stop sending their body, through a real uvicorn process: a client that closes
the connection mid-body is a 499 in the access log and the metrics (never a 500, never a
traceback, nothing stored), and a body that does not arrive in time is a 408 ``request_timeout``
(the client's fault), not the 503 of a slow server (app/middleware.py, docs/operations.md)."""

from __future__ import annotations

import gzip
import json
import re
import uuid
from collections.abc import Iterator

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from tests.servers import Server, app_env, connect, exchange, poll, uvicorn_server

BODY_TIMEOUT = 1.0
#: The whole request's limit: long enough that a 408 can only come from the body timeout.
REQUEST_TIMEOUT = 20.0
PATIENCE = 15.0


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[Server]:
    """A uvicorn process logging at info, with a 1 s body timeout."""
    env = app_env(
        database_url,
        settings,
        LOOMSYNC_LOG_LEVEL="info",
        LOOMSYNC_BODY_TIMEOUT=str(BODY_TIMEOUT),
        LOOMSYNC_REQUEST_TIMEOUT=str(REQUEST_TIMEOUT),
    )
    with uvicorn_server(env) as running:
        yield running


def token(settings: Settings, user: str = "") -> str:
    return create_token(settings, user or f"dropper-{uuid.uuid4().hex[:8]}", org="drop")


def thread_id() -> str:
    return f"T-{uuid.uuid4()}"


def partial(
    settings: Settings,
    target: str,
    request_id: str,
    *,
    method: str = "PUT",
    extra: str = "",
    user: str = "",
) -> bytes:
    """A request head (with a token for ``user``, a new one by default) announcing 100 body
    bytes, and the first 5 of them."""
    return (
        f"{method} {target} HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {token(settings, user)}\r\nContent-Type: application/json\r\n"
        f"X-Request-ID: {request_id}\r\n{extra}Content-Length: 100\r\n\r\n" + '{"id"'
    ).encode()


def lines_with(server: Server, needle: str) -> list[str]:
    """The output's lines holding ``needle``, once there is an access line among them."""

    def found() -> list[str] | None:
        mine = [line for line in server.output().splitlines() if needle in line]
        return mine if any("app.access" in line for line in mine) else None

    if (lines := poll(server.process, found, PATIENCE)) is not None:
        return lines
    pytest.fail(f"no access line holds {needle!r}:\n{server.output()[-3000:]}")


def counted(server: Server, method: str, route: str, status: str) -> float:
    """``loomsync_http_requests_total`` of ``method`` and ``route`` with ``status``."""
    metrics = httpx.get(f"{server.base_url}/metrics", timeout=10).text
    labels = f'method="{method}",route="{route}",status="{status}"'
    match = re.search(rf"loomsync_http_requests_total\{{{re.escape(labels)}\}} (\S+)", metrics)
    return float(match.group(1)) if match else 0.0


def hang_up_mid_body(server: Server, request: bytes, request_id: str) -> str:
    """Send ``request`` and close; return its access line, checking the log has one warning
    line besides it and no traceback."""
    with connect(server.base_url, PATIENCE) as sock:
        sock.sendall(request)
    lines = lines_with(server, request_id)
    output = server.output()
    assert "Traceback" not in output, output[-3000:]
    assert "ClientDisconnect" not in output, output[-3000:]
    (access,) = [line for line in lines if "app.access" in line]
    (note,) = [line for line in lines if "app.access" not in line]
    assert "client disconnected before the response" in note, note
    return access


def test_client_that_disconnects_mid_body_is_499_without_traceback(
    server: Server, settings: Settings
) -> None:
    request_id, tid, route = f"drop-{uuid.uuid4().hex}", thread_id(), "/api/threads/{thread_id}"
    before = counted(server, "PUT", route, "499")
    access = hang_up_mid_body(
        server, partial(settings, f"/api/threads/{tid}", request_id), request_id
    )
    assert f"PUT /api/threads/{tid} 499 " in access, access
    assert counted(server, "PUT", route, "499") == before + 1
    assert counted(server, "PUT", route, "500") == 0
    headers = {"Authorization": f"Bearer {token(settings)}"}
    stored = httpx.get(f"{server.base_url}/api/threads/{tid}", headers=headers, timeout=10)
    assert stored.status_code == 404, stored.text


def test_post_whose_client_hangs_up_stores_nothing_and_its_key_is_free(
    server: Server, settings: Settings
) -> None:
    user, key, request_id = f"poster-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex, uuid.uuid4().hex
    extra = f"Idempotency-Key: {key}\r\n"
    request = partial(settings, "/api/threads", request_id, method="POST", extra=extra, user=user)
    access = hang_up_mid_body(server, request, request_id)
    assert "POST /api/threads 499 " in access, access
    assert counted(server, "POST", "/api/threads", "500") == 0
    with httpx.Client(base_url=server.base_url, timeout=10) as client:
        client.headers["Authorization"] = f"Bearer {token(settings, user)}"
        assert client.get("/api/threads").json()["threads"] == []
        body = {"metadata": {"title": "after a hang-up"}}
        first = client.post("/api/threads", json=body, headers={"Idempotency-Key": key})
        assert first.status_code == 201, first.text
        again = client.post("/api/threads", json=body, headers={"Idempotency-Key": key})
        assert again.json()["id"] == first.json()["id"]


def test_body_that_does_not_arrive_in_time_is_408(server: Server, settings: Settings) -> None:
    request_id, tid = f"slow-{uuid.uuid4().hex}", thread_id()
    answer = exchange(
        server.base_url, partial(settings, f"/api/threads/{tid}", request_id), PATIENCE
    )
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer[:300]
    assert b"content-type: application/problem+json" in head.lower(), head
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (408, "request_timeout")
    assert "LOOMSYNC_BODY_TIMEOUT" in problem["detail"]
    access = [line for line in lines_with(server, request_id) if "app.access" in line]
    assert f"PUT /api/threads/{tid} 408 " in access[0], access
    headers = {"Authorization": f"Bearer {token(settings)}"}
    stored = httpx.get(f"{server.base_url}/api/threads/{tid}", headers=headers, timeout=10)
    assert stored.status_code == 404, stored.text


def test_body_read_past_the_request_timeout_is_408_too(
    database_url: str, settings: Settings
) -> None:
    env = app_env(database_url, settings, LOOMSYNC_REQUEST_TIMEOUT=str(BODY_TIMEOUT))
    with uvicorn_server(env) as running:
        request = partial(settings, f"/api/threads/{thread_id()}", "slow-request")
        answer = exchange(running.base_url, request, PATIENCE)
    assert answer.startswith(b"HTTP/1.1 408 "), answer[:300]
    problem = json.loads(answer.partition(b"\r\n\r\n")[2])
    assert (problem["status"], problem["code"]) == (408, "request_timeout")
    assert "within 1 seconds (LOOMSYNC_REQUEST_TIMEOUT)" in problem["detail"]


@pytest.mark.parametrize("coding", ["gzip", "GZIP", "br", "deflate, gzip"])
def test_a_body_with_a_content_coding_is_415_and_stores_nothing(
    server: Server, settings: Settings, coding: str
) -> None:
    """The server decodes no content coding: a coded body is 415 with ``Accept-Encoding:
    identity`` (RFC 9110 sections 15.5.16, 12.5.3), whether its bytes are coded or (a lying
    client) plain JSON; ``identity`` is the body as it is."""
    headers = {"Authorization": f"Bearer {token(settings)}", "Content-Encoding": coding}
    tid = thread_id()
    plain = json.dumps({"title": "coded"}).encode()
    with httpx.Client(base_url=server.base_url, timeout=30) as client:
        for body in (plain, gzip.compress(plain)):
            response = client.put(f"/api/threads/{tid}", content=body, headers=headers)
            assert response.status_code == 415, response.text
            assert response.headers["accept-encoding"] == "identity"
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["code"] == "unsupported_media_type"
        headers.pop("Content-Encoding")
        assert client.get(f"/api/threads/{tid}", headers=headers).status_code == 404
        identity = {**headers, "Content-Encoding": "identity"}
        stored = client.put(f"/api/threads/{tid}", content=plain, headers=identity)
        assert stored.status_code == 201, stored.text
        bodiless = {**headers, "Content-Encoding": "gzip"}  # no body: nothing to decode
        assert client.get(f"/api/threads/{tid}", headers=bodiless).status_code == 200
