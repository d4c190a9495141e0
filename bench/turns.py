"""Per-turn cost curve (issue 7 item 1): one turn appended to threads of 10 to 10,000 messages.

A turn is what a coding agent adds between two saves: a user message, an assistant message with
tool calls and two tool results, each sampled from the real messages of ``../shared/data/
threads/`` (the same turns, in the same order, for every thread size, so the sizes compare
like with like). Each thread is seeded with real messages, synced once (a PUT), then receives
``turns`` turns through the real client: ``SyncingThreadStore.save_and_sync`` (local file, queue,
delta sync as ``POST …/messages``) against a real uvicorn server. Turns are interleaved across
the sizes (turn 1 of every size, then turn 2, …) so that anything that drifts over the run (the
GIN pending lists filling, autovacuum, checkpoints) lands on every size alike.

Per turn: the server's time (``Server-Timing``), the bytes the client sent (request line,
headers and body, counted by a wrapping httpx transport), the requests made, and what PostgreSQL
wrote (rows per table, TOAST chunks, index records, WAL bytes; :mod:`bench.wal`). For contrast,
the cost of re-uploading the whole thread (one PUT of the same thread), as a client without
delta sync would on every save.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from app.auth import create_token
from app.config import Settings
from bench.harness import (
    Section,
    asyncpg_dsn,
    fresh_database,
    percentiles,
    server_ms,
    standalone,
    uvicorn_server,
)
from bench.realdata import real_messages
from bench.wal import WalMeter, Writes
from loomsync.core.document.model import Message, Thread
from loomsync.http.client import ThreadSyncClient
from loomsync.store.local import LocalThreadStore
from loomsync.sync.syncing import SyncingThreadStore

DATABASE = "loomsync_bench_turns"
SIZES = (10, 100, 1_000, 10_000)
TARGET_RATIO = 1.5


class CountingTransport(httpx.BaseTransport):
    """An httpx transport that counts the bytes of each request it sends and keeps the server
    time of each response (``Server-Timing``)."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent_bytes = 0
        self.requests = 0
        self.server_ms: list[float] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; count its request line, headers and body (bytes)."""
        body = request.read()
        line = f"{request.method} {request.url.raw_path.decode()} HTTP/1.1\r\n".encode()
        headers = sum(len(k) + len(v) + 4 for k, v in request.headers.raw) + 2
        self.sent_bytes += len(line) + headers + len(body)
        self.requests += 1
        response = self.inner.handle_request(request)
        response.read()
        self.server_ms.append(server_ms(response))
        return response

    def close(self) -> None:
        """Close the wrapped transport."""
        self.inner.close()


@dataclass
class Curve:
    """Per-turn samples of one thread size."""

    size: int
    server_ms: list[float] = field(default_factory=list)
    client_ms: list[float] = field(default_factory=list)
    sent_bytes: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    writes: list[Writes] = field(default_factory=list)
    put_ms: list[float] = field(default_factory=list)
    put_bytes: int = 0
    held: list[int] = field(default_factory=list)  # messages in the thread before each turn


def _turns(pool: dict[str, list[dict[str, Any]]], count: int, seed: int) -> list[list[Message]]:
    """``count`` turns: user, assistant with tool calls, two tool results (real messages)."""
    rng = random.Random(seed)
    kinds = ("user", "assistant_calls", "tool", "tool")
    return [[Message.model_validate(rng.choice(pool[k])) for k in kinds] for _ in range(count)]


def _seed(pool: dict[str, list[dict[str, Any]]], size: int, seed: int) -> Thread:
    rng = random.Random(seed)
    everything = [m for messages in pool.values() for m in messages]
    messages = [Message.model_validate(rng.choice(everything)) for _ in range(size)]
    thread = Thread(metadata={"title": f"per-turn benchmark, {size} messages"})
    thread.conversation.messages.extend(messages)
    return thread


class Bench:
    """One client store and one meter for all sizes."""

    def __init__(self, base: str, token: str, folder: Path, meter: WalMeter) -> None:
        self.transport = CountingTransport()
        self.client = ThreadSyncClient(base, token, transport=self.transport, retries=0)
        local = LocalThreadStore(folder / "threads")
        self.store = SyncingThreadStore(
            local, self.client, sync_dir=folder / "sync", background=False
        )
        self.meter = meter

    async def turn(self, thread: Thread, messages: list[Message], curve: Curve) -> Thread:
        """Add one turn and sync it; record its costs in ``curve``."""
        thread.conversation.messages.extend(messages)
        sent, requests, timings = (
            self.transport.sent_bytes,
            self.transport.requests,
            len(self.transport.server_ms),
        )
        await self.meter.start()
        started = time.perf_counter()
        outcome = await asyncio.to_thread(self.store.save_and_sync, thread)
        curve.client_ms.append((time.perf_counter() - started) * 1000)
        curve.writes.append(await self.meter.stop())
        if outcome.status != "synced" or not (outcome.detail or "").startswith("append"):
            raise RuntimeError(f"a turn was not synced as an append: {outcome}")
        curve.server_ms.append(sum(self.transport.server_ms[timings:]))
        curve.sent_bytes.append(self.transport.sent_bytes - sent)
        curve.requests.append(self.transport.requests - requests)
        assert outcome.thread is not None
        return outcome.thread

    async def whole_put(self, thread: Thread, curve: Curve, repeats: int) -> None:
        """What re-uploading the whole thread costs: ``repeats`` PUTs of it (server ms, bytes)."""
        version = thread.version or 0
        for _ in range(repeats):
            sent, timings = self.transport.sent_bytes, len(self.transport.server_ms)
            put = await asyncio.to_thread(self.client.put_thread, thread, base_version=version)
            version = put.version or version
            curve.put_ms.append(self.transport.server_ms[timings])
            curve.put_bytes = self.transport.sent_bytes - sent

    def close(self) -> None:
        """Close the store and the client."""
        self.store.close()
        self.client.close()


#: A thread is replaced by a freshly seeded one before it would exceed this multiple of its
#: size, so that every measured turn appends to a thread of about its size.
REGROW = 1.25


async def _seeded(bench: Bench, pool: dict[str, list[dict[str, Any]]], size: int, n: int) -> Thread:
    """A new thread of ``size`` real messages (the ``n``-th for this size), synced (a PUT)."""
    seeded = await asyncio.to_thread(bench.store.save_and_sync, _seed(pool, size, size * 1000 + n))
    if seeded.thread is None or seeded.status != "synced":
        raise RuntimeError(f"seeding failed: {seeded}")
    return seeded.thread


async def measure(base: str, secret: str, dsn: str, turns: int) -> list[Curve]:
    """Seed one thread per size, then interleave ``turns`` turns over the sizes; a thread that
    would outgrow ``REGROW`` x its size is first replaced by a new one (not timed)."""
    pool = real_messages()
    token = create_token(Settings(jwt_secret=secret, _env_file=None), "turns")  # type: ignore[call-arg]
    conn = await asyncpg.connect(asyncpg_dsn(dsn))
    meter = WalMeter(conn)
    await meter.open()
    curves = [Curve(size) for size in SIZES]
    with tempfile.TemporaryDirectory(prefix="loomsync-bench-turns-") as folder:
        bench = Bench(base, token, Path(folder), meter)
        try:
            threads = [await _seeded(bench, pool, c.size, 0) for c in curves]
            await conn.execute("CHECKPOINT; ANALYZE")
            plan = _turns(pool, turns + 2, seed=1)
            for index, messages in enumerate(plan):
                for i, curve in enumerate(curves):
                    if len(threads[i].messages) + len(messages) > curve.size * REGROW:
                        threads[i] = await _seeded(bench, pool, curve.size, index + 1)
                    if index >= 2:
                        curve.held.append(len(threads[i].messages))
                    scratch = Curve(curve.size)
                    threads[i] = await bench.turn(
                        threads[i], messages, scratch if index < 2 else curve
                    )
            for i, curve in enumerate(curves):
                await bench.whole_put(threads[i], curve, repeats=3)
        finally:
            bench.close()
            await conn.close()
    return curves


def _p(values: list[float]) -> tuple[float, float]:
    return percentiles([float(v) for v in values])


def table(curves: list[Curve], section: Section) -> None:
    """Fill ``section`` with one row per size and the target verdicts (10,000 vs 10)."""
    section.lines.append(
        "messages held | server ms p50   p95 | client ms p50 | bytes sent | req | rows written"
        " (threads+messages) | TOAST | index recs | WAL bytes || whole PUT: bytes  server ms"
    )
    figures: dict[int, dict[str, float]] = {}
    for c in curves:
        s50, s95 = _p(c.server_ms)
        rows = [w.row_count for w in c.writes]
        figure = {
            "server p50": s50,
            "server p95": s95,
            "bytes sent": _p(c.sent_bytes)[0],
            "rows written": _p(rows)[0],
            "WAL bytes": _p([w.wal_bytes for w in c.writes])[0],
        }
        figures[c.size] = figure
        split = f"{_p([w.rows['threads'] for w in c.writes])[0]:.0f}+{_p([w.rows['thread_messages'] for w in c.writes])[0]:.0f}"
        section.lines.append(
            f"{f'{min(c.held):,}-{max(c.held):,}':>13} | {s50:13.2f} {s95:5.2f} | {_p(c.client_ms)[0]:13.1f} | "
            f"{figure['bytes sent']:10,.0f} | {_p(c.requests)[0]:3.0f} | {figure['rows written']:5.0f} ({split}) "
            f"{'':10}| {_p([w.toast_chunks for w in c.writes])[0]:5.0f} | {_p([w.index_records for w in c.writes])[0]:10.0f} | "
            f"{figure['WAL bytes']:9,.0f} || {c.put_bytes:16,d}  {_p(c.put_ms)[0]:9.1f}"
        )
    small, large = figures[SIZES[0]], figures[SIZES[-1]]
    for name in small:
        ratio = large[name] / small[name] if small[name] else float("inf")
        section.target(
            f"{name}: {SIZES[-1]:,} messages {large[name]:,.2f} vs {SIZES[0]} messages "
            f"{small[name]:,.2f} = {ratio:.2f}x (target <= {TARGET_RATIO}x)",
            ratio <= TARGET_RATIO,
        )


def run(server_dsn: str, *, quick: bool = False) -> Section:
    """Recreate ``loomsync_bench_turns``, serve it with one uvicorn worker, measure, report."""
    turns = 12 if quick else 40
    section = Section(f"Per-turn cost (issue 7 item 1): {turns} turns a size, interleaved")
    dsn = fresh_database(server_dsn, DATABASE)
    with uvicorn_server(dsn) as (base, secret):
        curves = asyncio.run(measure(base, secret, dsn, turns))
    table(curves, section)
    return section


if __name__ == "__main__":
    standalone(run, __doc__)
