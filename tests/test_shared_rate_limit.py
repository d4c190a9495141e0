"""Shared rate limits (issue 18 item 4, app/ratelimit.py): two real server instances pointed at
one Redis (Debian's redis-server, tests/infra/redis.py) enforce one budget per user; with the
default in-memory storage each enforces its own; a Redis that hangs or goes away lets requests
through (fail open, counted in /metrics), never a 500. Ports 18321-18329 of the i18-pool range."""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from app.config import Settings
from app.ratelimit import BACKOFF
from tests.conftest import TokenFactory
from tests.infra.process import require
from tests.infra.redis import Redis, start_redis
from tests.servers import Server, app_env, uvicorn_server

BUDGET = 10
LIMIT = f"{BUDGET}/minute"
REDIS_PORT = 18321


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[Redis]:
    """A redis-server of this test's own."""
    require("redis-server", "redis-server")
    with start_redis(REDIS_PORT, tmp_path / "redis") as server:
        yield server


@contextlib.contextmanager
def two_servers(env: dict[str, str]) -> Iterator[tuple[Server, Server]]:
    """Two server instances with the same settings, as behind a load balancer."""
    with uvicorn_server(env) as first, uvicorn_server(env) as second:
        yield first, second


async def statuses(servers: tuple[Server, ...], headers: dict[str, str], n: int) -> list[int]:
    """The statuses of ``n`` requests of one user, sent one at a time to the servers in turn."""
    out = []
    clients = [httpx.AsyncClient(base_url=s.base_url, timeout=30) for s in servers]
    try:
        for i in range(n):
            response = await clients[i % len(clients)].get("/api/threads", headers=headers)
            out.append(response.status_code)
    finally:
        await asyncio.gather(*(c.aclose() for c in clients))
    return out


def counter(server: Server, name: str) -> float:
    """A counter's value in the server's /metrics (0 when it was never incremented)."""
    text = httpx.get(f"{server.base_url}/metrics", timeout=10).text
    found = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


async def test_two_instances_share_one_budget_in_redis(
    redis: Redis, database_url: str, settings: Settings, auth: TokenFactory
) -> None:
    """20 requests of one user spread over both instances: the first 10 pass, the rest are 429
    with Retry-After; another user still has a whole budget."""
    env = app_env(
        database_url,
        settings,
        LOOMSYNC_RATE_LIMIT=LIMIT,
        LOOMSYNC_RATE_LIMIT_STORAGE=redis.url,
    )
    with two_servers(env) as servers:
        spent = await statuses(servers, auth("shared-budget-a"), 2 * BUDGET)
        other = await statuses(servers, auth("shared-budget-b"), BUDGET)
        async with httpx.AsyncClient(base_url=servers[1].base_url) as client:
            refused = await client.get("/api/threads", headers=auth("shared-budget-a"))
    assert spent == [200] * BUDGET + [429] * BUDGET
    assert other == [200] * BUDGET
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) >= 1
    assert redis.command("DBSIZE") != b":0"  # the counters are in Redis


async def test_in_memory_storage_keeps_a_budget_per_instance(
    database_url: str, settings: Settings, auth: TokenFactory
) -> None:
    """The default: each instance counts alone, so the same 20 requests all pass."""
    env = app_env(database_url, settings, LOOMSYNC_RATE_LIMIT=LIMIT)
    with two_servers(env) as servers:
        spent = await statuses(servers, auth("memory-budget"), 2 * BUDGET)
    assert spent == [200] * (2 * BUDGET)


async def test_a_hung_or_stopped_redis_fails_open(
    redis: Redis, database_url: str, settings: Settings, auth: TokenFactory
) -> None:
    """Redis paused (answers nothing) or stopped (refuses connections): every request is
    answered 200, the failures are counted and logged; once Redis is back (after the back-off)
    the budget is enforced again."""
    env = app_env(
        database_url,
        settings,
        LOOMSYNC_RATE_LIMIT=LIMIT,
        LOOMSYNC_RATE_LIMIT_STORAGE=redis.url,
    )
    with uvicorn_server(env) as server:
        servers = (server,)
        assert await statuses(servers, auth("failing-a"), 2) == [200, 200]
        redis.pause()
        try:
            hung = await statuses(servers, auth("failing-a"), 2 * BUDGET)
        finally:
            redis.resume()
        assert hung == [200] * (2 * BUDGET)
        assert counter(server, "loomsync_rate_limit_storage_errors_total") >= 1
        assert counter(server, "loomsync_rate_limit_unchecked_total") >= 2 * BUDGET
        # back: a fresh user is limited again once the back-off has passed
        deadline = time.monotonic() + BACKOFF + 30
        back: list[int] = []
        while 429 not in back and time.monotonic() < deadline:
            await asyncio.sleep(1)
            back = await statuses(servers, auth(f"failing-b-{len(back)}"), BUDGET + 1)
        assert back[-1] == 429
        redis.stop()
        gone = await statuses(servers, auth("failing-c"), 3)
        log = server.output()
    assert gone == [200] * 3
    assert "rate-limit storage failed" in log
    assert "Traceback" not in log


def test_the_storage_url_is_checked_at_start_up() -> None:
    """A storage URL the server cannot use is a configuration error naming the setting, and
    never repeats a password."""
    assert Settings(_env_file=None).rate_limit_storage == "memory://"
    for bad in ("redis//localhost", "http://cache:6379", "redis://", "memcached://x:1"):
        with pytest.raises(ValueError, match="LOOMSYNC_RATE_LIMIT_STORAGE"):
            Settings(rate_limit_storage=bad, _env_file=None)
    with pytest.raises(ValueError, match="LOOMSYNC_RATE_LIMIT_STORAGE") as refused:
        Settings(rate_limit_storage="valkey://:hunter2@cache:6379", _env_file=None)
    assert isinstance(refused.value, ValidationError)
    message = refused.value.errors()[0]["msg"]  # what `loomsync-server serve` prints
    assert "valkey://cache:6379" in message
    assert "hunter2" not in message
    good = Settings(rate_limit_storage="redis://:pw@127.0.0.1:6379/2", _env_file=None)
    assert good.rate_limit_storage == "redis://:pw@127.0.0.1:6379/2"
