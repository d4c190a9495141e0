"""/health and /health/ready (API.md section 6)."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from app.config import Settings
from app.main import create_app
from tests.database import create_database, drop_database


async def test_health_is_ok(client: httpx.AsyncClient) -> None:
    response = await client.get("/health")
    assert response.json() == {"status": "ok"}


async def test_ready_when_schema_is_current(client: httpx.AsyncClient) -> None:
    response = await client.get("/health/ready")
    assert response.status_code == 200
    assert response.json()["status"] == "ready"


async def _ready_status(app: FastAPI) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        try:
            return await c.get("/health/ready")
        finally:
            await app.state.engine.dispose()


async def test_not_ready_on_unmigrated_database(pg_server: str, settings: Settings) -> None:
    url = await create_database(pg_server)
    try:
        response = await _ready_status(create_app(settings, database_url=url))
        assert response.status_code == 503
        assert response.headers["content-type"] == "application/problem+json"
    finally:
        await drop_database(pg_server, url)


async def test_not_ready_when_database_is_unreachable(settings: Settings) -> None:
    # a closed port: a real fault, nothing listens there
    app = create_app(settings, database_url="postgresql://postgres@127.0.0.1:1/none")
    response = await _ready_status(app)
    assert response.status_code == 503


async def test_thread_request_during_outage_is_503_with_retry_after(
    settings: Settings, auth
) -> None:
    app = create_app(settings, database_url="postgresql://postgres@127.0.0.1:1/none")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        response = await c.get("/api/threads", headers=auth("someone"))
    await app.state.engine.dispose()
    assert response.status_code == 503
    assert response.headers["retry-after"]
    assert response.json()["code"] == "unavailable"
