"""Load test (issue 6): concurrent virtual users doing a realistic mix against 2 uvicorn workers.

    .venv/bin/python -m bench.load [--clients 50] [--seconds 60] [--workers 2]

Recreates the database ``loomsync_bench_load`` on LOOMSYNC_BENCH_DATABASE_URL (default: this
machine's PostgreSQL), migrates it and starts a real uvicorn server with ``--workers``. Each
virtual user has its own token and ``httpx.AsyncClient``, creates two threads, then loops until
the time is up: appends (50%, If-Match; a 409 takes ``server_version`` and retries), PUTs of new
threads (10%), GETs (20%), lists (10%) and searches (10%), with messages and words sampled from
the real threads of ``../shared/data/threads/``. Reports count, errors, 409s, p50/p95/p99 per
operation, 503s, the pool gauges of ``/metrics`` and the peak RSS of the server's process tree;
prints a table and appends it to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import sys
import time
from collections import defaultdict
from typing import Any

import httpx
import psutil

from app.auth import create_token
from app.config import Settings
from bench.harness import fresh_database, record, uvicorn_process
from bench.harness import server_dsn as default_server_dsn
from bench.realdata import all_real_messages, real_templates
from loomsync.core.document.ids import ThreadId

DATABASE = "loomsync_bench_load"
ORGS = 5
MIX = (("append", 50), ("put", 10), ("get", 20), ("list", 10), ("search", 10))
OPERATIONS = [name for name, _ in MIX]
MIX_TEXT = "mix " + " / ".join(f"{name} {weight}%" for name, weight in MIX)
POOL_GAUGE = re.compile(r"^(loomsync_db_pool_\w+) (\S+)$", re.MULTILINE)


def load_real() -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:
    """(thread templates without messages, all real messages, words for searches)."""
    messages = all_real_messages()
    text = " ".join(m["content"] for m in messages if isinstance(m.get("content"), str))
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{5,12}", text)})
    return real_templates(), messages, words


class Stats:
    """Latencies (ms), error and 409 counts by operation, and the first few error details."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.conflicts: dict[str, int] = defaultdict(int)
        self.statuses: dict[int, int] = defaultdict(int)
        self.details: list[str] = []

    def error(self, op: str, detail: str) -> None:
        """Count an error of ``op`` and keep its detail if it is among the first ten."""
        self.errors[op] += 1
        if len(self.details) < 10:
            self.details.append(f"{op}: {detail}")


class User:
    """One virtual user: its own client and token, the threads it owns and their versions."""

    def __init__(self, client: httpx.AsyncClient, rng: random.Random, real: Any, stats: Stats):
        self.client, self.rng, self.stats = client, rng, stats
        self.templates, self.messages, self.words = real
        self.versions: dict[str, int] = {}

    async def call(self, op: str, method: str, url: str, **kwargs: Any) -> httpx.Response | None:
        """Send one request, timing it; count non-2xx (other than an append's 409) as errors."""
        started = time.perf_counter()
        try:
            response = await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.stats.error(op, f"{type(exc).__name__}: {exc}")
            return None
        self.stats.ms[op].append((time.perf_counter() - started) * 1000)
        self.stats.statuses[response.status_code] += 1
        if response.status_code == 409 and op == "append":
            self.stats.conflicts[op] += 1
        elif not response.is_success:
            self.stats.error(op, f"{response.status_code} {method} {url} {response.text[:300]}")
        return response

    async def put(self) -> None:
        """Create a thread from a real template with 2-10 real messages."""
        thread_id = str(ThreadId.new())
        body = {**self.rng.choice(self.templates), "id": thread_id}
        body["conversation"] = {"messages": self.rng.sample(self.messages, self.rng.randint(2, 10))}
        response = await self.call("put", "PUT", f"/api/threads/{thread_id}", json=body)
        if response is not None and response.status_code in (200, 201):
            self.versions[thread_id] = response.json()["version"]

    async def append(self) -> None:
        """Append 1-3 real messages with If-Match; on 409 adopt ``server_version`` and retry."""
        thread_id = self.rng.choice(list(self.versions))
        body = {"messages": self.rng.sample(self.messages, self.rng.randint(1, 3))}
        for _ in range(5):
            headers = {"If-Match": f'"{self.versions[thread_id]}"'}
            url = f"/api/threads/{thread_id}/messages"
            response = await self.call("append", "POST", url, json=body, headers=headers)
            if response is None:
                return
            if response.status_code == 409:
                self.versions[thread_id] = response.json()["server_version"]
                continue
            if response.is_success:
                self.versions[thread_id] = response.json()["version"]
            return

    async def get(self) -> None:
        """Read one of this user's threads."""
        await self.call("get", "GET", f"/api/threads/{self.rng.choice(list(self.versions))}")

    async def list(self) -> None:
        """List the newest summaries, this user's or everything visible."""
        params = {"scope": self.rng.choice(("mine", "visible")), "limit": 50}
        await self.call("list", "GET", "/api/threads", params=params)

    async def search(self) -> None:
        """Search one or two words of the real messages."""
        q = " ".join(self.rng.sample(self.words, self.rng.choice((1, 1, 2))))
        params = {"q": q, "scope": self.rng.choice(("mine", "visible"))}
        await self.call("search", "GET", "/api/threads/search", params=params)

    async def run(self, deadline: float) -> None:
        """Create two threads, then do the mix until ``deadline``."""
        for _ in range(2):
            await self.put()
        weights = [weight for _, weight in MIX]
        while time.monotonic() < deadline and self.versions:
            op = self.rng.choices(OPERATIONS, weights)[0]
            await getattr(self, op)()


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants, in MiB."""
    root = psutil.Process(pid)
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2**20


async def sample(pid: int, base: str, peaks: dict[str, float], stop: asyncio.Event) -> None:
    """Every second: the RSS of the server tree and one worker's pool gauges; keep the peaks."""
    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        while not stop.is_set():
            peaks["rss_mib"] = max(peaks.get("rss_mib", 0.0), rss_mib(pid))
            try:
                text = (await client.get("/metrics")).text
                for name, value in POOL_GAUGE.findall(text):
                    peaks[name] = max(peaks.get(name, float("-inf")), float(value))
            except httpx.HTTPError:
                pass
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass


async def run_load(
    base: str, secret: str, dsn: str, pid: int, args: argparse.Namespace
) -> tuple[Stats, dict[str, float], str, float]:
    """Run all users until time is up; return stats, peaks, the final /metrics and elapsed s."""
    settings = Settings(jwt_secret=secret, database_url=dsn, _env_file=None)  # type: ignore[call-arg]
    real = load_real()
    stats, peaks, stop = Stats(), {"rss_mib": rss_mib(pid)}, asyncio.Event()
    clients = []
    for i in range(args.clients):
        token = create_token(settings, f"load{i}", org=f"org{i % ORGS}")
        headers = {"Authorization": f"Bearer {token}"}
        limits = httpx.Limits(max_connections=1)
        clients.append(httpx.AsyncClient(base_url=base, headers=headers, timeout=60, limits=limits))
    sampler = asyncio.create_task(sample(pid, base, peaks, stop))
    started = time.monotonic()
    users = [User(c, random.Random(i), real, stats) for i, c in enumerate(clients)]
    await asyncio.gather(*(u.run(started + args.seconds) for u in users))
    elapsed = time.monotonic() - started
    stop.set()
    await sampler
    for client in clients:
        await client.aclose()
    async with httpx.AsyncClient(base_url=base) as client:
        metrics = (await client.get("/metrics")).text
    return stats, peaks, metrics, elapsed


def quantile(samples: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``samples`` (nan when empty)."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


HEADER = "operation   count  req/s  errors   409s |    p50     p95     p99 (ms)"


def table(stats: Stats, elapsed: float) -> list[str]:
    """Rows per operation and a total row."""
    rows = [HEADER]
    everything: list[float] = []
    for op in OPERATIONS:
        ms = stats.ms[op]
        everything += ms
        rows.append(f"{op:<9} {len(ms):7d} {len(ms) / elapsed:6.1f} {stats.errors[op]:7d} "
                    f"{stats.conflicts[op]:6d} | {quantile(ms, .5):6.1f} {quantile(ms, .95):7.1f} "
                    f"{quantile(ms, .99):7.1f}")  # fmt: skip
    rows.append(f"{'total':<9} {len(everything):7d} {len(everything) / elapsed:6.1f} "
                f"{sum(stats.errors.values()):7d} {sum(stats.conflicts.values()):6d} | "
                f"{quantile(everything, .5):6.1f} {quantile(everything, .95):7.1f} "
                f"{quantile(everything, .99):7.1f}")  # fmt: skip
    return rows


def main() -> None:
    """Parse arguments, recreate and migrate the database, serve, load, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    server_dsn = default_server_dsn()
    dsn = fresh_database(server_dsn, DATABASE)
    print(f"{args.clients} clients for {args.seconds:.0f} s against {args.workers} workers …")
    with uvicorn_process(dsn, workers=args.workers) as (base, secret, process):
        stats, peaks, metrics, elapsed = asyncio.run(run_load(base, secret, dsn, process.pid, args))
    gauges = ", ".join(f"{n[17:]}={v}" for n, v in POOL_GAUGE.findall(metrics))
    peak_pool = ", ".join(f"{n[17:]}={v:g}" for n, v in peaks.items() if n != "rss_mib")
    lines = [*table(stats, elapsed), f"503s: {stats.statuses.get(503, 0)}; statuses: "
             f"{dict(sorted(stats.statuses.items()))}; peak server RSS (uvicorn tree): "
             f"{peaks['rss_mib']:.0f} MiB", f"pool gauges at the end (one worker): {gauges}",
             f"pool peaks of 1 s scrapes (either worker): {peak_pool}"]  # fmt: skip
    print("\n".join(lines))
    for detail in stats.details:
        print("error", detail)
    if not args.no_record:
        record(
            "Load (issue 6)",
            "python -m bench.load " + " ".join(sys.argv[1:]),
            lines,
            {
                "Load": f"{args.clients} clients, {args.seconds:.0f} s, {args.workers} workers, {MIX_TEXT}"
            },
        )
    if sum(stats.errors.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
