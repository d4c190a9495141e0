"""Request heads (issue 11 item 5): the server's memory under huge request heads, and the CPU a
small request costs, with uvicorn's stock httptools protocol (before), with ``serve``'s
bounded one (app/protocol.py, after), and with uvicorn's h11 protocol (the alternative: pure
Python, its head limit is h11's ``max_incomplete_event_size``, 16 KiB by default).

    .venv/bin/python -m bench.headers [--clients 8] [--rounds 3] [--mib 16] [--cpu-runs 5]
                                      [--no-record]

For each protocol, a uvicorn process (one worker) on a fresh database ``loomsync_bench_headers``:

1. **CPU a request**: 8 raw HTTP/1.1 keep-alive clients (bench/rawhttp.py) GET ``/health`` for
   5 s after 1 s of warm-up; the server's CPU (user + system) divided by the requests answered.
   Both servers run at once and are measured in turn, ``--cpu-runs`` times each (so that the
   machine's other load falls on both alike); reported are the median and the lowest run.
2. **CPU in the protocol alone**: in this process, each protocol class is fed one small
   ``GET`` 20,000 times on one connection whose app answers at once (a stand-in transport, no
   socket): the CPU microseconds a request of parsing and answering, without the app's
   middleware. Far less noisy than part 1 on a busy machine.
3. **Memory**: ``--rounds`` times, ``--clients`` connections at once each send a ``GET /health``
   whose head holds ``--mib`` MiB of 1,000-byte header fields (the shape that grows the stock
   server most: many fields, each a Python object). The server's RSS is sampled every 20 ms:
   reported are RSS before the first round, the peak, and RSS 1 s after the last round; plus
   the answers' statuses and the wall time of a round.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import psutil
import uvloop
from uvicorn.config import Config
from uvicorn.server import ServerState

from app.protocol import HTTP_PROTOCOL
from bench.harness import fresh_database, record, server_dsn, uvicorn_process
from bench.rawhttp import RawSender
from bench.writes import CpuMeter, drive

DATABASE = "loomsync_bench_headers"
PROTOCOLS = {
    "stock httptools (before)": "httptools",
    "bounded (after)": HTTP_PROTOCOL,
    "h11 (the alternative)": "h11",
}
MIB = 1024 * 1024
FIELD_BYTES = 1000
CPU_CLIENTS = 8
CPU_SECONDS = 5.0


@dataclass
class Result:
    """What one protocol measured."""

    cpu_us: list[float] = field(default_factory=list)
    rates: list[float] = field(default_factory=list)
    protocol_us: list[float] = field(default_factory=list)
    rss_before: float = 0.0
    rss_peak: float = 0.0
    rss_after: float = 0.0
    round_seconds: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)


async def cpu_per_request(base: str, pid: int) -> tuple[float, float]:
    """(server CPU microseconds a ``GET /health``, requests a second)."""
    senders = [RawSender(base, {}) for _ in range(CPU_CLIENTS)]

    def get(sender: RawSender) -> Callable[[], Awaitable[None]]:
        async def run() -> None:
            status, body = await sender.send("GET", "/health", b"", {})
            if status != 200:
                raise RuntimeError(f"/health answered {status}: {body[:200]!r}")

        return run

    rate = await drive([get(s) for s in senders], CPU_SECONDS, CpuMeter(pid), warmup=1.0)
    for sender in senders:
        await sender.close()
    return rate.cpu["server"] / rate.count * 1e6, rate.per_second


class _NullTransport(asyncio.Transport):
    """A transport that drops what is written (for :func:`protocol_cpu`)."""

    def __init__(self) -> None:
        super().__init__()
        self.closing = False

    def write(self, data: Any) -> None:
        """Drop ``data``."""

    def is_closing(self) -> bool:
        """Whether :meth:`close` was called."""
        return self.closing

    def close(self) -> None:
        """Mark closed."""
        self.closing = True

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        """Loopback addresses."""
        return {"sockname": ("127.0.0.1", 8080), "peername": ("127.0.0.1", 50000)}.get(
            name, default
        )

    def pause_reading(self) -> None:
        """Nothing to pause."""

    def resume_reading(self) -> None:
        """Nothing to resume."""


async def _answer_at_once(_scope: Any, _receive: Any, send: Any) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]}
    )
    await send({"type": "http.response.body", "body": b"ok"})


async def protocol_cpu(http: str, requests: int = 20_000) -> float:
    """CPU microseconds a small ``GET`` costs protocol ``http`` (uvicorn's ``--http`` value)."""
    config = Config(app=_answer_at_once, http=http, log_level="warning")
    config.load()
    protocol = config.http_protocol_class(config, ServerState(), {})  # type: ignore[call-arg]
    protocol.connection_made(_NullTransport())
    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: bench\r\n\r\n"
    for counting in (False, True):  # warm up, then measure
        started = time.process_time()
        for _ in range(requests if counting else 1000):
            protocol.data_received(request)
            await asyncio.sleep(0)  # the request's task runs
            await asyncio.sleep(0)
    return (time.process_time() - started) / requests * 1e6


def huge_head(mib: int) -> bytes:
    """A ``GET /health`` whose head holds ``mib`` MiB of 1,000-byte header fields."""
    fields = (b"X-F%07d: %s\r\n" % (i, b"a" * FIELD_BYTES) for i in range(mib * MIB // 1013))
    return b"GET /health HTTP/1.1\r\nHost: bench\r\n" + b"".join(fields) + b"\r\n"


def exchange(base: str, request: bytes) -> str:
    """Send ``request`` (from a thread) and read until the server closes; the answer's status,
    or the error that ended the exchange."""
    parts = urlsplit(base)
    with socket.create_connection((parts.hostname, parts.port), timeout=300) as sock:

        def send() -> None:
            with contextlib.suppress(OSError):
                sock.sendall(request)

        sender = threading.Thread(target=send)
        sender.start()
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except OSError as exc:
            if not received:
                return type(exc).__name__
        sender.join()
    return received[9:12].decode() or "closed"


def memory(base: str, pid: int, clients: int, rounds: int, mib: int, result: Result) -> None:
    """Fill ``result``'s RSS and status fields (see the module docstring)."""
    process = psutil.Process(pid)
    request = huge_head(mib)
    result.rss_before = result.rss_peak = process.memory_info().rss / MIB
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):
            result.rss_peak = max(result.rss_peak, process.memory_info().rss / MIB)

    sampler = threading.Thread(target=sample)
    sampler.start()
    for _ in range(rounds):
        started = time.monotonic()
        statuses: list[str] = []
        threads = [
            threading.Thread(target=lambda out=statuses: out.append(exchange(base, request)))
            for _ in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        result.round_seconds.append(time.monotonic() - started)
        result.statuses.update(statuses)
    time.sleep(1.0)  # let the server settle before the last reading (a benchmark, not a test)
    done.set()
    sampler.join()
    result.rss_after = process.memory_info().rss / MIB


def main() -> None:
    """Measure both protocols, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8, help="connections at once")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --clients requests")
    parser.add_argument("--mib", type=int, default=16, help="MiB of header fields a request")
    parser.add_argument("--cpu-runs", type=int, default=5, help="CPU runs a protocol")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    dsn = fresh_database(server_dsn(), DATABASE)
    results = {label: Result() for label in PROTOCOLS}
    for _ in range(args.cpu_runs):
        for label, http in PROTOCOLS.items():
            results[label].protocol_us.append(uvloop.run(protocol_cpu(http)))
    with contextlib.ExitStack() as stack:
        servers = {
            label: stack.enter_context(uvicorn_process(dsn, http=http))
            for label, http in PROTOCOLS.items()
        }
        for _ in range(args.cpu_runs):
            for label, (base, _secret, process) in servers.items():
                cpu_us, rate = asyncio.run(cpu_per_request(base, process.pid))
                results[label].cpu_us.append(cpu_us)
                results[label].rates.append(rate)
        for label, (base, _secret, process) in servers.items():
            memory(base, process.pid, args.clients, args.rounds, args.mib, results[label])
    lines = [
        f"{args.clients} connections x {args.rounds} rounds, each a {args.mib} MiB head of"
        f" {FIELD_BYTES}-byte fields; /health: {CPU_CLIENTS} raw clients, {CPU_SECONDS:g} s a"
        f" run, {args.cpu_runs} runs a protocol, interleaved",
        "protocol                 | /health server CPU us/req: median lowest | req/s median"
        " | protocol alone us/req: median lowest | RSS MiB: before   peak  after | s a round"
        " | answers",
    ]
    for label, r in results.items():
        answers = ", ".join(f"{status} x{n}" for status, n in sorted(r.statuses.items()))
        lines.append(
            f"{label:24} | {statistics.median(r.cpu_us):32.0f} {min(r.cpu_us):6.0f}"
            f" | {statistics.median(r.rates):12.0f}"
            f" | {statistics.median(r.protocol_us):29.1f} {min(r.protocol_us):6.1f}"
            f" | {r.rss_before:14.1f} {r.rss_peak:6.1f}"
            f" {r.rss_after:6.1f} | {max(r.round_seconds):9.2f} | {answers}"
        )
    print("\n".join(lines))
    if not args.no_record:
        record(
            "Request heads (issue 11 item 5)",
            "python -m bench.headers " + " ".join(sys.argv[1:]),
            lines,
        )


if __name__ == "__main__":
    main()
