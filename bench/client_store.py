"""The client's local store (issue 15 items 1-3): a save costs the turn, not the thread.

    .venv/bin/python -m bench.client_store [--quick] [--record] [--threads N]

1. **Per-turn save**: p50/p95 of ``LocalThreadStore.save`` and of ``SyncingThreadStore.save``
   (offline: no server, so no push) for one turn (user, assistant with tool calls, two tool
   results: real messages of ``../shared/data/threads/``, about 1.5 KB each, the same turns for
   every size) appended to threads of 10, 1,000 and 10,000 real messages; turns interleaved
   across the sizes; a thread is replaced by a freshly seeded one (not timed) before it
   outgrows its size by 25%. Targets: p50 at 10,000 <= 1.5 x p50 at 10, and under 5 ms.
2. **Memory**: tracemalloc peak of one such save at 10 and at 10,000 messages.
3. **Push of one turn** through a real uvicorn server at 10 and 10,000 messages
   (``SyncingThreadStore.sync_thread`` after an offline save): client time (wall time less the
   server's ``Server-Timing``), bytes the process read meanwhile (``rchar`` of
   ``/proc/self/io``: files and sockets), bytes sent.
4. **``loomsync list --limit 50``** as a subprocess (the CLI's start-up included) over
   ``--threads`` (100,000) local threads: the first run (the summary index built from the
   files, as after the migration) and the median of 5 warm runs. Target: under 1 s.
5. **Local search after one more turn** at 10,000 messages: the search that brings the index up
   to date (one turn indexed, not the thread) against the first, whole build.

Threads for (4) are written once (by the store, in ``/dev/shm``, then copied) and kept in
``$TMPDIR/loomsync-bench-list-<N>``. ``--record`` appends the tables to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.client_queue import QUEUED, new_thread_saves, queued_store
from bench.harness import Section, percentiles, record
from bench.realdata import real_messages, real_templates
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Message, Thread
from loomsync.store.local import LocalThreadStore
from loomsync.sync.syncing import SyncingThreadStore

SIZES = (10, 1_000, 10_000)
TURN_KINDS = ("user", "assistant_calls", "tool", "tool")
REGROW = 1.25
LIST_THREADS = 100_000
Saver = Callable[[Thread], Thread]


def _turns(count: int, seed: int) -> list[list[dict[str, Any]]]:
    """``count`` turns of real message documents (validated into models at each use)."""
    pool = real_messages()
    rng = random.Random(seed)
    return [[rng.choice(pool[kind]) for kind in TURN_KINDS] for _ in range(count)]


def _seed(size: int, seed: int) -> Thread:
    """A new thread of ``size`` real messages (real metadata)."""
    pool = [m for messages in real_messages().values() for m in messages]
    rng = random.Random(seed)
    thread = Thread.model_validate(
        {**rng.choice(real_templates()), "metadata": {"title": f"client store bench, {size}"}}
    )
    thread.conversation.messages.extend(
        Message.model_validate(rng.choice(pool)) for _ in range(size)
    )
    return thread


def _ms(seconds: float) -> float:
    return seconds * 1000


class Curve:
    """Per-turn samples of one store at each size."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.samples: dict[int, list[float]] = {size: [] for size in SIZES}


def save_curves(folder: Path, turns: int) -> list[Curve]:
    """(1): per-turn save time of both stores at every size, turns interleaved."""
    local = LocalThreadStore(folder / "local")
    syncing = SyncingThreadStore(
        LocalThreadStore(folder / "syncing"), None, sync_dir=folder / "sync", background=False
    )
    queued = queued_store(folder / "queued")
    savers: list[tuple[Curve, Saver]] = [
        (Curve("LocalThreadStore.save"), local.save),
        (Curve("SyncingThreadStore.save (offline)"), syncing.save),
        (Curve(f"  same, {QUEUED:,} threads queued"), queued.save),
    ]
    threads = {(c.name, size): save(_seed(size, size)) for c, save in savers for size in SIZES}
    plan = _turns(turns + 2, seed=1)
    for index, turn in enumerate(plan):
        for curve, save in savers:
            for size in SIZES:
                thread = threads[curve.name, size]
                if len(thread.messages) + len(turn) > size * REGROW:
                    thread = save(_seed(size, size * 1000 + index))
                thread.conversation.messages.extend(Message.model_validate(m) for m in turn)
                started = time.perf_counter()
                thread = save(thread)
                if index >= 2:  # two warm-up turns
                    curve.samples[size].append(_ms(time.perf_counter() - started))
                threads[curve.name, size] = thread
    syncing.close()
    queued.close()
    return [curve for curve, _ in savers]


def fsync_floor(folder: Path, turns: int) -> list[float]:
    """What one turn costs at the least on this disk: its messages' JSON lines appended to a
    file and fsynced (ms per turn)."""
    samples = []
    with open(folder / "floor.jsonl", "ab") as handle:
        for turn in _turns(turns, seed=1):
            started = time.perf_counter()
            handle.write(b"".join(json.dumps(m).encode() + b"\n" for m in turn))
            handle.flush()
            os.fsync(handle.fileno())
            samples.append(_ms(time.perf_counter() - started))
    return samples


def memory_peaks(folder: Path, saves: int = 16) -> dict[int, tuple[int, int]]:
    """(2): tracemalloc peak (bytes) of one turn's save at 10 and 10,000 messages: (median,
    max) over ``saves`` consecutive turns. The max includes the occasional growth of a list of
    message pointers (CPython over-allocates by about 1/8, so a save now and then reallocates
    a list as long as the thread, as the caller's own ``messages.extend`` does); the median is
    what a save costs."""
    store = LocalThreadStore(folder / "memory")
    peaks: dict[int, tuple[int, int]] = {}
    turns = _turns(saves, seed=2)
    for size in (10, 10_000):
        thread = store.save(_seed(size, size))
        thread = store.save(thread)  # warm: the store has read and written it once
        samples = []
        for turn in turns:
            thread.conversation.messages.extend(Message.model_validate(m) for m in turn)
            tracemalloc.start()
            thread = store.save(thread)
            samples.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        peaks[size] = (int(statistics.median(samples)), max(samples))
    return peaks


def _rchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    return 0


def push_costs(folder: Path, turns: int) -> dict[int, dict[str, float]]:
    """(3): one turn pushed through a real server at 10 and 10,000 messages."""
    import httpx

    from app.auth import create_token
    from app.config import Settings
    from bench.harness import fresh_database, server_dsn, server_ms, uvicorn_server
    from loomsync.http.client import ThreadSyncClient

    class Counting(httpx.HTTPTransport):
        def __init__(self) -> None:
            super().__init__()
            self.sent = 0
            self.server: list[float] = []

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            self.sent += len(request.read()) + sum(len(k) + len(v) for k, v in request.headers.raw)
            response = super().handle_request(request)
            response.read()
            self.server.append(server_ms(response))
            return response

    dsn = fresh_database(server_dsn(), "loomsync_bench_client_store")
    out: dict[int, dict[str, float]] = {}
    with uvicorn_server(dsn) as (base, secret):
        token = create_token(Settings(jwt_secret=secret, _env_file=None), "client-store")  # type: ignore[call-arg]
        transport = Counting()
        client = ThreadSyncClient(base, token, transport=transport, retries=0)
        store = SyncingThreadStore(
            LocalThreadStore(folder / "push"), client, sync_dir=folder / "push-sync",
            background=False,
        )  # fmt: skip
        try:
            for size in (10, 10_000):
                thread = store.save(_seed(size, size))
                store.sync_thread(str(thread.id))  # the first upload (a PUT), not timed
                wall, server, read, sent, details = [], [], [], [], set()
                for turn in _turns(turns, seed=3):
                    thread.conversation.messages.extend(Message.model_validate(m) for m in turn)
                    thread = store.save(thread)
                    timings, bytes_sent, before = len(transport.server), transport.sent, _rchar()
                    started = time.perf_counter()
                    outcome = store.sync_thread(str(thread.id))
                    wall.append(_ms(time.perf_counter() - started))
                    read.append(_rchar() - before)
                    server.append(sum(transport.server[timings:]))
                    sent.append(transport.sent - bytes_sent)
                    details.add(outcome.detail.split(" ")[0] if outcome.detail else outcome.status)
                client_ms = [w - s for w, s in zip(wall, server, strict=True)]
                out[size] = {
                    "client_p50": percentiles(client_ms)[0],
                    "client_p95": percentiles(client_ms)[1],
                    "server_p50": percentiles(server)[0],
                    "read_p50": statistics.median(read),
                    "sent_p50": statistics.median(sent),
                    "how": ",".join(sorted(details)),  # type: ignore[dict-item]
                }
        finally:
            store.close()
            client.close()
    return out


def _write_threads(args: tuple[Path, int, int, int]) -> None:
    """Write threads ``start`` to ``stop`` of the listing folder through the store."""
    folder, start, stop, seed = args
    store = LocalThreadStore(folder)
    rng = random.Random(seed)
    templates = real_templates()
    pool = real_messages()["user"]
    began = datetime(2025, 1, 1, tzinfo=UTC)
    for n in range(start, stop):
        when = began + timedelta(seconds=n * 311)
        doc = {
            **rng.choice(templates),
            "id": str(ThreadId.new()),
            "created_at": when,
            "last_activity_at": when + timedelta(minutes=n % 90),
            "metadata": {"title": f"listed thread {n}"},
        }
        thread = Thread.model_validate(doc)
        thread.conversation.messages.extend(
            Message.model_validate(rng.choice(pool)) for _ in range(2)
        )
        store.save(thread)


def listing_folder(count: int) -> Path:
    """``count`` local threads in a kept folder on disk. Written once, in parallel, through the
    store into a RAM folder (``/dev/shm``: an fsync there is free, and 100,000 of them on this
    disk take minutes), then copied to disk whole."""
    data = Path(tempfile.gettempdir()) / f"loomsync-bench-list-{count}"
    if (data / "complete").exists():
        return data
    ram = Path(tempfile.mkdtemp(prefix="loomsync-bench-list-", dir="/dev/shm"))
    try:
        threads = ram / "loomsync" / "threads"
        LocalThreadStore(threads)  # the folder, its format marker
        jobs = 2
        step = (count + jobs - 1) // jobs
        work = [(threads, i * step, min(count, (i + 1) * step), i) for i in range(jobs)]
        with ProcessPoolExecutor(jobs) as pool:
            list(pool.map(_write_threads, work))
        shutil.rmtree(data, ignore_errors=True)
        shutil.copytree(ram, data)
    finally:
        shutil.rmtree(ram, ignore_errors=True)
    (data / "complete").touch()
    return data


def list_times(count: int, runs: int = 5) -> tuple[float, list[float]]:
    """(4): ``loomsync list --limit 50`` wall time (s): the first run, then warm runs."""
    data = listing_folder(count)
    state = Path(tempfile.mkdtemp(prefix="loomsync-bench-list-state-"))
    env = {
        **os.environ,
        "XDG_DATA_HOME": str(data),
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CONFIG_HOME": str(state / "config"),
        "LOOMSYNC_SERVER_URL": "",
        "LOOMSYNC_TOKEN": "",
        "COLUMNS": "160",
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached
    command = [str(Path(sys.executable).with_name("loomsync")), "list", "--limit", "50"]

    def once() -> float:
        started = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, check=False)
        took = time.perf_counter() - started
        if done.returncode != 0 or done.stdout.count(b"\n") < 50:
            raise RuntimeError(f"loomsync list failed: {done.stderr.decode()[-2000:]}")
        return took

    for suffix in ("", "-wal", "-shm"):  # the first run rebuilds the index from the files
        (data / "loomsync" / "threads" / f".index.sqlite3{suffix}").unlink(missing_ok=True)
    first = once()
    return first, [once() for _ in range(runs)]


def search_costs(folder: Path) -> dict[str, float]:
    """(5): local search at 10,000 messages: the first (whole) build, then after one turn."""
    store = LocalThreadStore(folder / "search")
    thread = store.save(_seed(10_000, 7))
    started = time.perf_counter()
    store.search("migration rollback")
    first = time.perf_counter() - started
    again: list[float] = []
    for turn in _turns(3, seed=4):
        thread.conversation.messages.extend(Message.model_validate(m) for m in turn)
        thread = store.save(thread)
        started = time.perf_counter()
        store.search("migration rollback")
        again.append(time.perf_counter() - started)
    return {"first_s": first, "after_turn_ms": _ms(statistics.median(again))}


def run(*, quick: bool, threads: int, server: bool) -> Section:
    """Measure everything; one report section."""
    section = Section("Issue 15 items 1-3: the local store (a save costs the turn)")
    lines = section.lines
    turns = 10 if quick else 40
    with tempfile.TemporaryDirectory(prefix="loomsync-bench-store-") as scratch:
        folder = Path(scratch)
        lines.append(f"per-turn save, ms (one turn = 4 real messages; {turns} turns a size)")
        lines.append(f"  {'store':36} " + " ".join(f"{f'p50/p95 @{s}':>18}" for s in SIZES))
        floor = percentiles(fsync_floor(folder, turns))
        lines.append(
            f"  {'floor: append the turn + fsync':36} {f'{floor[0]:8.2f} /{floor[1]:8.2f}':>18}"
        )
        for curve in save_curves(folder, turns):
            cells = []
            for size in SIZES:
                p50, p95 = percentiles(curve.samples[size])
                cells.append(f"{p50:8.2f} /{p95:8.2f}")
            lines.append(f"  {curve.name:36} " + " ".join(f"{c:>18}" for c in cells))
            low = percentiles(curve.samples[10])[0]
            high = percentiles(curve.samples[10_000])[0]
            ratio = high / low
            name = curve.name.strip()
            section.target(f"{name}: p50 10k/10 {ratio:.2f}x <= 1.5x", ratio <= 1.5)
            section.target(f"{name}: p50 at 10k {high:.2f} ms < 5 ms", high < 5)
        queued = queued_store(folder / "queued-new")
        try:
            news = new_thread_saves(folder / "new", queued, _seed, turns)
        finally:
            queued.close()
        cells = [f"{name} {p[0]:.2f} / {p[1]:.2f}" for name, p in
                 ((n, percentiles(v)) for n, v in news.items())]  # fmt: skip
        lines.append("SyncingThreadStore.save of a new thread (10 messages; it adds a queue entry), "
                     "ms p50/p95: " + ", ".join(cells))  # fmt: skip
        empty, full = (percentiles(v)[0] for v in news.values())
        section.target(
            f"new-thread save p50 with {QUEUED:,} queued / empty queue {full / empty:.2f}x <= 1.5x",
            full <= 1.5 * empty,
        )

        peaks = memory_peaks(folder)
        (mid10, max10), (mid10k, max10k) = peaks[10], peaks[10_000]
        lines.append(
            f"tracemalloc peak of one save, median (max) of 16: {mid10 / 1024:.0f} "
            f"({max10 / 1024:.0f}) KiB at 10, {mid10k / 1024:.0f} ({max10k / 1024:.0f}) KiB at "
            f"10,000 ({mid10k / mid10:.2f}x)"
        )
        section.target(
            f"save memory (median) 10k/10 {mid10k / mid10:.2f}x <= 1.5x",
            mid10k <= 1.5 * mid10,
        )

        if server:
            pushes = push_costs(folder, 6 if quick else 20)
            lines.append("push of one turn (real server): client ms p50/p95, server ms p50, "
                         "bytes read p50, bytes sent p50, how")  # fmt: skip
            for size, p in pushes.items():
                lines.append(
                    f"  @{size:<6} {p['client_p50']:7.2f} /{p['client_p95']:7.2f}  "
                    f"{p['server_p50']:7.2f}  {p['read_p50']:>10,.0f}  {p['sent_p50']:>8,.0f}  "
                    f"{p['how']}"
                )
            ratio = pushes[10_000]["client_p50"] / pushes[10]["client_p50"]
            section.target(f"push client time 10k/10 {ratio:.2f}x <= 1.5x", ratio <= 1.5)
            read_ratio = pushes[10_000]["read_p50"] / max(1.0, pushes[10]["read_p50"])
            section.target(f"push bytes read 10k/10 {read_ratio:.2f}x <= 1.5x", read_ratio <= 1.5)

        searched = search_costs(folder)
        lines.append(
            f"local search at 10,000 messages: first (whole build) {searched['first_s']:.1f} s, "
            f"after one more turn {searched['after_turn_ms']:.0f} ms (p50 of 3)"
        )

    first, warm = list_times(threads)
    median = statistics.median(warm)
    lines.append(
        f"loomsync list --limit 50 over {threads:,} threads (subprocess, wall): first "
        f"{first:.2f} s (index built from the files), warm median {median:.2f} s "
        f"(min {min(warm):.2f}, max {max(warm):.2f}, {len(warm)} runs)"
    )
    section.target(f"loomsync list warm median {median:.2f} s < 1 s", median < 1)
    return section


def main() -> None:
    """Parse arguments, run, print; ``--record`` appends to bench/RESULTS.md."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer turns (a smoke test)")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    parser.add_argument("--threads", type=int, default=LIST_THREADS, help="threads to list")
    parser.add_argument("--no-server", action="store_true", help="skip the push (no PostgreSQL)")
    args = parser.parse_args()
    section = run(quick=args.quick, threads=args.threads, server=not args.no_server)
    text = section.render()
    print("\n".join(text))
    if args.record:
        command = "python -m bench.client_store " + " ".join(sys.argv[1:])
        record(section.title, command.strip(), text[1:])
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


if __name__ == "__main__":
    main()
