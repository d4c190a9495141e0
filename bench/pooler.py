"""What ``LOOMSYNC_DB_POOLER=pgbouncer`` costs (issue 18 item 3): PUT and append throughput of
one server process, straight to PostgreSQL with and without the setting, and through Debian's
PgBouncer in transaction mode with it (tests/infra/pgbouncer.py, port 18330).

The setting turns off the statement caches (asyncpg's and SQLAlchemy's), so every statement is
parsed and planned again; PgBouncer adds a hop. The bench database gets the session settings as
its defaults (``ALTER DATABASE … SET``, docs/operations.md "Behind PgBouncer"). The floor is the same server straight to
PostgreSQL with caches on, measured in the same run. No targets: it reports the shape (and exits
1 only when a request failed).

    .venv/bin/python -m bench.pooler [--quick] [--record]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from app.database import SERVER_SETTINGS
from app.pooler import alter_database_sql, session_defaults
from bench.harness import (
    Section,
    asyncpg_dsn,
    fresh_database,
    percentiles,
    record,
    server_dsn,
    uvicorn_process,
)
from bench.writes import Rate, api_rates
from tests.infra.pgbouncer import start_pgbouncer, upstream_of

DATABASE = "loomsync_bench_pooler"
PGBOUNCER_PORT = 18330
POOL = 4  # PgBouncer's server connections, for the server's 20
CLIENTS = 16
CONFIGS = (
    ("direct", False, "none"),
    ("direct, pooler setting", False, "pgbouncer"),
    ("pgbouncer, pooler setting", True, "pgbouncer"),
)


async def set_session_defaults(dsn: str) -> None:
    """What docs/operations.md "Behind PgBouncer" asks for: the session settings a pooler does
    not pass on become the database's defaults (``ALTER DATABASE … SET``)."""
    database = make_url(dsn).database or DATABASE
    conn = await asyncpg.connect(asyncpg_dsn(dsn))
    try:
        await conn.execute(alter_database_sql(database, session_defaults(SERVER_SETTINGS)))
    finally:
        await conn.close()


def measure(
    dsn: str, via_bouncer: bool, pooler: str, seconds: float, warmup: float
) -> dict[str, Rate]:
    """PUT and append rates of :data:`CLIENTS` raw HTTP writers against one uvicorn worker."""
    with ExitStack() as stack:
        url = dsn
        if via_bouncer:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-pool-")))
            bouncer = stack.enter_context(
                start_pgbouncer(
                    *upstream_of(dsn), PGBOUNCER_PORT, folder / "b", pool_size=POOL
                )
            )  # fmt: skip
            url = bouncer.route(dsn)
        env = {"LOOMSYNC_DB_POOLER": pooler}
        base, secret, process = stack.enter_context(uvicorn_process(url, env=env))
        return asyncio.run(api_rates(base, secret, process.pid, CLIENTS, seconds, True, warmup))


def run(quick: bool) -> Section:
    """All of :data:`CONFIGS` on a fresh ``loomsync_bench_pooler``; the table and no targets."""
    seconds, warmup = (4.0, 1.0) if quick else (12.0, 3.0)
    section = Section(
        f"LOOMSYNC_DB_POOLER (issue 18 item 3): {CLIENTS} raw-HTTP writers, one uvicorn worker,"
        f" {seconds:.0f} s a workload after {warmup:.0f} s of warm-up; PgBouncer 1.18"
        f" transaction mode, default_pool_size {POOL}"
    )
    dsn = fresh_database(server_dsn(), DATABASE)
    asyncio.run(set_session_defaults(dsn))
    rates = {name: measure(dsn, via, pooler, seconds, warmup) for name, via, pooler in CONFIGS}
    floor = rates[CONFIGS[0][0]]
    section.lines.append(
        f"{'workload':8} {'configuration':26} | req/s   p50 ms  p95 ms | of direct"
        " | CPU ms a request: server postgres"
    )
    for workload in ("put", "append"):
        for name, rate in ((n, r[workload]) for n, r in rates.items()):
            p50, p95 = percentiles(rate.latencies)
            share = rate.per_second / floor[workload].per_second
            cpu = "  ".join(
                f"{rate.cpu.get(p, 0.0) / rate.count * 1000:6.2f}" for p in ("server", "postgres")
            )
            section.lines.append(
                f"{workload:8} {name:26} | {rate.per_second:6.0f} {p50:7.1f} {p95:7.1f}"
                f" | {share:9.0%} | {cpu}"
            )
    section.lines.append(
        "postgres CPU: every PostgreSQL process of the machine (other helpers share its 2 cores)"
    )
    return section


def main() -> None:
    """``python -m bench.pooler [--quick] [--record]``: print the table (``--record``: append it
    to bench/RESULTS.md); exit 1 when a request failed (api_rates raises)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="4 s a workload (a smoke test)")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    section = run(args.quick)
    print("\n".join(section.render()))
    if args.record:
        command = "python -m bench.pooler" + (" --quick" if args.quick else "")
        record(section.title, command, section.lines)
    sys.exit(0)


if __name__ == "__main__":
    main()
