"""What one statement and one request cost in CPU on each layer of the stack (explains
bench.writes; no targets).

    .venv/bin/python -m bench.overhead [--no-record]

1. In this process (standard asyncio loop), 2,000 times each: ``SELECT 1`` by asyncpg; the same
   in a transaction; through an SQLAlchemy ``AsyncConnection``; through an ``AsyncSession``;
   one ``AsyncSession`` a request (begin, statement, commit, close), as the API uses them.
2. Against uvicorn with 2 workers and 32 raw HTTP/1.1 clients for 6 s each: ``/health`` (no
   database) and ``/health/ready`` (one ``SELECT 1`` through the engine), as CPU milliseconds a
   request of the client, the server and PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
from sqlalchemy import text
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from app.database import SERVER_SETTINGS
from bench.harness import (
    asyncpg_dsn,
    fresh_database,
    record,
    uvicorn_process,
)
from bench.harness import server_dsn as default_server_dsn
from bench.rawhttp import RawSender
from bench.writes import CpuMeter, drive

DATABASE = "loomsync_bench_overhead"
CALLS = 2_000
SELECT_1 = "SELECT 1"


async def layers(dsn: str) -> list[str]:
    """CPU and wall microseconds a ``SELECT 1`` on each layer (see the module docstring)."""
    engine = create_async_engine(
        "postgresql+asyncpg://" + asyncpg_dsn(dsn).split("://", 1)[1],
        connect_args={"server_settings": SERVER_SETTINGS},
    )
    sessions = async_sessionmaker(engine, expire_on_commit=False)
    conn = await asyncpg.connect(asyncpg_dsn(dsn), server_settings=SERVER_SETTINGS)

    async def asyncpg_statement() -> None:
        await conn.fetchval(SELECT_1)

    async def asyncpg_transaction() -> None:
        async with conn.transaction():
            await conn.fetchval(SELECT_1)

    async def session_per_request() -> None:
        async with sessions() as session:
            await session.execute(text(SELECT_1))
            await session.commit()

    lines = ["layer (SELECT 1, standard asyncio loop) | CPU us   wall us"]
    try:
        async with engine.connect() as connection, sessions() as session:

            async def sqlalchemy_connection() -> None:
                await connection.execute(text(SELECT_1))

            async def sqlalchemy_session() -> None:
                await session.execute(text(SELECT_1))

            cases: list[Callable[[], Awaitable[Any]]] = [
                asyncpg_statement,
                asyncpg_transaction,
                sqlalchemy_connection,
                sqlalchemy_session,
                session_per_request,
            ]
            for case in cases:
                for _ in range(200):
                    await case()
                cpu, wall = time.process_time(), time.perf_counter()
                for _ in range(CALLS):
                    await case()
                cpu_us = (time.process_time() - cpu) / CALLS * 1e6
                wall_us = (time.perf_counter() - wall) / CALLS * 1e6
                lines.append(f"{case.__name__:39} | {cpu_us:6.0f} {wall_us:9.0f}")
    finally:
        await conn.close()
        await engine.dispose()
    return lines


async def endpoints(base: str, server_pid: int, clients: int = 32) -> list[str]:
    """Rate and CPU ms a request of ``/health`` and ``/health/ready``."""
    lines = [
        "endpoint (2 workers, 32 raw clients) | req/s | CPU ms a request: client server postgres"
    ]
    for path in ("/health", "/health/ready"):
        senders = [RawSender(base, {}) for _ in range(clients)]

        def get(sender: RawSender, path: str = path) -> Callable[[], Awaitable[None]]:
            async def run() -> None:
                status, body = await sender.send("GET", path, b"", {})
                if status != 200:
                    raise RuntimeError(f"{path} answered {status}: {body[:200]!r}")

            return run

        rate = await drive([get(s) for s in senders], 6.0, CpuMeter(server_pid))
        for sender in senders:
            await sender.close()
        cpu = "  ".join(
            f"{rate.cpu[p] / rate.count * 1000:6.3f}" for p in ("client", "server", "postgres")
        )
        lines.append(f"{path:36} | {rate.per_second:5.0f} | {cpu}")
    return lines


def main() -> None:
    """Recreate the database, measure both parts, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    server_dsn = default_server_dsn()
    dsn = fresh_database(server_dsn, DATABASE)
    lines = asyncio.run(layers(dsn))
    with uvicorn_process(dsn, workers=2) as (base, _secret, process):
        lines += asyncio.run(endpoints(base, process.pid))
    print("\n".join(lines))
    if not args.no_record:
        record(
            "Per-layer overhead (explains issue 7 item 3)",
            "python -m bench.overhead " + " ".join(sys.argv[1:]),
            lines,
        )


if __name__ == "__main__":
    main()
