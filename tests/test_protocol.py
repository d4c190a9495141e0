"""Request heads are bounded (app/protocol.py), through a real uvicorn process run as ``serve``
runs it: 431 above ``LOOMSYNC_MAX_HEADER_BYTES`` with the server's memory flat, 408 and a closed
connection for a head that does not arrive within ``LOOMSYNC_HEADER_TIMEOUT``, problem JSON for
what httptools cannot parse, and a ``method`` metric label that stays bounded."""

from __future__ import annotations

import json
import re
import secrets
import select
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import psutil
import pytest

from app.config import Settings
from tests import servers
from tests.servers import Server, app_env, uvicorn_server

HEAD_LIMIT = 16 * 1024
HEAD_TIMEOUT = 1.0
#: How long a test waits for the server to act on a timeout: far more than HEAD_TIMEOUT.
PATIENCE = 15.0
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[Server]:
    """A uvicorn process with a 16 KiB head limit and a 1 s head timeout."""
    env = app_env(
        database_url,
        settings,
        LOOMSYNC_MAX_HEADER_BYTES=str(HEAD_LIMIT),
        LOOMSYNC_HEADER_TIMEOUT=str(HEAD_TIMEOUT),
    )
    with uvicorn_server(env) as running:
        yield running


def exchange(server: Server, request: bytes) -> bytes:
    """What the server answers to ``request`` (bytes as written), until it closes."""
    return servers.exchange(server.base_url, request, PATIENCE)


def status_of(answer: bytes) -> int:
    match = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert match, answer[:200]
    return int(match.group(1))


def problem_of(answer: bytes) -> dict[str, object]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"content-type: application/problem+json" in head.lower(), head
    assert b"x-request-id: " in head.lower(), head
    problem: dict[str, object] = json.loads(body)
    return problem


def head_of_size(size: int, *, close: bool = True) -> bytes:
    """A ``GET /health`` whose head (request line to the blank line, inclusive) is ``size``
    bytes, padded with an ``X-Pad`` field."""
    start = b"GET /health HTTP/1.1\r\nHost: x\r\n" + (b"Connection: close\r\n" if close else b"")
    fixed = len(start) + len(b"X-Pad: \r\n\r\n")
    assert size >= fixed
    return start + b"X-Pad: " + b"a" * (size - fixed) + b"\r\n\r\n"


def test_head_at_the_limit_is_served(server: Server) -> None:
    answer = exchange(server, head_of_size(HEAD_LIMIT))
    assert status_of(answer) == 200, answer[:300]


def test_head_one_byte_over_the_limit_is_431(server: Server) -> None:
    answer = exchange(server, head_of_size(HEAD_LIMIT + 1))
    assert status_of(answer) == 431, answer[:300]
    problem = problem_of(answer)
    assert problem["status"] == 431
    assert problem["code"] == "headers_too_large"
    assert str(HEAD_LIMIT) in str(problem["detail"])


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda: b"X-Big: " + b"a" * (4 * MIB) + b"\r\n", id="one-huge-field"),
        pytest.param(
            lambda: b"".join(b"X-F%07d: %s\r\n" % (i, b"a" * 30) for i in range(100_000)),
            id="many-small-fields",
        ),
        pytest.param(lambda: b"", id="huge-url"),
    ],
)
def test_huge_heads_are_431(server: Server, shape: object) -> None:
    fields = shape()  # type: ignore[operator]
    path = b"/health?" + b"q" * (4 * MIB) if not fields else b"/health"
    answer = exchange(server, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n" + fields + b"\r\n")
    assert status_of(answer) == 431, answer[:300]


def test_many_huge_heads_leave_memory_flat(server: Server) -> None:
    """Eight connections at once each send 16 MiB of small header fields (the shape that grew
    the stock server by over 150 MiB each run); the server's RSS, sampled all along, stays
    within a few MiB of where it started, and stays there."""
    process = psutil.Process(server.process.pid)
    head = b"GET /health HTTP/1.1\r\nHost: x\r\n"
    head += b"".join(b"X-F%07d: %s\r\n" % (i, b"a" * 1000) for i in range(16 * MIB // 1013))
    head += b"\r\n"
    # warm up: the first answer of each kind allocates for good
    assert status_of(exchange(server, head_of_size(HEAD_LIMIT))) == 200
    assert status_of(exchange(server, head_of_size(HEAD_LIMIT + 1))) == 431
    before = process.memory_info().rss
    peak = before
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample)
    sampler.start()
    answers: list[bytes] = []
    clients = [
        threading.Thread(target=lambda: answers.append(exchange(server, head))) for _ in range(8)
    ]
    for client in clients:
        client.start()
    for client in clients:
        client.join()
    done.set()
    sampler.join()
    after = process.memory_info().rss
    assert (peak - before) / MIB < 32, f"peak grew by {(peak - before) / MIB:.1f} MiB"
    assert (after - before) / MIB < 8, f"RSS grew by {(after - before) / MIB:.1f} MiB"
    assert [status_of(a) for a in answers] == [431] * 8


def wait_for_close(sock: socket.socket, dribble: bytes = b"") -> tuple[bytes, float]:
    """Send ``dribble`` one byte every 50 ms (a slowloris) until the server answers or closes;
    return what it sent and the seconds it took. Fails after :data:`PATIENCE` seconds."""
    started = time.monotonic()
    received = b""
    sock.setblocking(False)
    pending = iter(dribble)
    while time.monotonic() - started < PATIENCE:
        readable, _, _ = select.select([sock], [], [], 0.05)
        if readable:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                return received, time.monotonic() - started
            received += chunk
            continue
        byte = next(pending, None)
        if byte is not None:
            try:
                sock.send(bytes([byte]))
            except OSError:
                pass
    pytest.fail(f"the server kept the connection open for {PATIENCE} s (sent {received!r})")


def test_dribbled_head_is_408_and_closed(server: Server) -> None:
    endless = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 100_000
    with servers.connect(server.base_url, PATIENCE) as sock:
        received, _ = wait_for_close(sock, endless)
    assert status_of(received) == 408, received[:300]
    assert problem_of(received)["code"] == "request_timeout"


def test_connection_that_sends_nothing_is_closed(server: Server) -> None:
    with servers.connect(server.base_url, PATIENCE) as sock:
        received, _ = wait_for_close(sock)
    assert received == b""


def test_keep_alive_requests_each_get_the_whole_limit(server: Server) -> None:
    """The limit is per request: on one connection, many heads near the limit are served."""
    with servers.connect(server.base_url, PATIENCE) as sock:
        for _ in range(5):
            sock.sendall(head_of_size(HEAD_LIMIT - 10, close=False))
            answer = b""
            while not re.search(rb"\r\n\r\n\{\"status\":\"ok\"\}", answer):
                chunk = sock.recv(65536)
                assert chunk, answer
                answer += chunk
            assert status_of(answer) == 200


def test_pipelined_heads_each_get_the_whole_limit(server: Server) -> None:
    """Requests sent back to back in one write: the second head, near the limit, is not
    counted with the first."""
    first = head_of_size(200, close=False)
    answer = exchange(server, first + head_of_size(HEAD_LIMIT - 10))
    assert answer.count(b"HTTP/1.1 200 OK") == 2, answer[:500]


def test_pipelined_requests_are_answered_before_the_431(server: Server) -> None:
    first = head_of_size(200, close=False)
    huge = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (2 * MIB) + b"\r\n\r\n"
    answer = exchange(server, first * 3 + huge)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert statuses == [b"200", b"200", b"200", b"431"], answer[:1000]


def test_unparsable_request_is_400_problem_json(server: Server) -> None:
    answer = exchange(server, b"GET /health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n")
    assert status_of(answer) == 400
    assert problem_of(answer)["code"] == "invalid_request"


@pytest.mark.parametrize("method", [f"X{secrets.token_hex(6).upper()}", "PROPFIND", "MKCOL"])
def test_unknown_method_never_becomes_a_metric_label(server: Server, method: str) -> None:
    answer = exchange(
        server, f"{method} /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
    )
    assert status_of(answer) in (400, 405), answer[:300]
    if status_of(answer) == 405:
        assert re.search(rb"(?im)^allow: GET, HEAD\r$", answer), answer[:300]
    metrics = httpx.get(f"{server.base_url}/metrics", timeout=10).text
    assert f'method="{method}"' not in metrics
    if status_of(answer) == 405:
        assert (
            'loomsync_http_requests_total{method="other",route="/health",status="405"}' in metrics
        )
