"""A large search corpus made from the real threads in ../shared/data/threads/.

``build()`` writes N threads straight into a migrated database (bulk ``unnest`` inserts, the
GIN indexes dropped during the load and rebuilt after, then ``VACUUM ANALYZE``). Every thread
copies the metadata of a random real thread and holds a random number of messages sampled from
the real messages, so text, sizes and tool outputs are real. Marker words are planted so that
queries of known selectivity exist:

- selective: 20 words, each in 5 threads;
- medium: 10 words, each in 1% of the threads;
- common: one word appended to half of all messages.

Indexed texts and message JSON are produced by the server's own code (app.threads.documents,
app.threads.indexing), so the rows are what the API would have written.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from app.threads.documents import commit_shas, derived_columns, dump_json, prepare_messages
from app.threads.indexing import MESSAGE_VECTOR_SQL, THREAD_VECTOR_SQL, thread_vector
from loomsync.core.textsearch.vectors import VERSION as SEARCH_VERSION

REAL_THREADS = Path(__file__).resolve().parents[2] / "shared" / "data" / "threads"
COMMON_WORD = "loomcommon"
#: Which analyzer made the vectors: a corpus made by another one is rebuilt.
ANALYZER = f"loomsync.core.textsearch {SEARCH_VERSION}"
NOW = datetime(2026, 11, 1, tzinfo=UTC)

GIN_INDEXES = {
    "threads_search": "CREATE INDEX threads_search ON threads USING gin (search_vector)",
    "thread_messages_search": "CREATE INDEX thread_messages_search ON thread_messages USING gin (search_vector)",
}

INSERT_THREADS = f"""
INSERT INTO threads (id, owner_id, org_id, version, visibility, is_shared_with_support, created_at,
                     updated_at, last_activity_at, title, is_pinned, workspace_root, git_branch,
                     git_remote_url, provider, model, message_count, document, search_vector,
                     search_version)
SELECT u.id, u.owner_id, u.org_id, 1, u.visibility, false, u.ts, u.ts, u.ts, u.title, false,
       u.workspace_root, u.git_branch, u.git_remote_url, u.provider, u.model, u.message_count,
       CAST(u.document AS json), {THREAD_VECTOR_SQL}, {SEARCH_VERSION}
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::text[],
            $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::int[], $13::text[],
            $14::text[])
     AS u(id, owner_id, org_id, visibility, ts, title, workspace_root, git_branch, git_remote_url,
          provider, model, message_count, document, vector)
"""
INSERT_MESSAGES = f"""
INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector,
                             search_version)
SELECT u.thread_id, u.seq, u.role, CAST(u.body AS json), u.content_hash, {MESSAGE_VECTOR_SQL},
       {SEARCH_VERSION}
FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::bytea[], $6::text[])
     AS u(thread_id, seq, role, body, content_hash, vector)
"""
INSERT_COMMITS = """
INSERT INTO thread_commits (thread_id, sha)
SELECT * FROM unnest($1::uuid[], $2::text[]) ON CONFLICT DO NOTHING
"""


@dataclass
class Terms:
    """Planted words by selectivity, and where each appears (thread counts)."""

    selective: list[str] = field(default_factory=list)
    medium: list[str] = field(default_factory=list)
    common: list[str] = field(default_factory=lambda: [COMMON_WORD])


@dataclass(frozen=True)
class Shape:
    """Corpus size: threads, mean messages a thread, users, organizations, random seed."""

    threads: int = 100_000
    mean_messages: int = 20
    users: int = 300
    orgs: int = 30
    seed: int = 7


def _load_real() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    templates, pool = [], []
    for path in sorted(REAL_THREADS.glob("T-*.json")):
        doc = json.loads(path.read_text())
        pool.extend(doc["conversation"]["messages"])
        doc["conversation"] = {}
        templates.append(doc)
    return templates, pool


def _word(rng: random.Random, prefix: str) -> str:
    return prefix + "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(8))


def plant_terms(shape: Shape, rng: random.Random) -> tuple[Terms, dict[int, list[str]]]:
    """Choose marker words and the threads (by index) that get them."""
    terms = Terms()
    where: dict[int, list[str]] = {}
    for _ in range(20):
        term = _word(rng, "sel")
        terms.selective.append(term)
        for index in rng.sample(range(shape.threads), 5):
            where.setdefault(index, []).append(term)
    for _ in range(10):
        term = _word(rng, "med")
        terms.medium.append(term)
        for index in rng.sample(range(shape.threads), max(1, shape.threads // 100)):
            where.setdefault(index, []).append(term)
    return terms, where


def _with_text(message: dict[str, Any], extra: str) -> dict[str, Any]:
    changed = dict(message)
    content = changed.get("content") if isinstance(changed.get("content"), str) else ""
    changed["content"] = f"{content} {extra}"
    return changed


class Batch:
    """The columns of one :class:`BulkLoader` batch: threads, messages and commits, as the
    parallel arrays INSERT_THREADS, INSERT_MESSAGES and INSERT_COMMITS take."""

    def __init__(self) -> None:
        self.threads: list[list[Any]] = [[] for _ in range(14)]
        self.messages: list[list[Any]] = [[] for _ in range(6)]
        self.commits: list[list[Any]] = [[], []]

    def add_thread(self, *values: Any) -> None:
        for column, value in zip(self.threads, values, strict=True):
            column.append(value)

    def add_message(self, *values: Any) -> None:
        for column, value in zip(self.messages, values, strict=True):
            column.append(value)


class BulkLoader:
    """Bulk writes into a migrated database with its GIN indexes dropped for the load.

    Each :class:`Batch` is one transaction on one of ``workers`` pooled connections, at most
    ``workers`` at a time; :meth:`finish` waits for them, rebuilds the GIN indexes and runs
    ``VACUUM ANALYZE``.
    """

    def __init__(self, pool: asyncpg.Pool, workers: int) -> None:
        self.pool = pool
        self.workers = workers
        self.pending: set[asyncio.Task[None]] = set()
        self.started = time.monotonic()

    @classmethod
    async def open(cls, dsn: str, workers: int = 2) -> BulkLoader:
        """Connect and drop the GIN indexes."""
        pool = await asyncpg.create_pool(dsn, min_size=workers, max_size=workers)
        assert pool is not None
        async with pool.acquire() as conn:
            for name in GIN_INDEXES:
                await conn.execute(f"DROP INDEX IF EXISTS {name}")
        return cls(pool, workers)

    async def write(self, batch: Batch) -> None:
        """Start writing ``batch``; waits while ``workers`` batches are in flight."""
        if len(self.pending) >= self.workers:
            done, self.pending = await asyncio.wait(
                self.pending, return_when=asyncio.FIRST_COMPLETED
            )
            for task in done:
                task.result()
        self.pending.add(asyncio.create_task(self._write(batch)))

    async def _write(self, batch: Batch) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute(INSERT_THREADS, *batch.threads)
            await conn.execute(INSERT_MESSAGES, *batch.messages)
            if batch.commits[0]:
                await conn.execute(INSERT_COMMITS, *batch.commits)

    async def finish(self) -> None:
        """Wait for every batch, rebuild the GIN indexes, ``VACUUM ANALYZE``, disconnect."""
        for task in self.pending:
            await task
        elapsed = time.monotonic() - self.started
        print(f"  rows loaded in {elapsed:,.0f} s; building GIN indexes", flush=True)
        async with self.pool.acquire() as conn:
            await conn.execute("SET maintenance_work_mem = '1GB'")
            for sql in GIN_INDEXES.values():
                await conn.execute(sql)
            await conn.execute("VACUUM ANALYZE")
        await self.pool.close()


async def build(dsn: str, shape: Shape, *, batch_threads: int = 500, workers: int = 2) -> Terms:
    """Fill the (migrated, empty) database at ``dsn``; return the planted terms."""
    rng = random.Random(shape.seed)
    templates, real_messages = _load_real()
    prepared = prepare_messages(real_messages)
    terms, planted = plant_terms(shape, rng)
    loader = await BulkLoader.open(dsn, workers)
    batch = Batch()
    written = 0
    for index in range(shape.threads):
        template = rng.choice(templates)
        thread_id = uuid.UUID(int=rng.getrandbits(128), version=4)
        user = rng.randrange(shape.users)
        doc = dict(template)
        doc["visibility"] = rng.choices(["organization", "private", "public"], [6, 3, 1])[0]
        markers = planted.get(index, [])
        vector = thread_vector(doc)
        columns = derived_columns(doc)
        count = rng.randint(1, 2 * shape.mean_messages - 1)
        picks = [rng.randrange(len(real_messages)) for _ in range(count)]
        marked_seq = {rng.randrange(count): " ".join(markers)} if markers else {}
        when = NOW - timedelta(seconds=rng.randrange(365 * 86400))
        stored = {
            k: v
            for k, v in doc.items()
            if k not in ("id", "version", "created_at", "updated_at", "last_activity_at")
        }
        batch.add_thread(
            thread_id, f"user{user}", f"org{user % shape.orgs}", columns["visibility"], when,
            columns["title"], columns["workspace_root"], columns["git_branch"],
            columns["git_remote_url"], columns["provider"], columns["model"], count,
            dump_json(stored), vector,
        )  # fmt: skip
        for seq, pick in enumerate(picks):
            extra = " ".join(
                filter(None, [marked_seq.get(seq), COMMON_WORD if rng.random() < 0.5 else ""])
            )
            if extra:
                message = prepare_messages([_with_text(real_messages[pick], extra)])[0]
            else:
                message = prepared[pick]
            batch.add_message(
                thread_id, seq, message.role, message.body, message.content_hash, message.vector,
            )  # fmt: skip
        for sha in commit_shas(doc):
            batch.commits[0].append(thread_id)
            batch.commits[1].append(sha)
        if len(batch.threads[0]) >= batch_threads or index == shape.threads - 1:
            await loader.write(batch)
            written += len(batch.threads[0])
            batch = Batch()
            if written % 10_000 < batch_threads:
                rate = written / (time.monotonic() - loader.started)
                print(f"  {written:>7} threads written ({rate:,.0f}/s)", flush=True)
    await loader.finish()
    print(f"  corpus ready in {time.monotonic() - loader.started:,.0f} s", flush=True)
    return terms


def fingerprint(shape: Shape) -> str:
    """A short id of a corpus shape, to know whether a database holds it already."""
    key = {**shape.__dict__, "analyzer": ANALYZER}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
