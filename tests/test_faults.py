"""Database faults (API.md section 7): the server keeps serving through a PostgreSQL restart and
through ``pg_terminate_backend`` of its connections. Requests during an outage answer 503 with
``Retry-After`` quickly (never 500, never a hang past the request time limit); the first
requests afterwards succeed, without restarting the server.

Each test runs a uvicorn process against a PostgreSQL cluster of its own (tests/throwaway_pg.py),
since the test stops and disconnects it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from app.database import migrate_async
from loomsync.core.document.ids import ThreadId
from tests.servers import Server, uvicorn_server
from tests.throwaway_pg import ThrowawayPostgres, throwaway_postgres

SECRET = "faults-" + "s" * 40
REQUEST_TIMEOUT = 5.0
TOKEN = create_token(Settings(jwt_secret=SECRET, _env_file=None), "fault-tester", org="faults")
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def cluster() -> Iterator[ThrowawayPostgres]:
    with throwaway_postgres() as pg:
        yield pg


@pytest.fixture(scope="module")
async def migrated(cluster: ThrowawayPostgres) -> str:
    await migrate_async(cluster.url)
    return cluster.url


@pytest.fixture(scope="module")
def server(migrated: str) -> Iterator[Server]:
    env = {
        "LOOMSYNC_DATABASE_URL": migrated,
        "LOOMSYNC_JWT_SECRET": SECRET,
        "LOOMSYNC_REQUEST_TIMEOUT": str(REQUEST_TIMEOUT),
        "LOOMSYNC_DB_CONNECT_TIMEOUT": "2",
        "LOOMSYNC_LOG_LEVEL": "info",
        "LOOMSYNC_LOG_FORMAT": "json",
    }
    with uvicorn_server(env) as running:
        yield running


@pytest.fixture
async def http(server: Server) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
        yield client


async def store_thread(http: httpx.AsyncClient) -> str:
    tid = ThreadId.new()
    body = {"conversation": {"messages": [{"role": "user", "content": "fault tolerance"}]}}
    response = await http.put(f"/api/threads/{tid}", json=body, headers=AUTH)
    assert response.status_code == 201, response.text
    return tid


async def warm_pool(http: httpx.AsyncClient, tid: str, requests: int = 12) -> None:
    """Several concurrent reads, so the pool holds several open connections."""
    responses = await asyncio.gather(
        *(http.get(f"/api/threads/{tid}", headers=AUTH) for _ in range(requests))
    )
    assert {r.status_code for r in responses} == {200}


def assert_unavailable(response: httpx.Response, elapsed: float) -> None:
    assert response.status_code == 503, response.text
    assert int(response.headers["retry-after"]) >= 1
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["code"] == "unavailable"
    assert elapsed < REQUEST_TIMEOUT + 1


async def timed(
    http: httpx.AsyncClient, method: str, url: str, **kwargs: Any
) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await http.request(method, url, **kwargs)
    return response, time.monotonic() - started


async def test_terminated_idle_connections_are_replaced_unseen(
    http: httpx.AsyncClient, cluster: ThrowawayPostgres, server: Server
) -> None:
    tid = await store_thread(http)
    await warm_pool(http, tid)
    assert await cluster.terminate("loomsync") >= 2
    # the checkout hook finds each closed connection and opens a new one: no error at all
    responses = await asyncio.gather(
        *(http.get(f"/api/threads/{tid}", headers=AUTH) for _ in range(12))
    )
    assert [r.status_code for r in responses] == [200] * 12
    assert server.process.poll() is None


async def test_request_whose_connection_is_terminated_mid_query_is_503(
    http: httpx.AsyncClient, cluster: ThrowawayPostgres
) -> None:
    tid = await store_thread(http)
    blocker = await asyncpg.connect(cluster.admin_dsn.replace("/postgres?", "/loomsync?"))
    try:
        transaction = blocker.transaction()
        await transaction.start()
        await blocker.execute(
            "SELECT 1 FROM threads WHERE id = $1 FOR UPDATE", ThreadId.parse(tid).uuid
        )
        # the write waits for the row lock, inside a server connection ...
        write = asyncio.create_task(
            timed(
                http,
                "PATCH",
                f"/api/threads/{tid}",
                json={"metadata": {"title": "x"}},
                headers=AUTH,
            )
        )
        await wait_for_lock_waiter(blocker)
        # ... which is terminated under it
        assert await cluster.terminate("loomsync") >= 1
        response, elapsed = await write
        assert_unavailable(response, elapsed)
        await transaction.rollback()
    finally:
        await blocker.close()
    after = await http.patch(f"/api/threads/{tid}", json={"metadata": {"title": "y"}}, headers=AUTH)
    assert after.status_code == 200, after.text


async def wait_for_lock_waiter(conn: asyncpg.Connection, deadline_seconds: float = 10) -> None:
    """Poll until a loomsync session waits on a lock."""
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        waiting = await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE application_name = 'loomsync' AND wait_event_type = 'Lock'"
        )
        if waiting:
            return
        await asyncio.sleep(0.02)  # a poll interval, not a wait for the outcome
    pytest.fail("the write never waited on the lock")


async def test_server_keeps_serving_through_a_postgres_restart(
    http: httpx.AsyncClient, cluster: ThrowawayPostgres, server: Server
) -> None:
    tid = await store_thread(http)
    await warm_pool(http, tid)
    pid = server.process.pid

    await asyncio.to_thread(cluster.stop)
    try:
        for method, url, kwargs in [
            ("GET", f"/api/threads/{tid}", {}),
            ("GET", "/api/threads", {}),
            ("PUT", f"/api/threads/{ThreadId.new()}", {"json": {}}),
            ("GET", "/api/threads/search?q=fault", {}),
        ]:
            response, elapsed = await timed(http, method, url, headers=AUTH, **kwargs)
            assert_unavailable(response, elapsed)
        assert (await http.get("/health")).status_code == 200
        ready = await http.get("/health/ready")
        assert ready.status_code == 503
        assert ready.headers["retry-after"]
    finally:
        await asyncio.to_thread(cluster.start)

    # the very first requests after the restart succeed: dead pooled connections are replaced
    responses = await asyncio.gather(
        *(http.get(f"/api/threads/{tid}", headers=AUTH) for _ in range(12))
    )
    assert [r.status_code for r in responses] == [200] * 12
    write = await http.patch(
        f"/api/threads/{tid}", json={"metadata": {"title": "after"}}, headers=AUTH
    )
    assert write.status_code == 200, write.text
    assert (await http.get("/health/ready")).status_code == 200
    assert server.process.pid == pid
    assert server.process.poll() is None


def test_outage_is_logged_as_warnings_never_as_errors(server: Server) -> None:
    """After the faults above: 503s were logged with their request ids, nothing as a 500."""
    lines = server.output().splitlines()
    assert any('"status": 503' in line for line in lines)
    assert not any('"status": 500' in line for line in lines)
    assert "Traceback" not in server.output()
