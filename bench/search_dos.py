"""Hostile search queries (issue 11 item 4): their latency, and other users' while they run.

    .venv/bin/python -m bench.search_dos [--threads 100000] [--runs 100] [--hostile 32]
                                         [--seconds 30] [--server-root DIR] [--label after]

Reuses (or builds) bench.search's corpus in ``loomsync_bench_search`` and adds, through the API,
the threads of one hostile user (``hostile``, org ``hostile-org``, private): one message of
80 KB of ``x x x …``, one of 80 KB of the words the distinct-terms query asks for, repeated, one
of 1 MB, one of 10 MB, and one with an 80 KB title. Then, against a real one-worker uvicorn:

1. *alone*: each hostile query of :data:`HOSTILE` (``scope=mine`` as the hostile user, so every
   one of them meets its huge messages), ``--runs`` times in a row: p50, p99, max, statuses.
2. *under attack*: ``--hostile`` clients send the worst query (the one with the highest p99 in
   step 1) in a loop for ``--seconds`` while 4 ordinary users of the corpus (``user0``-``user3``)
   each loop over an ordinary mix (a search for a rare word with ``scope=visible``, a list, a
   thread read). Reported: the ordinary requests' p50/p99 and statuses, and the same mix for
   ``--seconds`` with no attack before it, as the baseline.

``--server-root`` runs the server from another checkout (e.g. ``git archive 8e1a649 app
migrations | tar -x -C /tmp/base``) to measure the code before the fix; ``--label`` names the
run in RESULTS.md. Client timeouts are ``--client-timeout`` seconds (default 120): a request
that takes longer counts as status ``timeout``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from app.auth import create_token
from app.config import Settings
from bench.corpus import Shape, Terms
from bench.harness import (
    ROOT,
    asyncpg_dsn,
    database_dsn,
    postgres_version,
    record,
    server_dsn,
    uvicorn_server,
)
from bench.search import DATABASE, ensure_corpus

HOSTILE_USER, HOSTILE_ORG = "hostile", "hostile-org"
DISTINCT = [f"w{i:02d}" for i in range(1, 100)]  # 99 distinct words, 3 characters each
#: (name, syntax, q): every query is under the server's 1,000-character limit.
HOSTILE: list[tuple[str, str, str]] = [
    ("x*49 (issue, <100 chars)", "plain", " ".join(["x"] * 49)),
    ("x*499 (999 chars)", "plain", " ".join(["x"] * 499)),
    ("99 distinct words", "plain", " ".join(DISTINCT)),
    ("web phrase x*497", "web", '"' + " ".join(["x"] * 497) + '"'),
    ("web or-chain x*250", "web", " or ".join(["x"] * 200)),
    ("web or-chain 99 words", "web", " or ".join(DISTINCT[:99])),
    ("web negation only", "web", "-x -w01 -w02"),
    ("hyphen chain", "plain", "-".join(["x"] * 499)),
    ("long words", "plain", " ".join(["x" * 200] * 4)),
    ("common or-chain", "web", " or ".join(["loomcommon", "file", "the", "run", "test"] * 20)),
]


def hostile_threads() -> list[dict[str, Any]]:
    """The hostile user's threads: huge messages and a huge title made of the queries' words."""
    xs = "x " * 40_000  # 80 KB
    words = (" ".join(DISTINCT) + " ") * 200  # 80 KB

    def thread(n: int, content: str, title: str = "hostile") -> dict[str, Any]:
        tid = f"T-00000000-0000-4000-8000-{n:012d}"
        message = {"role": "tool", "content": content}
        return {"id": tid, "metadata": {"title": title}, "conversation": {"messages": [message]}}

    return [
        thread(1, xs),
        thread(2, words),
        thread(3, "x " * 500_000),  # 1 MB
        thread(4, ("x " + " ".join(DISTINCT) + " ") * 25_000),  # 10 MB
        thread(5, "short", title=xs),
    ]


async def seed(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    """Create the hostile threads unless they exist."""
    for doc in hostile_threads():
        got = await client.get(f"/api/threads/{doc['id']}", headers=headers)
        if got.status_code == 200:
            continue
        put = await client.put(f"/api/threads/{doc['id']}", json=doc, headers=headers)
        put.raise_for_status()


def p99(samples: list[float]) -> float:
    """The 99th percentile (nearest rank) of ``samples``."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


async def timed(
    request: Awaitable[httpx.Response], into: list[tuple[float, str]]
) -> httpx.Response | None:
    """Append (milliseconds, status) of one request to ``into`` (status ``timeout`` when the
    client gave up); return the response."""
    started = time.perf_counter()
    response: httpx.Response | None = None
    try:
        response = await request
        status = str(response.status_code)
    except httpx.TimeoutException:
        status = "timeout"
    into.append(((time.perf_counter() - started) * 1000, status))
    return response


def summary(samples: list[tuple[float, str]]) -> str:
    """``n, p50, p99, max, statuses`` of (ms, status) samples."""
    if not samples:
        return "    0 requests"
    ms = [m for m, _ in samples]
    statuses = ",".join(f"{k}:{v}" for k, v in sorted(Counter(s for _, s in samples).items()))
    return (f"{len(ms):>5} | p50 {statistics.median(ms):9.1f} p99 {p99(ms):9.1f} "
            f"max {max(ms):9.1f} ms | {statuses}")  # fmt: skip


async def alone(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    runs: int,
    queries: list[tuple[str, str, str]],
    scope: str,
) -> list[str]:
    """Step 1: each hostile query ``runs`` times in a row; the rows of the table."""
    rows = []
    for name, syntax, q in queries:
        params = {"q": q, "syntax": syntax, "scope": scope}
        samples: list[tuple[float, str]] = []
        for _ in range(runs):
            await timed(client.get("/api/threads/search", params=params, headers=headers), samples)
        rows.append(f"{name:<28} {len(q):>4} chars | {summary(samples)}")
        print(rows[-1], flush=True)
    return rows


async def ordinary_loop(
    client: httpx.AsyncClient, headers: dict[str, str], words: list[str], stop: float
) -> list[tuple[float, str]]:
    """One ordinary user until ``stop`` (monotonic): search a rare word, list, read a thread."""
    samples: list[tuple[float, str]] = []
    i = 0
    while time.monotonic() < stop:
        word = words[i % len(words)]
        i += 1
        search = {"q": word, "scope": "visible"}
        await timed(client.get("/api/threads/search", params=search, headers=headers), samples)
        listed = await timed(
            client.get("/api/threads", params={"limit": 20}, headers=headers), samples
        )
        threads = (
            listed.json()["threads"] if listed is not None and listed.status_code == 200 else []
        )
        if threads:
            tid = threads[i % len(threads)]["id"]
            await timed(client.get(f"/api/threads/{tid}", headers=headers), samples)
    return samples


async def hostile_loop(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    query: tuple[str, str, str],
    stop: float,
    scope: str,
) -> list[tuple[float, str]]:
    """One attacker until ``stop``: the worst query, again and again."""
    _, syntax, q = query
    samples: list[tuple[float, str]] = []
    params = {"q": q, "syntax": syntax, "scope": scope}
    while time.monotonic() < stop:
        await timed(client.get("/api/threads/search", params=params, headers=headers), samples)
    return samples


async def attack(
    base: str,
    token: Callable[[str, str], dict[str, str]],
    terms: Terms,
    args: argparse.Namespace,
    worst: tuple[str, str, str],
) -> list[str]:
    """Step 2: ordinary users alone, then beside ``args.hostile`` attackers; the table rows."""
    timeout = httpx.Timeout(args.client_timeout)
    limits = httpx.Limits(max_connections=args.hostile + 8)
    users = [token(f"user{i}", f"org{i}") for i in range(4)]
    attacker = token(HOSTILE_USER, HOSTILE_ORG)
    rows = []
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as client:
        for phase in ("baseline", "attack"):
            stop = time.monotonic() + args.seconds
            ordinary = [ordinary_loop(client, u, terms.selective, stop) for u in users]
            attackers = (
                [
                    hostile_loop(client, attacker, worst, stop, args.scope)
                    for _ in range(args.hostile)
                ]
                if phase == "attack"
                else []
            )
            results = await asyncio.gather(*ordinary, *attackers)
            ordinary_samples = [s for r in results[: len(users)] for s in r]
            hostile_samples = [s for r in results[len(users) :] for s in r]
            rows.append(f"{phase:<8} ordinary users (4)      | {summary(ordinary_samples)}")
            print(rows[-1], flush=True)
            if phase == "attack":
                rows.append(f"{phase:<8} attackers ({args.hostile:>2})          | {summary(hostile_samples)}")  # fmt: skip
                print(rows[-1], flush=True)
    return rows


async def run(
    base: str, secret: str, dsn: str, terms: Terms, args: argparse.Namespace
) -> list[str]:
    """Seed, step 1, step 2; every table row."""
    settings = Settings(jwt_secret=secret, database_url=dsn, _env_file=None)  # type: ignore[call-arg]

    def token(user: str, org: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {create_token(settings, user, org=org)}"}

    headers = token(HOSTILE_USER, HOSTILE_ORG)
    async with httpx.AsyncClient(base_url=base, timeout=args.client_timeout) as client:
        await seed(client, headers)
        # warm-up (not counted): one ordinary search
        await client.get("/api/threads/search", params={"q": terms.selective[0]}, headers=headers)
        header = f"{'hostile query (alone)':<28} {'q':>4} chars | {'n':>5} |"
        print(header, flush=True)
        queries = [h for h in HOSTILE if args.only in h[0]]
        rows = [header, *await alone(client, headers, args.runs, queries, args.scope)]
    worst = max(queries, key=lambda h: float(rows[1 + queries.index(h)].split("p99")[1].split()[0]))
    print(f"worst: {worst[0]}", flush=True)
    rows.append(f"worst query: {worst[0]}")
    rows += await attack(base, token, terms, args, worst)
    return rows


def main() -> None:
    """Parse arguments, reuse or build the corpus, serve, measure, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--hostile", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--client-timeout", type=float, default=120)
    parser.add_argument("--server-root", type=Path, default=ROOT)
    parser.add_argument("--label", default="after")
    parser.add_argument("--only", default="", help="only the hostile queries whose name holds this")
    parser.add_argument("--scope", default="mine", help="scope of the hostile queries")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    shape = Shape(threads=args.threads)
    terms = asyncio.run(ensure_corpus(server_dsn(), shape, rebuild=False))
    dsn = database_dsn(server_dsn(), DATABASE)
    with uvicorn_server(dsn, cwd=args.server_root) as (base, secret):
        rows = asyncio.run(run(base, secret, asyncpg_dsn(dsn), terms, args))
    if not args.no_record:
        record(
            f"Search DoS (issue 11 item 4), {args.label}",
            "python -m bench.search_dos " + " ".join(sys.argv[1:]),
            rows,
            {
                "Corpus": f"{shape.threads} threads, ~{shape.threads * shape.mean_messages} "
                f"messages (bench.search's) + 5 hostile threads",
                "Server": f"{args.server_root} (one uvicorn worker, pool 20+10), PostgreSQL "
                + asyncio.run(postgres_version(server_dsn())),
            },
        )


if __name__ == "__main__":
    main()
