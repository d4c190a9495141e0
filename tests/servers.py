"""Real uvicorn processes for tests that need real HTTP (STYLE.md "Tests")."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TypeVar
from urllib.parse import urlsplit

import httpx
import pytest

from app.config import Settings
from app.protocol import HTTP_PROTOCOL

STARTUP_SECONDS = 30.0
MAIN = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    """A running uvicorn process: its base URL and the file its output goes to."""

    base_url: str
    process: subprocess.Popen[bytes]
    log: IO[bytes]

    def output(self) -> str:
        """Everything the process has written so far."""
        self.log.flush()
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")


def app_env(database_url: str, settings: Settings, **overrides: str) -> dict[str, str]:
    """``LOOMSYNC_*`` settings for :func:`uvicorn_server` serving the test database with the
    test JWT secret, warnings only and no rate limit; ``overrides`` (``LOOMSYNC_`` names) win."""
    assert settings.jwt_secret is not None
    return {
        "LOOMSYNC_DATABASE_URL": database_url,
        "LOOMSYNC_JWT_SECRET": settings.jwt_secret.get_secret_value(),
        "LOOMSYNC_LOG_LEVEL": "warning",
        "LOOMSYNC_RATE_LIMIT": "off",
        **overrides,
    }


def poll(
    process: subprocess.Popen[bytes], check: Callable[[], T | None], seconds: float
) -> T | None:
    """``check()``'s first answer that is not None, asked again every 50 ms (a pause that also
    notices an early exit) until ``seconds`` pass or ``process`` exits: then None."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found is not None:
            return found
        try:
            process.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            continue
        break
    return None


def wait_until_ready(server: Server, path: str = "/health/ready") -> None:
    """Poll ``path`` until 200, the process exits, or the deadline passes (then fail)."""
    with httpx.Client(base_url=server.base_url, timeout=2) as client:

        def ready() -> bool | None:
            try:
                return client.get(path).status_code == 200 or None
            except httpx.TransportError:
                return None

        if poll(server.process, ready, STARTUP_SECONDS):
            return
    pytest.fail(
        f"uvicorn did not become ready (exit code {server.process.poll()}):\n{server.output()}"
    )


@contextlib.contextmanager
def uvicorn_server(env: dict[str, str], ready_path: str = "/health/ready") -> Iterator[Server]:
    """Run ``uvicorn app.asgi:create --factory`` with the HTTP protocol ``serve`` uses and
    ``LOOMSYNC_*`` settings from ``env`` (on top of this process's environment) until the block
    ends."""
    port = free_port()
    command = [sys.executable, "-m", "uvicorn", "app.asgi:create", "--factory"]
    command += ["--http", HTTP_PROTOCOL]  # what `loomsync-server serve` runs
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    with tempfile.NamedTemporaryFile(prefix="loomsync-uvicorn-", suffix=".log") as log:
        process = subprocess.Popen(
            command, cwd=MAIN, env={**os.environ, **env}, stdout=log, stderr=log
        )
        server = Server(f"http://127.0.0.1:{port}", process, log)
        try:
            wait_until_ready(server, ready_path)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def connect(base_url: str, timeout: float = 30.0) -> socket.socket:
    """A TCP connection to the server at ``base_url``, for requests written by hand."""
    parts = urlsplit(base_url)
    assert parts.hostname is not None
    assert parts.port is not None
    return socket.create_connection((parts.hostname, parts.port), timeout=timeout)


def exchange(base_url: str, request: bytes, timeout: float = 30.0) -> bytes:
    """Send ``request`` bytes exactly as written (from a thread: the server may answer and close
    before they are all sent) and return all the server sent until it closed; a reset once the
    answer is in is not an error."""
    with connect(base_url, timeout) as sock:

        def send() -> None:
            with contextlib.suppress(OSError):  # the server answered and closed first
                sock.sendall(request)

        sender = threading.Thread(target=send)
        sender.start()
        received = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                received += chunk
        sender.join()
        return received
