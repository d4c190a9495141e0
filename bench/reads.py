"""Whole-thread reads (issue 7 item 2): GET of 1, 10 and 30 MB threads against the raw floor.

    .venv/bin/python -m bench.reads [--quick]

Recreates the database ``loomsync_bench_reads``, migrates it and, through the API of a real
uvicorn server, PUTs one thread per size (and a 20 KB one) whose messages are real messages
(all those of ``../shared/data/threads/``, shuffled and repeated) until its JSON reaches the
size, then ANALYZEs. For each size, on a fresh one-worker server (so that the heap grown by the
PUTs or by another size does not hide what a read needs): a warm-up GET of the 20 KB thread and
a warm-up raw read, then N pairs of one GET (timed by the client to the last byte, and by the
server's ``Server-Timing``, while the kernel's peak-RSS mark of the server process, reset just
before, gives its memory) and one raw read, the floor: the server's own statements issued by
asyncpg (the thread's ``document::text``, then its messages' JSON texts as UTF-8 bytes in runs
of ``RUN_MESSAGES`` seqs) and joined into one ``bytes`` object. Sizes are MB of 10^6 bytes.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import psutil

from app.auth import create_token
from app.config import Settings
from app.database import SERVER_SETTINGS
from app.threads.reads import RUN_MESSAGES
from bench.corpus import REAL_THREADS
from bench.harness import (
    Section,
    fresh_database,
    percentiles,
    server_ms,
    standalone,
    uvicorn_process,
)
from loomsync.core.document.ids import ThreadId

DATABASE = "loomsync_bench_reads"
MB = 1_000_000
SIZES_MB = (1, 10, 30)
RUNS, QUICK_RUNS = 10, 3
MAX_RATIO = 2.0
MAX_MEMORY = 3.0
USER = "reader"
#: The build server may take a while to validate and index a 30 MB PUT.
BUILD_ENV = {"LOOMSYNC_REQUEST_TIMEOUT": "600", "LOOMSYNC_MAX_BODY_BYTES": str(200 * MB)}

#: The statements of app/threads/reads.py, raw: the document's text and message count, then
#: the messages' JSON texts as UTF-8 bytes in runs of RUN_MESSAGES seqs (joined in PostgreSQL).
FLOOR_ROW_SQL = "SELECT document::text, message_count FROM threads WHERE id = $1"
FLOOR_RUN_SQL = (
    "SELECT string_agg(convert_to(body::text, 'UTF8'), '\\x2c'::bytea ORDER BY seq)"
    " FROM thread_messages WHERE thread_id = $1 AND seq >= $2 AND seq < $3"
)

#: The thread measured first, to show the fixed cost of a GET (no target).
SMALL_BYTES = 20_000
HEADER = (
    " size     MB   msgs | API p50    p95 ms | server p50 | floor p50    p95 ms |"
    " API/floor p50   p95 |  MB/s | peak mem +MB  x size"
)


def compact(value: Any) -> str:
    """Compact JSON text, non-ASCII kept as is (as the server stores messages)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def real_corpus() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the largest real thread without messages and server fields, every real message)."""
    docs = [json.loads(p.read_text()) for p in sorted(REAL_THREADS.glob("T-*.json"))]
    messages = [m for doc in docs for m in doc["conversation"]["messages"]]
    template = max(docs, key=lambda d: len(d["conversation"]["messages"]))
    template = {k: v for k, v in template.items() if k not in ("id", "version", "updated_at")}
    template["conversation"] = {}
    return template, messages


def build_document(
    template: dict[str, Any], messages: list[dict[str, Any]], size: int, seed: int
) -> dict[str, Any]:
    """A thread document of about ``size`` bytes of JSON: ``template`` plus real messages,
    shuffled and repeated until the messages' compact JSON reaches ``size``."""
    rng = random.Random(seed)
    chosen: list[dict[str, Any]] = []
    total = len(compact(template))
    while total < size:
        pool = messages[:]
        rng.shuffle(pool)
        for message in pool:
            chosen.append(message)
            total += len(compact(message).encode()) + 1
            if total >= size:
                break
    return {**template, "conversation": {"messages": chosen}}


def rss(pid: int) -> int:
    """Resident memory of process ``pid`` in bytes."""
    return int(psutil.Process(pid).memory_info().rss)


def reset_high_water(pid: int) -> bool:
    """Reset the kernel's peak-RSS mark of ``pid`` (``/proc/pid/clear_refs`` 5); False if not
    allowed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def high_water(pid: int) -> int:
    """The kernel's peak RSS of ``pid`` since its last reset (``VmHWM``) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/pid/status")


class PeakRss:
    """Context manager: RSS of ``pid`` just before the block (``before``, bytes) and its peak
    during the block (``peak``, bytes). The peak is the kernel's exact high-water mark
    (``VmHWM``, reset on entry) when this process may reset it, which costs nothing during the
    block; otherwise a psutil sample every ``interval`` s from a background thread (which can
    miss a peak shorter than that and takes the GIL from the client now and then)."""

    def __init__(self, pid: int, interval: float = 0.002) -> None:
        self.pid, self.interval = pid, interval
        self.before = self.peak = 0
        self.exact = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss(self.pid))
            time.sleep(self.interval)

    def __enter__(self) -> PeakRss:
        self.before = self.peak = rss(self.pid)
        self.exact = reset_high_water(self.pid)
        if not self.exact:
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        self.peak = max(self.peak, rss(self.pid))
        if self.exact:
            self.peak = max(self.peak, high_water(self.pid))


@dataclass
class Measured:
    """One size's figures: body bytes, message count, per-run times (ms) and memory increases
    (bytes), and whether every peak was the kernel's exact mark."""

    size_mb: int
    body_bytes: int
    messages: int
    api_ms: list[float]
    server_ms: list[float]
    floor_ms: list[float]
    memory: list[int]
    exact: bool


def build(base: str, token: str) -> dict[int, tuple[str, int]]:
    """PUT one thread per size (and a small warm-up thread under key 0); {MB: (id, messages)}."""
    template, messages = real_corpus()
    threads: dict[int, tuple[str, int]] = {}
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=base, headers=headers, timeout=600) as client:
        for size_mb in (0, *SIZES_MB):
            doc = build_document(template, messages, size_mb * MB or SMALL_BYTES, seed=size_mb)
            thread_id = str(ThreadId.new())
            body = compact({**doc, "id": thread_id}).encode()
            response = client.put(f"/api/threads/{thread_id}", content=body)
            if response.status_code != 201:
                raise RuntimeError(
                    f"PUT {size_mb} MB: {response.status_code} {response.text[:300]}"
                )
            threads[size_mb] = (thread_id, len(doc["conversation"]["messages"]))
    return threads


async def analyze(dsn: str) -> None:
    """``ANALYZE`` the database, as autovacuum would soon after the threads were written."""
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("ANALYZE")
    finally:
        await conn.close()


async def raw_read(conn: asyncpg.Connection, key: uuid.UUID) -> int:
    """The floor's work once: the server's statements for thread ``key``, raw, and the join of
    their results into one ``bytes`` object; its length in bytes."""
    document, count = await conn.fetchrow(FLOOR_ROW_SQL, key)
    pieces = [document.encode()]
    for start in range(0, count, RUN_MESSAGES):
        pieces.append(await conn.fetchval(FLOOR_RUN_SQL, key, start, start + RUN_MESSAGES))
    return len(b",".join(pieces))


def measure(
    server: tuple[str, str, int],
    dsn: str,
    threads: dict[int, tuple[str, int]],
    size_mb: int,
    runs: int,
) -> Measured:
    """On ``server`` (base URL, token, pid), after a warm-up GET of the small thread and a
    warm-up raw read, ``runs`` pairs of one
    GET of the ``size_mb`` thread (client time, server time, server memory) and one raw read
    (time): interleaved, so that a change in the machine's load hits both alike."""
    base, token, pid = server
    thread_id, count = threads[size_mb]
    key = ThreadId.parse(thread_id).uuid
    api, server_times, floor, memory, length, exact = [], [], [], [], 0, True
    headers = {"Authorization": f"Bearer {token}"}
    with (
        asyncio.Runner() as loop,
        httpx.Client(base_url=base, headers=headers, timeout=600) as client,
    ):
        conn = loop.run(asyncpg.connect(dsn, server_settings=SERVER_SETTINGS))
        try:
            client.get(f"/api/threads/{threads[0][0]}").raise_for_status()
            loop.run(raw_read(conn, key))
            for run in range(runs):
                time.sleep(0.05)  # let the server settle
                with PeakRss(pid) as peak:
                    started = time.perf_counter()
                    response = client.get(f"/api/threads/{thread_id}")
                    api.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
                if run == 0:
                    doc = response.json()
                    if doc["id"] != thread_id or response.headers["etag"] != f'"{doc["version"]}"':
                        raise RuntimeError("GET returned another thread or a wrong ETag")
                server_times.append(server_ms(response))
                memory.append(peak.peak - peak.before)
                exact = exact and peak.exact
                length = len(response.content)
                started = time.perf_counter()
                loop.run(raw_read(conn, key))
                floor.append((time.perf_counter() - started) * 1000)
        finally:
            loop.run(conn.close())
    return Measured(size_mb, length, count, api, server_times, floor, memory, exact)


def row(m: Measured) -> str:
    """One table line."""
    api50, api95 = percentiles(m.api_ms)
    floor50, floor95 = percentiles(m.floor_ms)
    server50, _ = percentiles(m.server_ms)
    peak = max(m.memory)
    label = f"{m.size_mb} MB" if m.size_mb else f"{SMALL_BYTES // 1000} KB"
    return (
        f"{label:>5} {m.body_bytes / MB:6.2f} {m.messages:6d} | {api50:7.1f} {api95:9.1f} |"
        f" {server50:10.1f} | {floor50:9.1f} {floor95:9.1f} | {api50 / floor50:13.2f}"
        f" {api95 / floor95:5.2f} | {m.body_bytes / MB / (api50 / 1000):5.0f} |"
        f" {peak / MB:12.2f} {peak / m.body_bytes:7.2f}"
    )


def run(server_dsn: str, *, quick: bool = False) -> Section:
    """Build the threads, measure GETs and the raw floor per size; return the report section
    (table lines and, per size, the time target ``API p50 ≤ 2 x floor p50`` and the memory
    target ``peak RSS increase < 3 x size``)."""
    runs = QUICK_RUNS if quick else RUNS
    dsn = fresh_database(server_dsn, DATABASE)
    with uvicorn_process(dsn, env=BUILD_ENV) as (base, secret, _):
        token = create_token(Settings(jwt_secret=secret, _env_file=None), USER)  # type: ignore[call-arg]
        threads = build(base, token)
    asyncio.run(analyze(dsn))
    results = []
    for size_mb in (0, *SIZES_MB):
        with uvicorn_process(dsn) as (base, secret, process):
            if psutil.Process(process.pid).children():
                raise RuntimeError("the server has worker processes; RSS would miss them")
            token = create_token(Settings(jwt_secret=secret, _env_file=None), USER)  # type: ignore[call-arg]
            results.append(measure((base, token, process.pid), dsn, threads, size_mb, runs))
    section = Section("Whole-thread reads (issue 7 item 2)")
    how = "kernel VmHWM" if all(m.exact for m in results) else "psutil every 2 ms"
    section.lines = [
        f"{runs} GETs a size on a fresh 1-worker server, each followed by one raw read (the"
        " floor: the server's statements by asyncpg, joined into one bytes object);",
        f"memory: peak RSS ({how}) - RSS just before the GET, of the server process only (not"
        " PostgreSQL), max over the runs; the 20 KB row shows a GET's fixed cost (no target)",
        HEADER,
        *(row(m) for m in results),
    ]
    for m in results[1:]:
        api50, floor50 = percentiles(m.api_ms)[0], percentiles(m.floor_ms)[0]
        section.target(
            f"GET {m.size_mb} MB p50 {api50:.1f} ms ≤ {MAX_RATIO:g} x floor {floor50:.1f} ms"
            f" (= {MAX_RATIO * floor50:.1f} ms)",
            api50 <= MAX_RATIO * floor50,
        )
    for m in results[1:]:
        peak = max(m.memory)
        section.target(
            f"GET {m.size_mb} MB peak RSS increase {peak / MB:.1f} MB < {MAX_MEMORY:g} x size"
            f" {m.body_bytes / MB:.1f} MB (= {MAX_MEMORY * m.body_bytes / MB:.1f} MB)",
            peak < MAX_MEMORY * m.body_bytes,
        )
    return section


if __name__ == "__main__":
    standalone(run, __doc__)
