"""The infra servers start, do what their docstrings say, and stop (ports 18300-18309 of the
i18-pool range)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from tests.infra.pgbouncer import start_pgbouncer, upstream_of
from tests.infra.process import port_open, require
from tests.infra.redis import start_redis

PGBOUNCER_PORT = 18301
REDIS_PORT = 18302


async def test_pgbouncer_shares_server_connections(pg_server: str, tmp_path: Path) -> None:
    """Eight clients in transaction mode run over the pool's two server connections, and the
    connect query ran on each of them."""
    require("pgbouncer", "pgbouncer")
    host, port = upstream_of(pg_server)
    with start_pgbouncer(
        host,
        port,
        PGBOUNCER_PORT,
        tmp_path / "bouncer",
        connect_query="SET application_name = 'via-bouncer'",
    ) as bouncer:
        dsn = bouncer.route(pg_server.replace("+asyncpg", ""))
        clients = [await asyncpg.connect(dsn, statement_cache_size=0) for _ in range(8)]
        try:
            # simple-protocol statements only: the statement cache is not what is tested here
            backends = await asyncio.gather(
                *(c.fetchval("SELECT pg_backend_pid() FROM pg_sleep(0.05)") for c in clients)
            )
            names = {
                await c.fetchval("SELECT current_setting('application_name')") for c in clients
            }
        finally:
            await asyncio.gather(*(c.close() for c in clients))
        assert len(set(backends)) <= 2
        assert names == {"via-bouncer"}
        servers = bouncer.show("SERVERS")
        assert 1 <= len(servers) <= 2
        assert {row["port"] for row in servers} == {str(port)}
    assert not port_open(PGBOUNCER_PORT)


def test_redis_answers_pauses_and_stops(tmp_path: Path) -> None:
    """PING answers; a paused Redis does not; resumed it does again; stopped its port closes."""
    require("redis-server", "redis-server")
    with start_redis(REDIS_PORT, tmp_path / "redis") as redis:
        assert redis.url == f"redis://127.0.0.1:{REDIS_PORT}/0"
        assert redis.command("SET", "k", "v") == b"+OK"
        assert redis.command("DBSIZE") == b":1"
        redis.pause()
        assert not redis.ping()  # times out after 5 s
        redis.resume()
        assert redis.ping()
    assert not port_open(REDIS_PORT)
