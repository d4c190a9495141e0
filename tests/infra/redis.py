"""Debian's redis-server (``apt-get install redis-server``) on a 127.0.0.1 port of the caller's,
its files in a folder of the caller's, nothing persisted::

    with start_redis(18310, tmp_path) as redis:
        env["LOOMSYNC_RATE_LIMIT_STORAGE"] = redis.url   # redis://127.0.0.1:18310/0
        redis.pause()    # a hung Redis: connections stay open, nothing is answered
        redis.resume()
"""

from __future__ import annotations

import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.infra.process import (
    MissingBinary,
    ServerProcess,
    find_binary,
    wait_until,
)

BINARY = "redis-server"
PACKAGE = "redis-server"


@dataclass
class Redis(ServerProcess):
    """A running redis-server on ``127.0.0.1:port``; ``url`` is ``redis://127.0.0.1:port/0``."""

    port: int
    folder: Path
    process: subprocess.Popen[bytes]
    host: str = "127.0.0.1"

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://{self.host}:{self.port}/0"

    @property
    def log(self) -> Path:
        """redis-server's log file."""
        return self.folder / "redis.log"

    def command(self, *words: str) -> bytes:
        """Send one command (RESP, e.g. ``command("DBSIZE")``) and return the raw first reply
        line (e.g. ``b":3"``, ``b"+PONG"``).

        Raises:
            OSError: Redis did not answer within 5 s.
        """
        request = f"*{len(words)}\r\n" + "".join(f"${len(w.encode())}\r\n{w}\r\n" for w in words)
        with socket.create_connection((self.host, self.port), timeout=5) as sock:
            sock.sendall(request.encode())
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    break
                reply += chunk
        return reply.split(b"\r\n", 1)[0]

    def ping(self) -> bool:
        """True when Redis answers ``PING`` with ``PONG`` within 5 s."""
        try:
            return self.command("PING") == b"+PONG"
        except OSError:
            return False


def start_redis(port: int, folder: Path) -> Redis:
    """Start redis-server on ``127.0.0.1:port`` (no snapshots, no append-only file, protected
    mode off as it listens on 127.0.0.1 only) and wait until it answers ``PING``.

    Args:
        folder: its working folder and log (created; a fresh temporary folder per instance).

    Raises:
        MissingBinary: redis-server is not installed.
        StartFailed: it exited or did not answer within 15 s (the message has its log).
    """
    binary = find_binary(BINARY)
    if binary is None:
        raise MissingBinary(f"{BINARY} is not installed (apt-get install {PACKAGE})")
    folder.mkdir(parents=True, exist_ok=True)
    command = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
    command += ["--save", "", "--appendonly", "no", "--daemonize", "no"]
    command += ["--protected-mode", "no", "--logfile", str(folder / "redis.log")]
    with (folder / "redis.out").open("ab") as sink:
        process = subprocess.Popen(
            command,
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    redis = Redis(port, folder, process)
    wait_until(process, redis.ping, folder / "redis.log", f"redis-server on port {port}")
    return redis
