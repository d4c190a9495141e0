"""The online rebuild of stored search vectors (issue 14, "Migrations rebuild what they must on
an existing database, online"; migration 0007; docs/operations.md "Search vectors").

Every row of ``threads`` and ``thread_messages`` carries ``search_version``, the analyzer
version that made its vector (:data:`loomsync.core.textsearch.vectors.VERSION`; 0 for PostgreSQL's
own ``to_tsvector``). :func:`rebuild` rewrites each row older than the current version with
the vector the write path would store today (:func:`app.threads.indexing.message_vector` of
the stored message, :func:`~app.threads.indexing.thread_vector` of the stored document):

- **Batches**, each read in one short statement and written in one short transaction with the
  progress row (``search_reindex``: the last key done, counts), so a rebuild stopped anywhere
  (a restart, a crash, SIGTERM) resumes at the batch after the last one committed. Readers are
  never blocked (MVCC); a search during the rebuild sees old and new vectors side by side.
- **No lost writes**: a row is written only if it still holds what was read (same
  ``content_hash`` for a message, same ``version`` for a thread) and is still stale, under a
  row lock taken with ``FOR UPDATE SKIP LOCKED`` in the same statement. A row written since it
  was read already holds a new vector from the write path and is left alone; a row a writer
  holds locked right now is skipped rather than waited for (no lock waits, no deadlocks with
  writers) and picked up by the sweep.
- **Sweep**: after the walk in key order, stale rows are looked for once more by a sequential
  scan (rows skipped above, forks of rows not yet rebuilt, rows an older server wrote during
  the walk) and rebuilt the same way, up to :data:`SWEEPS` rounds. Then ``ANALYZE`` refreshes
  the statistics search ranking reads (``pg_stats`` of the vectors), and the progress rows are
  marked finished. A rebuild that leaves rows behind is not finished: run it again.
- **One at a time**: an advisory lock (:data:`LOCK_KEY`) makes a second rebuild (another
  server, a ``reindex`` by hand) return at once. It is transaction-level, held by a transaction
  of its own left open (idle, no snapshot kept: it holds back no vacuum) for the rebuild, so it
  works behind PgBouncer in transaction mode too; a connection lost ends it like a session lock.

The analysis is CPU-bound Python (a fraction of a millisecond per message of the bench corpus):
``jobs`` > 1 spreads it over worker processes while one connection reads and writes in order.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from app.threads.documents import parse_json
from app.threads.indexing import message_vector, thread_vector
from app.threads.reindexsql import TABLES, Key, Table
from loomsync.core.textsearch.vectors import VERSION

log = logging.getLogger(__name__)

TARGETS = ("threads", "thread_messages")
#: ``pg_try_advisory_xact_lock`` key of the rebuild (the ASCII of "loomsrix" as a bigint).
LOCK_KEY = 0x6C6F6F6D73726978
BATCH_ROWS = 500
#: At most this many bytes of stored JSON text read in a batch (one row above it still goes).
BATCH_BYTES = 32 * 1024 * 1024
SWEEP_KEYS = 100_000
SWEEPS = 3
LOG_SECONDS = 10.0

Pause = Callable[[str, Sequence[Key]], Awaitable[None]]


def _die_with_parent() -> None:
    """Worker initializer: end with the rebuild's process (Linux ``PR_SET_PDEATHSIG``), so a
    SIGTERM or SIGKILL of the rebuild (``serve`` stopping) never leaves idle workers behind."""
    try:
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG is 1
    except (OSError, AttributeError):  # not Linux: the workers end when their queue closes
        pass


def vectors_of(target: str, sources: Sequence[str]) -> list[str | None]:
    """``tsvector`` input text for stored JSON texts of ``target`` (message bodies, or thread
    documents): what the write path stores for them. None for a text that does not parse
    (that row is left stale and reported). Runs in worker processes, so module-level."""
    make = message_vector if target == "thread_messages" else thread_vector
    out: list[str | None] = []
    for source in sources:
        try:
            out.append(make(parse_json(source)))
        except Exception:  # one bad row must not stop the rebuild
            out.append(None)
    return out


@dataclass(slots=True)
class Tally:
    """What a rebuild did to one table: rows rewritten, rows left alone (written or locked
    meanwhile, or unreadable), and rows still stale at the end."""

    target: str
    rebuilt: int = 0
    skipped: int = 0
    left: int = 0
    estimate: int = 0
    started: float = field(default_factory=time.monotonic)


@dataclass(slots=True)
class Outcome:
    """A rebuild's result: ``ran`` is False when another one held the lock; ``finished``
    when no stale row is left (the progress rows say so)."""

    ran: bool
    finished: bool
    tallies: list[Tally]


async def due(engine: AsyncEngine) -> bool:
    """Whether a rebuild to :data:`VERSION` has not finished for both tables and there is a row
    to rebuild (an indexed read of ``search_reindex`` and one of each table's primary key:
    cheap enough for every ``serve`` start). A new database holds no row an older analyzer
    made: nothing is due (issue 30 item 8: its first ``serve`` ran a rebuild of nothing and
    printed the empty counts)."""
    async with engine.connect() as conn:
        done = await conn.scalar(
            text(
                "SELECT count(*) FROM search_reindex"
                " WHERE version = :version AND finished_at IS NOT NULL"
            ),
            {"version": VERSION},
        )
        if (done or 0) >= len(TARGETS):
            return False
        rows = " OR ".join(f"EXISTS (SELECT 1 FROM {target})" for target in TARGETS)
        return bool(await conn.scalar(text(f"SELECT {rows}")))


async def rebuild(
    engine: AsyncEngine,
    *,
    jobs: int = 1,
    batch_rows: int = BATCH_ROWS,
    pause: Pause | None = None,
) -> Outcome:
    """Rebuild every stale vector of both tables (module docstring); resumes an unfinished
    rebuild of the same version. ``jobs`` worker processes analyse (1: in this process);
    ``pause`` (tests) runs after a batch is read and before it is written. Logs progress at
    INFO every :data:`LOG_SECONDS`. Database errors propagate; what was committed stays."""
    async with engine.connect() as lock:
        # a transaction-level lock in a transaction left open for the rebuild: behind PgBouncer in
        # transaction mode that open transaction keeps its backend (a session lock would stay
        # on whichever backend took it, and the unlock go to another: app/pooler.py)
        got = await lock.scalar(text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": LOCK_KEY})
        if not got:
            await lock.rollback()
            log.info("search reindex: another rebuild is running; leaving it to that one")
            return Outcome(ran=False, finished=False, tallies=[])
        pool = ProcessPoolExecutor(jobs, initializer=_die_with_parent) if jobs > 1 else None
        try:
            tallies = [
                await _rebuild_table(engine, target, pool, jobs, batch_rows, pause)
                for target in TARGETS
            ]
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)
            await lock.rollback()  # ends the transaction, and the lock with it
    return Outcome(ran=True, finished=all(t.left == 0 for t in tallies), tallies=tallies)


async def _start(conn: AsyncConnection, target: str) -> Any:
    """The progress row of ``target``, started afresh unless it is for this version."""
    await conn.execute(
        text(
            "INSERT INTO search_reindex (target, version) VALUES (:target, :version)"
            " ON CONFLICT (target) DO UPDATE SET version = EXCLUDED.version,"
            " after_thread = NULL, after_seq = NULL, rebuilt = 0, skipped = 0,"
            " started_at = now(), updated_at = now(), finished_at = NULL"
            " WHERE search_reindex.version <> EXCLUDED.version"
        ),
        {"target": target, "version": VERSION},
    )
    row = (
        await conn.execute(
            text("SELECT * FROM search_reindex WHERE target = :target"), {"target": target}
        )
    ).one()
    await conn.commit()
    return row


async def _rebuild_table(
    engine: AsyncEngine,
    target: str,
    pool: Executor | None,
    jobs: int,
    batch_rows: int,
    pause: Pause | None,
) -> Tally:
    table = TABLES[target]
    tally = Tally(target)
    async with engine.connect() as conn:
        progress = await _start(conn, target)
        tally.estimate = int(
            await conn.scalar(
                text(
                    "SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = CAST(:t AS regclass)"
                ),
                {"t": target},
            )
            or 0
        )
        await conn.commit()
        after: Key | None = None
        if progress.after_thread is not None:
            after = (progress.after_thread, progress.after_seq or 0)
        if progress.finished_at is None:
            log.info(
                "search reindex: %s to version %d, %s (about %d rows)",
                target,
                VERSION,
                "resuming" if after else "starting",
                tally.estimate,
            )

            async def walk() -> list[Any] | None:
                nonlocal after
                if after is None:
                    sql, params = table.walk_first, {}
                else:
                    sql, params = (
                        table.walk_after,
                        {"after_thread": after[0], "after_seq": after[1]},
                    )
                found = list(
                    await conn.execute(text(sql), {**params, "version": VERSION, "n": batch_rows})
                )
                await conn.commit()
                if not found:
                    return None
                keys = _within_budget(found)
                after = keys[-1]
                return await _fetch(conn, table, keys)

            await _pipeline(conn, table, target, walk, tally, pool, jobs, pause, track=True)
        for _ in range(SWEEPS):
            keys = [
                (r[0], r[1])
                for r in await conn.execute(
                    text(table.sweep), {"version": VERSION, "n": SWEEP_KEYS}
                )
            ]
            await conn.commit()
            tally.left = len(keys)
            if not keys:
                break
            log.info("search reindex: %s: %d stale rows found by the sweep", target, len(keys))
            chunks = [keys[i : i + batch_rows] for i in range(0, len(keys), batch_rows)]

            async def by_keys(chunks: list[list[Key]] = chunks) -> list[Any] | None:
                # empty when the whole chunk was rebuilt meanwhile
                return await _fetch(conn, table, chunks.pop(0)) if chunks else None

            await _pipeline(conn, table, target, by_keys, tally, pool, jobs, pause, track=False)
        else:
            tally.left = len(
                list(await conn.execute(text(table.sweep), {"version": VERSION, "n": SWEEP_KEYS}))
            )
        if tally.left == 0:
            await conn.execute(text(f"ANALYZE {target} (search_vector)"))
            await conn.execute(
                text(
                    "UPDATE search_reindex SET finished_at = now(), updated_at = now()"
                    " WHERE target = :target"
                ),
                {"target": target},
            )
        await conn.commit()
    log.info(
        "search reindex: %s %s: %d rebuilt, %d left alone (written meanwhile), %d still stale,"
        " %.1f s",
        target,
        "finished" if tally.left == 0 else "NOT finished: run `loomsync-server reindex` again",
        tally.rebuilt,
        tally.skipped,
        tally.left,
        time.monotonic() - tally.started,
    )
    return tally


def _within_budget(found: Sequence[Any]) -> list[Key]:
    """The keys of the first rows of ``found`` (key, key, stored size) whose stored texts add up
    to at most :data:`BATCH_BYTES` (at least one row), so a batch of huge messages stays small."""
    keys: list[Key] = []
    total = 0
    for row in found:
        total += row[2] or 0
        if keys and total > BATCH_BYTES:
            break
        keys.append((row[0], row[1]))
    return keys


async def _fetch(conn: AsyncConnection, table: Table, keys: Sequence[Key]) -> list[Any]:
    """The rows of ``keys`` still stale: key, guard (hash or version) and stored JSON text."""
    params: dict[str, Any] = {"ids": [k[0] for k in keys], "version": VERSION}
    if table is TABLES["thread_messages"]:
        params["seqs"] = [k[1] for k in keys]
    rows = list(await conn.execute(text(table.by_keys), params))
    await conn.commit()
    return rows


async def _pipeline(
    conn: AsyncConnection,
    table: Table,
    target: str,
    read: Callable[[], Awaitable[list[Any] | None]],
    tally: Tally,
    pool: Executor | None,
    jobs: int,
    pause: Pause | None,
    *,
    track: bool,
) -> None:
    """Read batches with ``read`` (None ends; an empty batch is skipped), analyse them (in
    ``pool`` when given, up to ``jobs`` batches ahead) and write them in the order read."""
    loop = asyncio.get_running_loop()
    pending: list[tuple[list[Any], asyncio.Future[list[str | None]]]] = []
    exhausted = False
    last_log = time.monotonic()
    while True:
        while not exhausted and len(pending) < jobs:
            rows = await read()
            if rows is None:
                exhausted = True
                break
            if not rows:
                continue
            sources = [r.source for r in rows]
            future: asyncio.Future[list[str | None]]
            if pool is None:
                future = loop.create_future()
                future.set_result(vectors_of(target, sources))
            else:
                future = asyncio.wrap_future(pool.submit(vectors_of, target, sources))
            pending.append((rows, future))
        if not pending:
            return
        rows, future = pending.pop(0)
        vectors = await future
        if pause is not None:
            await pause(target, [(r[0], r[1]) for r in rows])
        await _write(conn, table, target, rows, vectors, tally, track=track)
        now = time.monotonic()
        if now - last_log >= LOG_SECONDS:
            last_log = now
            rate = tally.rebuilt / max(now - tally.started, 1e-9)
            log.info(
                "search reindex: %s: %d rows rebuilt of about %d, %.0f rows/s",
                target,
                tally.rebuilt,
                tally.estimate,
                rate,
            )


async def _write(
    conn: AsyncConnection,
    table: Table,
    target: str,
    rows: list[Any],
    vectors: list[str | None],
    tally: Tally,
    *,
    track: bool,
) -> None:
    """One transaction: the batch's compare-and-set update and (``track``) the progress row."""
    ready = [(r, v) for r, v in zip(rows, vectors, strict=True) if v is not None]
    params: dict[str, Any] = {
        "ids": [r[0] for r, _ in ready],
        "guards": [r.guard for r, _ in ready],
        "vectors": [v for _, v in ready],
        "version": VERSION,
    }
    if target == "thread_messages":
        params["seqs"] = [r[1] for r, _ in ready]
    written = 0
    if ready:
        written = (await conn.execute(text(table.write), params)).rowcount or 0
    tally.rebuilt += written
    tally.skipped += len(rows) - written
    if track:
        last = rows[-1]
        await conn.execute(
            text(
                "UPDATE search_reindex SET after_thread = :after_thread, after_seq = :after_seq,"
                " rebuilt = rebuilt + :rebuilt, skipped = skipped + :skipped, updated_at = now()"
                " WHERE target = :target"
            ),
            {
                **table.progress_after((last[0], last[1])),
                "rebuilt": written,
                "skipped": len(rows) - written,
                "target": target,
            },
        )
    await conn.commit()
