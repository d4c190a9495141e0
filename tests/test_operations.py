"""Operations: JSON logs whose every line during a request carries its request id, Prometheus
metrics by route template and status with the pool's state, and docs/operations.md naming every
setting."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.auth import create_token
from app.config import Settings
from app.main import create_app
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.servers import Server, poll, uvicorn_server

OPERATIONS_DOC = Path(__file__).resolve().parents[1] / "docs" / "operations.md"
SECRET = "operations-" + "o" * 40


@pytest.fixture(scope="module")
def json_server() -> Iterator[Server]:
    """uvicorn with JSON logs, its database unreachable (nothing listens on port 1): every API
    request then logs a warning from deep inside the request, then its access line."""
    env = {
        "LOOMSYNC_DATABASE_URL": "postgresql://nobody@127.0.0.1:1/nothing",
        "LOOMSYNC_JWT_SECRET": SECRET,
        "LOOMSYNC_LOG_FORMAT": "json",
        "LOOMSYNC_LOG_LEVEL": "info",
    }
    with uvicorn_server(env, ready_path="/health") as server:
        yield server


def log_lines(
    server: Server, request_id: str, deadline_seconds: float = 10
) -> list[dict[str, Any]]:
    """The server's log as JSON objects, once the access line of ``request_id`` is written."""

    def access_logged() -> list[dict[str, Any]] | None:
        lines = [json.loads(line) for line in server.output().splitlines() if line.strip()]
        logged = any(
            line["logger"] == "app.access" and line["request_id"] == request_id for line in lines
        )
        return lines if logged else None

    if (found := poll(server.process, access_logged, deadline_seconds)) is not None:
        return found
    pytest.fail(f"no access line for {request_id}:\n{server.output()}")


def test_every_log_line_of_a_request_carries_its_request_id(json_server: Server) -> None:
    token = create_token(Settings(jwt_secret=SECRET, _env_file=None), "ops")
    headers = {"Authorization": f"Bearer {token}", "X-Request-ID": "ops-42"}
    response = httpx.get(f"{json_server.base_url}/api/threads", headers=headers, timeout=30)
    assert response.status_code == 503
    assert response.headers["x-request-id"] == "ops-42"
    lines = log_lines(json_server, "ops-42")  # every line parsed as JSON
    mine = [line for line in lines if line["request_id"] == "ops-42"]
    assert {line["logger"] for line in mine} >= {"app.errors", "app.access"}
    warning = next(line for line in mine if line["logger"] == "app.errors")
    assert warning["level"] == "warning"
    access = next(line for line in mine if line["logger"] == "app.access")
    assert access["route"] == "/api/threads"
    assert access["status"] == 503
    assert access["method"] == "GET"
    assert access["duration_ms"] >= 0
    # lines written outside any request (start-up) say so
    assert any(line["request_id"] == "-" for line in lines)
    for line in lines:
        assert set(line) >= {"ts", "level", "logger", "message", "request_id"}


def metric_samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [
        (sample.name, sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    ]


def value(samples: list[tuple[str, dict[str, str], float]], name: str, **labels: str) -> float:
    return sum(v for n, lbl, v in samples if n == name and labels.items() <= lbl.items())


async def test_metrics_count_requests_by_route_template_and_status(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Any, settings: Settings
) -> None:
    me = auth(new_user("metered"))
    tid = ThreadId.new()
    for _ in range(2):
        assert (await client.get(f"/api/threads/{ThreadId.new()}", headers=me)).status_code == 404
    assert (await client.put(f"/api/threads/{tid}", json={}, headers=me)).status_code == 201
    assert (await client.get("/no/such/page")).status_code == 404
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    samples = metric_samples(response.text)
    thread_route = {"route": "/api/threads/{thread_id}"}
    assert (
        value(samples, "loomsync_http_requests_total", method="GET", status="404", **thread_route)
        >= 2
    )
    assert (
        value(samples, "loomsync_http_requests_total", method="PUT", status="201", **thread_route)
        >= 1
    )
    assert value(samples, "loomsync_http_requests_total", route="unmatched", status="404") >= 1
    assert (
        value(samples, "loomsync_http_request_duration_seconds_count", method="PUT", **thread_route)
        >= 1
    )
    assert not any(str(tid) in str(labels) for _, labels, _ in samples)
    assert value(samples, "loomsync_db_pool_size") == settings.db_pool_size
    names = {name for name, _, _ in samples}
    assert {
        "loomsync_db_pool_checked_out",
        "loomsync_db_pool_checked_in",
        "loomsync_db_pool_overflow",
        "loomsync_http_requests_in_progress",
    } <= names


async def test_every_response_says_its_server_time(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Any
) -> None:
    me = auth(new_user("timed"))
    tid = ThreadId.new()
    for response in (
        await client.put(f"/api/threads/{tid}", json={}, headers=me),
        await client.get(f"/api/threads/{ThreadId.new()}", headers=me),
        await client.get("/no/such/page"),
    ):
        match = re.fullmatch(r"app;dur=(\d+\.\d{3})", response.headers["server-timing"])
        assert match, response.headers["server-timing"]
        assert 0 < float(match.group(1)) < 60_000


async def test_metrics_can_be_turned_off(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"metrics": False}))
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            assert (await client.get("/metrics")).status_code == 404
    finally:
        await app.state.engine.dispose()
    assert "/metrics" not in app.openapi()["paths"]


def test_operations_doc_names_every_setting() -> None:
    text = OPERATIONS_DOC.read_text()
    documented = set(re.findall(r"`(LOOMSYNC_[A-Z_]+)`", text))
    settings = {f"LOOMSYNC_{name.upper()}" for name in Settings.model_fields}
    assert settings - documented == set(), "settings missing from docs/operations.md"
    assert documented - settings == set(), "docs/operations.md names settings that do not exist"


async def test_a_bug_is_a_logged_500_problem_with_the_request_id(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    app = create_app(settings)

    async def broken() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/broken", broken)  # a route of this test only: the server has no bug to use
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            response = await client.get("/broken", headers={"X-Request-ID": "bug-1"})
    finally:
        await app.state.engine.dispose()
    assert response.status_code == 500
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["request_id"] == "bug-1"
    assert response.headers["x-request-id"] == "bug-1"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "a bug" not in response.text
    logged = [r for r in caplog.records if r.name == "app.middleware" and r.exc_info]
    assert logged
    assert "RuntimeError" in caplog.text
