"""The app's own CPU for one append and one PUT, in one process, without HTTP (issue 18 item 1;
no targets): an A/B of write-path changes that the shared cores disturb less than throughput.

    .venv/bin/python -m bench.writecpu [--requests 2000] [--warmup 200] [--only put|append]
                                       [--database NAME]

The ASGI app (app/main.py, every middleware) is called directly with a hand-made HTTP scope,
one request at a time, on the standard asyncio loop: for each workload ``--requests`` requests
after 200 of warm-up, bench/writes.py's very documents (a PUT of a new small thread; an append
of one real turn with ``If-Match``), each its own user's. Reported: this process's CPU
(``time.process_time``: the app, SQLAlchemy, asyncpg and the loop; not uvicorn's HTTP
parsing, not PostgreSQL) and the wall time a request, median of 5 rounds. Run it on two
checkouts at the same time (each with its own ``--database``), so that both meet the same load
from the other processes on the machine, and compare.

Where the machine's speed drifts (this one's did by 30% between identical runs), count
instructions instead of time: the difference of two runs under valgrind, e.g.
``valgrind --tool=callgrind --callgrind-out-file=/dev/null .venv/bin/python -m bench.writecpu
--only append --warmup 40 --requests 240`` and the same with ``--requests 40``, over 200 (the
start-up and warm-up cancel out; about a minute each).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from typing import Any

from app.auth import create_token
from app.config import Settings
from app.main import create_app
from bench.harness import fresh_database, server_dsn
from bench.writes import TEMPLATE_BASE, _turn, new_thread_doc
from loomsync.core.document.ids import ThreadId

DATABASE = "loomsync_bench_writecpu"
ROUNDS = 5


async def _call(app: Any, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
    """One request through the ASGI app; (status, body bytes)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]
        + [(b"content-length", str(len(body)).encode()), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.sleep(3600)
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, b"".join(chunks)


async def measure(dsn: str, requests: int, warmup: int = 200, only: str | None = None) -> list[str]:
    """CPU and wall microseconds a PUT and an append (median of the rounds), after ``warmup``
    requests of each; ``only``: one workload."""
    settings = Settings(jwt_secret="c" * 48, database_url=dsn, rate_limit="off", _env_file=None)  # type: ignore[call-arg]
    app = create_app(settings)
    doc = json.dumps(new_thread_doc(0)).encode()
    turn = json.dumps({"messages": _turn(TEMPLATE_BASE)}).encode()
    auth = {"Authorization": f"Bearer {create_token(settings, 'writer')}"}
    lines = ["workload | CPU us a request (rounds: median min max) | wall us"]
    try:
        async with app.router.lifespan_context(app):
            state: dict[str, Any] = {}

            async def put() -> None:
                status, body = await _call(app, "PUT", f"/api/threads/{ThreadId.new()}", auth, doc)
                assert status == 201, body[:300]

            async def append() -> None:
                if state.get("version", 0) >= 500 or "tid" not in state:
                    state["tid"] = str(ThreadId.new())
                    status, body = await _call(
                        app, "PUT", f"/api/threads/{state['tid']}", auth, doc
                    )
                    assert status == 201, body[:300]
                    state["version"] = 1
                headers = {**auth, "If-Match": f'"{state["version"]}"'}
                path = f"/api/threads/{state['tid']}/messages"
                status, body = await _call(app, "POST", path, headers, turn)
                assert status == 200, body[:300]
                state["version"] = json.loads(body)["version"]

            for name, operation in (("put", put), ("append", append)):
                if only not in (None, name):
                    continue
                for _ in range(warmup):
                    await operation()
                cpu_rounds, wall_rounds = [], []
                per_round = max(1, requests // ROUNDS)
                for _ in range(ROUNDS):
                    cpu, wall = time.process_time(), time.perf_counter()
                    for _ in range(per_round):
                        await operation()
                    cpu_rounds.append((time.process_time() - cpu) / per_round * 1e6)
                    wall_rounds.append((time.perf_counter() - wall) / per_round * 1e6)
                lines.append(
                    f"{name:8} | {statistics.median(cpu_rounds):6.0f} {min(cpu_rounds):6.0f}"
                    f" {max(cpu_rounds):6.0f} | {statistics.median(wall_rounds):7.0f}"
                )
    finally:
        await app.state.engine.dispose()
    return lines


def main() -> None:
    """Recreate the database, measure, print."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--only", choices=("put", "append"))
    parser.add_argument(
        "--database", default=DATABASE, help="its name (two checkouts measured at once: two names)"
    )
    args = parser.parse_args()
    dsn = fresh_database(server_dsn(), args.database)
    print("\n".join(asyncio.run(measure(dsn, args.requests, args.warmup, args.only))))


if __name__ == "__main__":
    main()
