"""Where the server's CPU goes on the write path (issue 18 item 1): py-spy on the uvicorn
workers while 32 raw HTTP/1.1 clients PUT new threads, then append turns (bench/writes.py's
very requests), each sample put in one layer; no targets.

    .venv/bin/python -m bench.writeprofile [--seconds 15] [--workers 2] [--record]

Each workload runs ``--seconds`` after 2 s of warm-up while ``py-spy record --subprocesses
--nonblocking`` samples the workers at 200 Hz (idle threads left out, so a sample is CPU the
worker spent). A sample belongs to the innermost frame of its stack that names a layer
(:data:`LAYERS`, matched on the file's path); frames of the standard library other than
``json`` and ``logging`` (asyncio, contextlib, typing, uuid, hashlib, …) are passed through to
their caller, and a stack of nothing but those is the event loop. A layer's CPU a request is
its share of the samples times the server's CPU a request (psutil, over the same stretch).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from app.auth import create_token
from app.config import Settings
from bench.harness import fresh_database, record, server_dsn, uvicorn_process
from bench.rawhttp import RawSender
from bench.writes import TEMPLATE_BASE, CpuMeter, _turn, drive, new_thread_doc
from loomsync.core.document.ids import ThreadId

DATABASE = "loomsync_bench_writeprofile"
CLIENTS = 32
RATE = 200

#: (layer, substrings of a frame's file path), in the order they are tried on each frame.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("asyncpg", ("/asyncpg/",)),
    ("SQLAlchemy", ("/sqlalchemy/",)),
    ("JWT (jose, app/auth.py)", ("/jose/", "/cryptography/", "/ecdsa/", "app/auth.py")),
    ("pydantic validation/dump", ("/pydantic/", "/pydantic_core/", "document/model.py")),
    ("secret scan", ("loomsync/core/secrets", "app/threads/scanning.py", "/re2")),
    ("search vectors", ("loomsync/core/textsearch", "app/threads/indexing.py", "/regex/")),
    ("JSON parse/dump", ("jsontext.py", "/json/", "/simplejson/")),
    ("rate limit", ("/limits/", "app/ratelimit.py")),
    ("access log, logging", ("/logging/", "app/logs.py")),
    (
        "ASGI middleware, metrics",
        (
            "/prometheus_client/",
            "app/metrics.py",
            "app/middleware.py",
            "app/headers.py",
            "app/web/errors.py",
            "/starlette/middleware/",
            "/uvicorn/middleware/",
        ),
    ),
    ("FastAPI/Starlette routing, DI", ("/fastapi/", "/starlette/")),
    ("uvicorn, httptools", ("/uvicorn/protocols/", "app/protocol.py", "/httptools/")),
    ("handler code (app/)", ("/app/", "/loomsync/")),
)
EVENT_LOOP = "event loop, uvloop, other"
#: Standard library modules that are a layer of their own rather than passed through.
_STDLIB_LAYERS = ("/json/", "/logging/")


def _is_pass_through(path: str) -> bool:
    """True for frames of the standard library (asyncio, contextlib, …) and uvloop."""
    if "/uvloop/" in path:
        return True
    if "site-packages" in path or "/work/" in path:
        return False
    return not any(part in path for part in _STDLIB_LAYERS)


def layer_of(frames: list[str]) -> str:
    """The layer of one sample: ``frames`` root first, each ``function (path)`` as py-spy's
    raw format writes them."""
    for frame in reversed(frames):
        path = frame.rsplit("(", 1)[-1].rstrip(")")
        if _is_pass_through(path):
            continue
        for name, parts in LAYERS:
            if any(part in path for part in parts):
                return name
    return EVENT_LOOP


def tally(raw: str) -> Counter[str]:
    """Samples per layer of a py-spy raw (collapsed stacks) file's text."""
    counts: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, number = line.rpartition(" ")
        if stack and number.isdigit():
            frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
            counts[layer_of(frames)] += int(number)
    return counts


async def _workload(
    base: str, secret: str, pid: int, kind: str, seconds: float
) -> tuple[int, float]:
    """Run ``kind`` (put or append) for 2 s of warm-up and ``seconds``; (requests, server CPU s)."""
    settings = Settings(jwt_secret=secret, _env_file=None)  # type: ignore[call-arg]
    senders = [
        RawSender(base, {"Authorization": f"Bearer {create_token(settings, f'writer{i}')}"})
        for i in range(CLIENTS)
    ]
    doc = json.dumps(new_thread_doc(0)).encode()
    turn = json.dumps({"messages": _turn(TEMPLATE_BASE)}).encode()
    versions: dict[int, tuple[str, int]] = {}

    def operation(i: int):  # type: ignore[no-untyped-def]
        async def put() -> None:
            status, body = await senders[i].send("PUT", f"/api/threads/{ThreadId.new()}", doc, {})
            assert status == 201, body[:200]

        async def append() -> None:
            tid, version = versions[i]
            status, body = await senders[i].send(
                "POST", f"/api/threads/{tid}/messages", turn, {"If-Match": f'"{version}"'}
            )
            assert status == 200, body[:200]
            versions[i] = (tid, json.loads(body)["version"])

        return put if kind == "put" else append

    if kind == "append":
        for i in range(CLIENTS):
            tid = str(ThreadId.new())
            status, _ = await senders[i].send("PUT", f"/api/threads/{tid}", doc, {})
            assert status == 201
            versions[i] = (tid, 1)
    meter = CpuMeter(pid)
    rate = await drive([operation(i) for i in range(CLIENTS)], seconds, meter, warmup=2.0)
    for sender in senders:
        await sender.close()
    return rate.count, rate.cpu["server"]


def profile(seconds: float, workers: int, keep: Path | None = None) -> list[str]:
    """Profile both workloads; the table's lines (``keep``: a folder to copy py-spy's raw
    files to, ``put.txt`` and ``append.txt``)."""
    dsn = fresh_database(server_dsn(), DATABASE)
    lines: list[str] = []
    results: dict[str, tuple[int, float, Counter[str]]] = {}
    with uvicorn_process(dsn, workers=workers) as (base, secret, process):
        for kind in ("put", "append"):
            with tempfile.TemporaryDirectory() as folder:
                out = Path(folder) / "profile.txt"
                spy = subprocess.Popen(
                    [str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                     str(process.pid), "--subprocesses", "--nonblocking", "--full-filenames",
                     "--nolineno", "--format", "raw", "--rate", str(RATE), "--duration",
                     str(int(seconds + 2)), "--output", str(out)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
                count, cpu = asyncio.run(_workload(base, secret, process.pid, kind, seconds))
                spy.wait(timeout=60)
                raw = out.read_text()
                if keep is not None:
                    keep.mkdir(parents=True, exist_ok=True)
                    (keep / f"{kind}.txt").write_text(raw)
                results[kind] = (count, cpu, tally(raw))
    names = [name for name, _ in LAYERS] + [EVENT_LOOP]
    lines.append(
        f"{workers} workers, {CLIENTS} raw clients, {seconds:.0f} s a workload, py-spy {RATE} Hz"
    )
    lines.append(f"{'layer':34} | {'put ms':>7} {'share':>6} | {'append ms':>9} {'share':>6}")
    for name in names:
        cells = []
        for kind in ("put", "append"):
            count, cpu, counts = results[kind]
            share = counts[name] / max(1, sum(counts.values()))
            cells.append((share * cpu / max(1, count) * 1000, share))
        (p_ms, p_share), (a_ms, a_share) = cells
        lines.append(f"{name:34} | {p_ms:7.3f} {p_share:6.1%} | {a_ms:9.3f} {a_share:6.1%}")
    totals = []
    for kind in ("put", "append"):
        count, cpu, counts = results[kind]
        totals.append(f"{kind} {count / seconds:.0f}/s, server CPU {cpu / max(1, count) * 1000:.3f} ms"
                      f" a request, {sum(counts.values())} samples")  # fmt: skip
    lines.append("; ".join(totals))
    return lines


def main() -> None:
    """Parse the options, profile, print (and with ``--record`` append to RESULTS.md)."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    parser.add_argument("--keep", type=Path, help="a folder for py-spy's raw stacks")
    args = parser.parse_args()
    lines = profile(args.seconds, args.workers, args.keep)
    print("\n".join(lines))
    if args.record:
        record(
            "Write path profile, CPU a request per layer (issue 18 item 1)",
            "python -m bench.writeprofile " + " ".join(sys.argv[1:]),
            lines,
        )


if __name__ == "__main__":
    main()
