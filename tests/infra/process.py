"""What the infra servers share: finding the binary, waiting for a port, stopping the process."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import NoReturn, Self

#: Seconds a server gets to accept connections after it was started.
STARTUP_SECONDS = 15.0
#: Debian puts daemons in /usr/sbin, which a non-root PATH often lacks.
SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/sbin")


class MissingBinary(RuntimeError):
    """The server's program is not installed (scripts/test-setup.sh installs its Debian package)."""


class StartFailed(RuntimeError):
    """The server exited or did not accept connections in time; the message has its log."""


def find_binary(name: str) -> str | None:
    """The path of the program ``name`` on PATH or in Debian's sbin folders, or None."""
    found = shutil.which(name)
    if found:
        return found
    for folder in SBIN_DIRS:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def require(name: str, package: str) -> str:
    """The path of ``name``; without it the test fails (:func:`missing`) naming the Debian
    ``package`` that provides it.

    For tests only (a benchmark catches :class:`MissingBinary` from the ``start_*`` functions).
    """
    path = find_binary(name)
    if path is None:
        missing(f"{name} is not installed", package)
    return path


def missing(what: str, package: str) -> NoReturn:
    """Fail the calling test because ``what`` is missing: never a skip, which would prove
    nothing. scripts/test-setup.sh (run by ``make test``) installs ``package`` (Debian) before the suite runs; on another machine,
    ``apt-get install`` it."""
    import pytest

    pytest.fail(
        f"{what} (apt-get install {package}; scripts/test-setup.sh installs it as root)",
        pytrace=False,
    )


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_until(
    process: subprocess.Popen[bytes], ready: Callable[[], bool], log: Path, what: str
) -> None:
    """Call ``ready()`` every 50 ms until it is true.

    Raises:
        StartFailed: ``process`` exited first, or :data:`STARTUP_SECONDS` passed (the process
            is stopped); the message carries the end of ``log``.
    """
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        if ready():
            return
        time.sleep(0.05)
    stop_process(process)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    raise StartFailed(f"{what} did not start (exit code {process.poll()}):\n{tail}")


def stop_process(process: subprocess.Popen[bytes], seconds: float = 10.0) -> None:
    """SIGTERM ``process`` (resumed first if it was paused), SIGKILL after ``seconds``; wait."""
    if process.poll() is not None:
        return
    try:
        os.kill(process.pid, signal.SIGCONT)
        process.terminate()
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    except ProcessLookupError:
        process.wait()


def pause_process(process: subprocess.Popen[bytes]) -> None:
    """SIGSTOP: the process keeps its sockets but answers nothing (a hung server)."""
    os.kill(process.pid, signal.SIGSTOP)


def resume_process(process: subprocess.Popen[bytes]) -> None:
    """SIGCONT after :func:`pause_process`."""
    os.kill(process.pid, signal.SIGCONT)


class ServerProcess:
    """What every infra server handle does with its ``process``: pause (a hung server), resume,
    stop, and stop on leaving a ``with`` block. Subclasses are dataclasses with a ``process``
    field and say in their own docstrings what ``stop`` closes."""

    process: subprocess.Popen[bytes]

    def pause(self) -> None:
        """SIGSTOP the server: it keeps its sockets but answers nothing."""
        pause_process(self.process)

    def resume(self) -> None:
        """SIGCONT after :meth:`pause`."""
        resume_process(self.process)

    def stop(self) -> None:
        """Stop the server (SIGTERM, SIGKILL after 10 s); its clients' connections close."""
        stop_process(self.process)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.stop()
