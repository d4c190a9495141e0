"""List benchmark (issue 7 item 4): ``GET /api/threads`` first and deep pages for a big owner.

    .venv/bin/python -m bench.listing [--quick] [--rebuild]

Builds (once; reused while its shape is unchanged, migrated to head on every run) the database
``loomsync_bench_list`` on LOOMSYNC_BENCH_DATABASE_URL (default: this machine's PostgreSQL):
100,000 threads, 50,000 of them owned by ``lister`` (org ``org0``), the rest spread over other
users in 20 organizations; visibility 60% organization, 30% private, 10% public; distinct
``last_activity_at`` values over a year; 0-3 small real messages a thread (``message_count``
agrees). Rows are made by the server's own code (bench/corpus.py's bulk inserts).

Then, through a real uvicorn server and as ``lister``, for ``scope=mine`` and ``scope=visible``:
walks every page by ``next_cursor`` (checking order, no repeats, the expected total), keeps the
cursors of pages 1, 10, 100 and 1000, and times repeated fetches of those pages, interleaved so
that noise falls on every depth alike. Reports client and server (``Server-Timing``) p50/p95 and
the PostgreSQL plan of the first and deepest page of each scope.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import httpx
from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql

from app.auth import Principal, create_token
from app.config import Settings
from app.database import SERVER_SETTINGS, migrate
from app.threads import cursors, listing
from app.threads.access import readable
from app.threads.documents import derived_columns, dump_json, prepare_messages
from app.threads.indexing import thread_vector
from app.threads.tables import threads
from bench.corpus import NOW, Batch, BulkLoader
from bench.harness import (
    Section,
    asyncpg_dsn,
    database_dsn,
    database_exists,
    percentiles,
    recreate_database,
    server_dsn,
    server_ms,
    uvicorn_server,
)
from bench.realdata import all_real_messages, real_templates

DATABASE = "loomsync_bench_list"
LISTER = Principal(user_id="lister", org_id="org0")
DEPTHS = (1, 10, 100, 1000)
PAGE = 50  # the API's default limit
TARGET_P95_MS = 20.0
FLAT_RATIO = 1.5  # deepest page p95 at most this many times the first page's
SMALL_BODY = 1500  # characters of JSON: list output has no messages, so small ones suffice


@dataclass(frozen=True)
class ListShape:
    """Database shape: threads in all, those owned by the lister, other users and orgs,
    at most this many messages a thread, random seed."""

    threads: int = 100_000
    mine: int = 50_000
    users: int = 200
    orgs: int = 20
    max_messages: int = 3
    seed: int = 11

    def fingerprint(self) -> str:
        """A short id of the shape, to know whether a database holds it already."""
        text = json.dumps({"listing": asdict(self)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def _templates() -> tuple[list[list[Any]], list[Any]]:
    """Per real thread and visibility, the thread columns INSERT_THREADS takes after
    (id, owner, org), without the timestamp and message count; and small prepared messages."""
    small = [m for m in prepare_messages(all_real_messages()) if len(m.body) <= SMALL_BODY]
    rows: list[list[Any]] = []
    for template in real_templates():
        for visibility in ("organization",) * 6 + ("private",) * 3 + ("public",):
            doc = {**template, "visibility": visibility}
            columns = derived_columns(doc)
            stored = {k: v for k, v in doc.items() if k not in ("id", "last_activity_at")}
            rows.append([columns["visibility"], columns["title"], columns["workspace_root"],
                         columns["git_branch"], columns["git_remote_url"], columns["provider"],
                         columns["model"], dump_json(stored), thread_vector(doc)])  # fmt: skip
    return rows, small


async def build(dsn: str, shape: ListShape, *, batch: int = 2000) -> None:
    """Fill the migrated, empty database at ``dsn`` with ``shape`` (bulk ``unnest`` inserts,
    GIN indexes rebuilt after the load, then ``VACUUM ANALYZE``)."""
    rng = random.Random(shape.seed)
    rows, small = _templates()
    mine = set(rng.sample(range(shape.threads), shape.mine))
    seconds = rng.sample(range(365 * 86400), shape.threads)  # distinct last_activity_at
    loader = await BulkLoader.open(dsn)
    for first in range(0, shape.threads, batch):
        chunk = Batch()
        for index in range(first, min(first + batch, shape.threads)):
            thread_id = uuid.UUID(int=rng.getrandbits(128), version=4)
            if index in mine:
                owner, org = LISTER.user_id, LISTER.org_id
            else:
                user = 1 + rng.randrange(shape.users - 1)
                owner, org = f"user{user}", f"org{user % shape.orgs}"
            count = rng.randint(0, shape.max_messages)
            visibility, *texts = rng.choice(rows)
            chunk.add_thread(thread_id, owner, org, visibility,
                               NOW - timedelta(seconds=seconds[index]), *texts[:6], count,
                               *texts[6:])  # fmt: skip
            for seq in range(count):
                m = rng.choice(small)
                chunk.add_message(thread_id, seq, m.role, m.body, m.content_hash,
                                    m.vector)  # fmt: skip
        await loader.write(chunk)
    await loader.finish()
    print(f"  database ready in {time.monotonic() - loader.started:,.0f} s", flush=True)


async def ensure_database(server_dsn: str, shape: ListShape, rebuild: bool = False) -> str:
    """The asyncpg DSN of a database holding ``shape``, migrated to head; built when missing,
    of another shape, or ``rebuild``."""
    dsn = asyncpg_dsn(database_dsn(server_dsn, DATABASE))
    if not rebuild and await database_exists(server_dsn, DATABASE):
        conn = await asyncpg.connect(dsn)
        try:
            stored = await conn.fetchval("SELECT value FROM bench_meta WHERE key = 'listing'")
        except asyncpg.UndefinedTableError:
            stored = None
        finally:
            await conn.close()
        if stored == shape.fingerprint():
            print(f"Reusing {DATABASE} ({stored})", flush=True)
            await asyncio.to_thread(migrate, dsn)  # new indexes reach an old database too
            return dsn
    print(f"Building {DATABASE}: {shape} …", flush=True)
    await recreate_database(server_dsn, DATABASE)
    await asyncio.to_thread(migrate, dsn)
    await build(dsn, shape)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE bench_meta (key text PRIMARY KEY, value text)")
        await conn.execute("INSERT INTO bench_meta VALUES ('listing', $1)", shape.fingerprint())
    finally:
        await conn.close()
    return dsn


def walk(client: httpx.Client, scope: str) -> tuple[dict[int, str | None], int, int]:
    """Follow ``next_cursor`` from the first page to the last; return the cursor that fetches
    each page of DEPTHS (None for page 1), the number of pages and of threads. Raises
    AssertionError when a thread repeats or the order is not newest first."""
    wanted: dict[int, str | None] = {1: None}
    seen: set[str] = set()
    last: tuple[str, str] | None = None
    cursor: str | None = None
    depth = 0
    while True:
        depth += 1
        if depth in DEPTHS:
            wanted[depth] = cursor
        params = {"scope": scope, **({"cursor": cursor} if cursor else {})}
        body = client.get("/api/threads", params=params).raise_for_status().json()
        for summary in body["threads"]:
            key = (summary["last_activity_at"], summary["id"])
            assert summary["id"] not in seen, f"{summary['id']} repeated on page {depth}"
            assert last is None or key < last, f"not newest first on page {depth}"
            seen.add(summary["id"])
            last = key
        cursor = body["next_cursor"]
        if cursor is None:
            return wanted, depth, len(seen)


def time_pages(
    client: httpx.Client, scope: str, pages: dict[int, str | None], runs: int, warmup: int
) -> dict[int, tuple[list[float], list[float]]]:
    """Fetch each page ``warmup`` + ``runs`` times, round-robin over the pages; return, per
    depth, the client wall times and the server times (ms) of the counted fetches."""
    times: dict[int, tuple[list[float], list[float]]] = {d: ([], []) for d in pages}
    for i in range(warmup + runs):
        for depth, cursor in pages.items():
            params = {"scope": scope, **({"cursor": cursor} if cursor else {})}
            started = time.perf_counter()
            response = client.get("/api/threads", params=params)
            wall = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            assert len(response.json()["threads"]) == PAGE
            if i >= warmup:
                times[depth][0].append(wall)
                times[depth][1].append(server_ms(response))
    return times


class _Capture:
    """A stand-in session that keeps the statement listing.list_threads would execute."""

    statement: Any = None

    async def execute(self, statement: Any) -> Any:
        """Keep ``statement``; return an empty result."""
        self.statement = statement
        return _Empty()


class _Empty:
    def all(self) -> list[Any]:
        return []


async def expected_total(dsn: str, scope: str) -> int:
    """How many threads the lister's pages must hold for ``scope``, counted in SQL with the
    server's own access condition (not deleted, not archived)."""
    allowed = threads.c.owner_id == LISTER.user_id if scope == "mine" else readable(LISTER)
    query = select(func.count()).where(
        allowed, threads.c.deleted_at.is_(None), threads.c.archived_at.is_(None)
    )
    sql = str(query.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval(sql))
    finally:
        await conn.close()


async def explain(dsn: str, scope: str, cursor: str | None) -> str:
    """``EXPLAIN ANALYZE`` of the API's SQL for one page, summarised: the scan nodes with their
    index, buffers touched and execution time."""
    capture = _Capture()
    after = cursors.decode(cursor, datetime, uuid.UUID) if cursor else None
    await listing.list_threads(
        capture,  # type: ignore[arg-type]
        LISTER, scope=scope, archived="false", workspace=None, after=after, limit=PAGE,
    )  # fmt: skip
    sql = str(
        capture.statement.compile(
            dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}
        )
    )
    conn = await asyncpg.connect(dsn, server_settings=SERVER_SETTINGS)
    try:
        await conn.fetch(sql)  # warm
        plan = json.loads(await conn.fetchval(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}"))
    finally:
        await conn.close()
    nodes, stack = [], [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        if "Scan" in node["Node Type"]:
            index = f" {node['Index Name']}" if "Index Name" in node else ""
            removed = node.get("Rows Removed by Filter", 0)
            nodes.append(
                f"{node['Node Type']}{index} rows={node['Actual Rows']} filtered={removed}"
            )
        stack.extend(node.get("Plans", []))
    buffers = plan[0]["Plan"].get("Shared Hit Blocks", 0) + plan[0]["Plan"].get(
        "Shared Read Blocks", 0
    )
    return f"{'; '.join(nodes)}; buffers {buffers}; {plan[0]['Execution Time']:.2f} ms"


HEADER = "scope    page  after | client p50    p95 | server p50    p95 (ms) | p95 < 20 ms"


def _row(scope: str, depth: int, wall: list[float], server: list[float]) -> str:
    (w50, w95), (s50, s95) = percentiles(wall), percentiles(server)
    verdict = "ok" if w95 < TARGET_P95_MS else "MISS"
    return (f"{scope:<7} {depth:5d} {(depth - 1) * PAGE:6d} | {w50:10.2f} {w95:6.2f} | "
            f"{s50:10.2f} {s95:6.2f}      | {verdict}")  # fmt: skip


def run(server_dsn: str, *, quick: bool = False, rebuild: bool = False) -> Section:
    """Build or reuse the database, serve it, walk and time the pages; return the section.

    ``quick``: 20 timed fetches a page after 3 warm-ups (else 100 after 5). Targets: client p95
    under 20 ms at every depth of ``scope=mine``, and flat: the page-1000 p95 at most 1.5 x the
    first page's."""
    runs, warmup = (20, 3) if quick else (100, 5)
    shape = ListShape()
    dsn = asyncio.run(ensure_database(server_dsn, shape, rebuild))
    section = Section("List (issue 7 item 4): GET /api/threads, first and deep pages")
    section.lines += [
        f"{shape.threads:,} threads, {shape.mine:,} owned by {LISTER.user_id} ({LISTER.org_id});"
        f" pages of {PAGE}; {runs} timed fetches a page after {warmup} warm-ups, interleaved",
        HEADER,
    ]
    results: dict[str, dict[int, tuple[list[float], list[float]]]] = {}
    plans: list[str] = []
    with uvicorn_server(dsn) as (base, secret):
        settings = Settings(jwt_secret=secret, _env_file=None)  # type: ignore[call-arg]
        token = create_token(settings, LISTER.user_id or "", org=LISTER.org_id)
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            for scope in ("mine", "visible"):
                started = time.monotonic()
                pages, count, total = walk(client, scope)
                walked = time.monotonic() - started
                expected = asyncio.run(expected_total(dsn, scope))
                if total != expected:
                    raise AssertionError(f"{scope}: the pages held {total} threads, not {expected}")
                results[scope] = time_pages(client, scope, pages, runs, warmup)
                section.lines += [_row(scope, d, *results[scope][d]) for d in DEPTHS]
                plans.append(f"{scope}: walked {count} pages ({total:,} threads, as many as SQL"
                             f" counts; newest first, none repeated) in {walked:.1f} s")  # fmt: skip
                for depth in (DEPTHS[0], DEPTHS[-1]):
                    plan = asyncio.run(explain(dsn, scope, pages[depth]))
                    plans.append(f"  page {depth:4d} plan: {plan}")
    section.lines += plans
    mine = results["mine"]
    for depth in DEPTHS:
        p95 = percentiles(mine[depth][0])[1]
        section.target(f"mine page {depth}: client p95 {p95:.2f} ms < {TARGET_P95_MS:.0f} ms",
                       p95 < TARGET_P95_MS)  # fmt: skip
    first, deepest = percentiles(mine[DEPTHS[0]][0])[1], percentiles(mine[DEPTHS[-1]][0])[1]
    section.target(
        f"flat: mine page {DEPTHS[-1]} p95 {deepest:.2f} ms <= {FLAT_RATIO} x page 1 p95 "
        f"{first:.2f} ms (ratio {deepest / first:.2f})",
        deepest <= FLAT_RATIO * first,
    )
    return section


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--rebuild", action="store_true", help="build the database again")
    args = parser.parse_args()
    section = run(server_dsn(), quick=args.quick, rebuild=args.rebuild)
    print("\n".join(section.render()))
    sys.exit(1 if any(not met for _, met in section.targets) else 0)
