"""Shared benchmark plumbing: databases, a real uvicorn server, timing and RESULTS.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import secrets
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from app.database import migrate
from app.protocol import HTTP_PROTOCOL

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"


def asyncpg_dsn(url: str) -> str:
    """``postgresql://…`` for asyncpg from any accepted form of the URL."""
    return re.sub(r"^postgres(ql)?(\+asyncpg)?://", "postgresql://", url)


DEFAULT_SERVER_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"


def server_dsn() -> str:
    """LOOMSYNC_BENCH_DATABASE_URL, else this machine's PostgreSQL (a superuser: benchmarks
    create and drop their databases, and bench.turns reads the WAL)."""
    return os.environ.get("LOOMSYNC_BENCH_DATABASE_URL", DEFAULT_SERVER_DSN)


def database_dsn(server_dsn: str, name: str) -> str:
    """The DSN of database ``name`` on the server of ``server_dsn`` (query options kept)."""
    url = make_url(asyncpg_dsn(server_dsn)).set(database=name)
    return url.render_as_string(hide_password=False)


async def database_exists(server_dsn: str, name: str) -> bool:
    """True when database ``name`` exists on the server."""
    conn = await asyncpg.connect(asyncpg_dsn(server_dsn))
    try:
        return bool(await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name))
    finally:
        await conn.close()


async def recreate_database(server_dsn: str, name: str) -> None:
    """Drop (if present) and create database ``name``."""
    conn = await asyncpg.connect(asyncpg_dsn(server_dsn))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


def fresh_database(server_dsn: str, name: str) -> str:
    """Drop and create database ``name``, migrate it to head, and return its DSN (from
    synchronous code: it runs its own event loops)."""
    asyncio.run(recreate_database(server_dsn, name))
    dsn = database_dsn(server_dsn, name)
    migrate(dsn)
    return dsn


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def uvicorn_server(
    database_url: str,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    cwd: Path = ROOT,
) -> Iterator[tuple[str, str]]:
    """Run ``uvicorn app.asgi:create`` on a free port; yield (base URL, JWT secret). ``cwd`` is
    the checkout whose ``app`` package is served (another one measures older code)."""
    with uvicorn_process(database_url, workers=workers, env=env, cwd=cwd) as (base, secret, _):
        yield base, secret


@contextmanager
def uvicorn_process(
    database_url: str,
    *,
    workers: int = 1,
    env: dict[str, str] | None = None,
    http: str = HTTP_PROTOCOL,
    cwd: Path = ROOT,
) -> Iterator[tuple[str, str, subprocess.Popen[bytes]]]:
    """Like :func:`uvicorn_server`, also yielding the uvicorn ``Popen`` (its pid for RSS);
    ``http`` is uvicorn's ``--http`` (``serve``'s protocol unless a benchmark compares)."""
    port = free_port()
    secret = secrets.token_urlsafe(48)
    environment = {
        **os.environ,
        "LOOMSYNC_DATABASE_URL": database_url,
        "LOOMSYNC_JWT_SECRET": secret,
        "LOOMSYNC_LOG_LEVEL": "warning",
        "LOOMSYNC_RATE_LIMIT": "off",  # a benchmark is one very busy user
        **(env or {}),
    }
    if http == HTTP_PROTOCOL and not (cwd / "app" / "protocol.py").exists():
        http = "httptools"  # an older checkout (``cwd``) has no bounded protocol to serve
    command = [sys.executable, "-m", "uvicorn", "app.asgi:create", "--factory", "--port", str(port),
               "--workers", str(workers), "--log-level", "warning", "--no-access-log",
               "--http", http]  # fmt: skip
    process = subprocess.Popen(command, env=environment, cwd=cwd)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/health/ready", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the benchmark server did not become ready")
            time.sleep(0.1)
        yield base, secret, process
    finally:
        process.terminate()
        process.wait(timeout=30)


@dataclass
class Section:
    """One part of a benchmark's report: a title, the printed table, and each target with
    the measured figure and whether it was met."""

    title: str
    lines: list[str] = field(default_factory=list)
    targets: list[tuple[str, bool]] = field(default_factory=list)

    def target(self, description: str, met: bool) -> None:
        """Record a target, e.g. ``("p95 12.3 ms < 20 ms", True)``."""
        self.targets.append((description, met))

    def render(self) -> list[str]:
        """The section as lines: title, table, then one ``met``/``MISSED`` line a target."""
        verdicts = [f"  [{'met' if met else 'MISSED'}] {text}" for text, met in self.targets]
        return [f"# {self.title}", *self.lines, *verdicts, ""]


def server_ms(response: httpx.Response) -> float:
    """The server's own time for a response in milliseconds (its ``Server-Timing: app;dur=``)."""
    match = re.search(r"\bapp;dur=([0-9.]+)", response.headers.get("server-timing", ""))
    if match is None:
        raise ValueError("the response has no Server-Timing app;dur= header")
    return float(match.group(1))


def standalone(run: Callable[..., Section], doc: str | None) -> None:
    """``python -m bench.<part> [--quick]``: run one part of bench.sync on :func:`server_dsn`,
    print it (nothing is recorded) and exit 1 when a target was missed."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    section = run(server_dsn(), quick=parser.parse_args().quick)
    print("\n".join(section.render()))
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


async def postgres_version(server_dsn: str) -> str:
    """The server's ``server_version``."""
    conn = await asyncpg.connect(asyncpg_dsn(server_dsn))
    try:
        return str(await conn.fetchval("SHOW server_version"))
    finally:
        await conn.close()


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) of ``samples`` in the samples' unit."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def machine() -> str:
    """One line naming this machine: architecture, CPU count, memory and Python."""
    memory = "?"
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return f"{platform.machine()}, {os.cpu_count()} cores, {memory} RAM, Python {platform.python_version()}"


def record(title: str, command: str, lines: list[str], extra: dict[str, Any] | None = None) -> None:
    """Append a dated section to bench/RESULTS.md."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = [f"\n## {title} — {stamp}\n", f"Command: `{command}`  ", f"Machine: {machine()}  "]
    for key, value in (extra or {}).items():
        section.append(f"{key}: {value}  ")
    section += ["", "```", *lines, "```", ""]
    if not RESULTS.exists():
        RESULTS.write_text("# Benchmark results\n\nEach section is appended by a benchmark run.\n")
    with RESULTS.open("a") as handle:
        handle.write("\n".join(section))
