"""Search benchmark (issue 3): p50/p95 of GET /api/threads/search against the same SQL run raw.

    .venv/bin/python -m bench.search [--threads 100000] [--rebuild] [--runs 40]

Builds (once; reused while its shape is unchanged) a corpus of real messages in the database
``loomsync_bench_search`` on LOOMSYNC_BENCH_DATABASE_URL (default: this machine's PostgreSQL),
starts a real uvicorn server on it, and times, for selective (5 threads), medium (1% of
threads) and common (half of all messages) terms and both scopes, each query twice: through
HTTP (httpx, top 20 with snippets) and as the raw SQL of the same statements run by asyncpg.
Prints a table and appends it to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from itertools import cycle
from typing import Any

import asyncpg
import httpx
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from app.auth import Principal, create_token
from app.config import Settings, normalize_database_url
from app.database import SERVER_SETTINGS, migrate
from app.threads import search, searchstats, snippets
from app.threads.ranking import plan_ranking, scored_hits
from app.threads.searchstats import Stats
from bench.corpus import Shape, Terms, build, fingerprint
from bench.harness import (
    asyncpg_dsn,
    database_dsn,
    database_exists,
    percentiles,
    record,
    recreate_database,
    uvicorn_server,
)
from bench.harness import server_dsn as default_server_dsn
from loomsync.core.textsearch.commits import commit_prefix, with_hex_prefix
from loomsync.core.textsearch.fields import MESSAGE_TAIL_CHARS
from loomsync.core.textsearch.query import parse

DATABASE = "loomsync_bench_search"
SEARCHER = Principal(user_id="user0", org_id="org0", roles=frozenset())
TARGET_P95_MS = {"selective": 50.0, "medium": None, "common": 300.0}
MAX_RATIO = 1.5


async def ensure_corpus(
    server_dsn: str, shape: Shape, rebuild: bool, database: str = DATABASE
) -> Terms:
    """The planted terms of database ``database`` holding ``shape``, building it when needed."""
    dsn = database_dsn(server_dsn, database)
    if not rebuild and await database_exists(server_dsn, database):
        conn = await asyncpg.connect(dsn)
        try:
            row = await conn.fetchrow("SELECT value FROM bench_meta WHERE key = 'corpus'")
        except asyncpg.UndefinedTableError:
            row = None
        finally:
            await conn.close()
        if row is not None:
            meta = json.loads(row["value"])
            if meta["fingerprint"] == fingerprint(shape):
                print(f"Reusing corpus {meta['fingerprint']} in {database}")
                return Terms(**meta["terms"])
    print(f"Building corpus {shape} in {database} …", flush=True)
    await recreate_database(server_dsn, database)
    await asyncio.to_thread(migrate, dsn)
    terms = await build(dsn, shape)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE bench_meta (key text PRIMARY KEY, value text)")
        meta = {"fingerprint": fingerprint(shape), "terms": terms.__dict__, "shape": shape.__dict__}
        await conn.execute("INSERT INTO bench_meta VALUES ('corpus', $1)", json.dumps(meta))
    finally:
        await conn.close()
    return terms


async def raw_search(conn: asyncpg.Connection, q: str, scope: str, stats: Stats) -> int:
    """The API's SQL for one search page, issued by asyncpg: the ranking statement with the
    page's best messages' heads (:func:`app.threads.search.with_heads`; the statistics snapshot
    the server caches, read once per run here too), their highlighting, and, as the API does,
    tool text and tails when a head holds no match (app/threads/snippets.py)."""
    query = with_hex_prefix(parse(q), commit_prefix(q))
    filters = search.SearchFilters(scope=scope)
    ranking = plan_ranking(query, stats)
    statement = search.with_heads(
        scored_hits(SEARCHER, query, ranking, filters, None, 20, commit_prefix(q))
    )
    sql = str(
        statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    )
    rows = await conn.fetch(sql)
    page = rows[:20]
    if not page:
        return 0
    hits = [(r["id"], r["title"], r["best_seq"]) for r in page]
    with_seq = [(t, seq) for t, _, seq in hits if seq is not None]
    sources = snippets._Sources()  # the API's own steps (app/threads/snippets.py), no budget
    for r in page:
        if r["head"] is not None:
            sources.add_head(r["id"], r["head"])
    found = snippets._highlight(hits, query, sources, math.inf, None)
    unread = [(t, seq) for t, seq in with_seq if t in sources.partial and found.get(t) is None]
    if unread:
        ids, seqs = [t for t, _ in unread], [seq for _, seq in unread]
        for r in await conn.fetch(snippets.TAILS, ids, seqs, MESSAGE_TAIL_CHARS):
            sources.add_tail(r["thread_id"], r)
        snippets._highlight(hits, query, sources, math.inf, {t for t, _ in unread})
    return len(page)


async def _stats(dsn: str) -> Stats:
    """The statistics snapshot the server reads (app/threads/searchstats.py)."""
    engine = create_async_engine(normalize_database_url(dsn))
    try:
        async with AsyncSession(engine) as session:
            return await searchstats.read(session)
    finally:
        await engine.dispose()


async def measure(
    base: str, secret: str, dsn: str, terms: Terms, runs: int
) -> list[dict[str, Any]]:
    """Time every (term class, scope): API and raw SQL, alternating, ``runs`` queries each."""
    settings = Settings(jwt_secret=secret, database_url=dsn, _env_file=None)  # type: ignore[call-arg]
    token = create_token(settings, SEARCHER.user_id or "", org=SEARCHER.org_id)
    headers = {"Authorization": f"Bearer {token}"}
    results = []
    conn = await asyncpg.connect(dsn, server_settings=SERVER_SETTINGS)
    stats = await _stats(dsn)
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as client:
        for name, words in (
            ("selective", terms.selective),
            ("medium", terms.medium),
            ("common", terms.common),
        ):
            for scope in ("mine", "visible"):
                api_ms, raw_ms, hits = [], [], []
                for i, q in zip(range(runs + 3), cycle(words), strict=False):
                    started = time.perf_counter()
                    response = await client.get(
                        "/api/threads/search", params={"q": q, "scope": scope}
                    )
                    api = (time.perf_counter() - started) * 1000
                    response.raise_for_status()
                    started = time.perf_counter()
                    await raw_search(conn, q, scope, stats)
                    raw = (time.perf_counter() - started) * 1000
                    if i >= 3:  # warm-up queries are not counted
                        api_ms.append(api)
                        raw_ms.append(raw)
                        hits.append(len(response.json()["hits"]))
                results.append(
                    {
                        "terms": name,
                        "scope": scope,
                        "api": percentiles(api_ms),
                        "raw": percentiles(raw_ms),
                        "hits": sum(hits) / len(hits),
                    }
                )
                print(format_row(results[-1]), flush=True)
    await conn.close()
    return results


def format_row(r: dict[str, Any]) -> str:
    """One table row: term class, scope, hits, API and raw p50/p95 in ms, p95 ratio, target."""
    api50, api95 = r["api"]
    raw50, raw95 = r["raw"]
    target = TARGET_P95_MS[r["terms"]]
    verdict = "" if target is None else ("ok" if api95 <= target else f"MISS (>{target:.0f} ms)")
    ratio = api95 / raw95 if raw95 else float("nan")
    ratio_verdict = "ok" if ratio <= MAX_RATIO else "MISS"
    return (f"{r['terms']:<9} {r['scope']:<7} {r['hits']:>5.1f} | API {api50:8.1f} {api95:8.1f} | "
            f"raw {raw50:8.1f} {raw95:8.1f} | ratio {ratio:4.2f} {ratio_verdict:<4} | p95 {verdict}")  # fmt: skip


HEADER = "terms     scope    hits |      p50      p95 (ms)   |      p50      p95 (ms) | API/raw p95 | target"


def main() -> None:
    """Parse arguments, build or reuse the corpus, serve, measure, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--mean-messages", type=int, default=20)
    parser.add_argument("--users", type=int, default=300)
    parser.add_argument("--orgs", type=int, default=30)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument(
        "--database",
        default=DATABASE,
        help="database of the corpus (rebuilt when its shape or analyzer differs)",
    )
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    server_dsn = default_server_dsn()
    shape = Shape(
        threads=args.threads, mean_messages=args.mean_messages, users=args.users, orgs=args.orgs
    )
    terms = asyncio.run(ensure_corpus(server_dsn, shape, args.rebuild, args.database))
    dsn = database_dsn(server_dsn, args.database)
    with uvicorn_server(dsn) as (base, secret):
        print(HEADER)
        results = asyncio.run(measure(base, secret, asyncpg_dsn(dsn), terms, args.runs))
    if not args.no_record:
        lines = [HEADER, *(format_row(r) for r in results)]
        record(
            "Search (issue 3)",
            "python -m bench.search " + " ".join(sys.argv[1:]),
            lines,
            {
                "Corpus": f"{shape.threads} threads, ~{shape.threads * shape.mean_messages} messages, "
                f"{shape.users} users in {shape.orgs} orgs; searcher user0/org0"
            },
        )


if __name__ == "__main__":
    main()
