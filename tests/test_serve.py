"""``loomsync-server serve`` with the embedded PostgreSQL, as a service manager runs it: a
SIGTERM stops the server and the PostgreSQL it started, even after an earlier crash."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from tests.servers import Server, free_port, wait_until_ready

SERVE = Path(sys.executable).parent / "loomsync-server"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """This environment without LOOMSYNC_* settings, with empty XDG folders under tmp_path; at
    the end, a PostgreSQL left running there is stopped (a test never leaves one behind)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOMSYNC_")}
    for name in ("DATA", "STATE", "CONFIG"):
        (tmp_path / name).mkdir()
        env[f"XDG_{name}_HOME"] = str(tmp_path / name)
    yield env
    left = postmaster(env)
    if left is not None and not stopped(left):
        left.send_signal(signal.SIGINT)  # fast shutdown
        left.wait(timeout=30)


def postmaster(env: dict[str, str]) -> psutil.Process | None:
    """The embedded PostgreSQL's postmaster, from its pid file; None when the file is gone."""
    pid_file = Path(env["XDG_DATA_HOME"]) / "loomsync-server" / "pgdata" / "postmaster.pid"
    return psutil.Process(int(pid_file.read_text().split()[0])) if pid_file.exists() else None


def stopped(process: psutil.Process) -> bool:
    """True when ``process`` has exited (a zombie no one reaped has exited too)."""
    return not process.is_running() or process.status() == psutil.STATUS_ZOMBIE


@contextmanager
def serving(env: dict[str, str]) -> Iterator[Server]:
    """``loomsync-server serve`` on a free port, ready; killed at the end if still running."""
    port = free_port()
    command = [str(SERVE), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with tempfile.NamedTemporaryFile(prefix="loomsync-serve-", suffix=".log") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
        server = Server(f"http://127.0.0.1:{port}", process, log)
        try:
            wait_until_ready(server)
            yield server
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()


def test_sigterm_stops_the_server_and_its_embedded_postgresql(env: dict[str, str]) -> None:
    """SIGTERM (systemd, docker stop) ends ``serve`` with status 143 and stops the embedded
    PostgreSQL it started: its pid file is gone and the postmaster has exited."""
    with serving(env) as server:
        pg = postmaster(env)
        assert pg is not None
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 128 + signal.SIGTERM, server.output()
        assert postmaster(env) is None, server.output()
        assert stopped(pg)


def test_after_a_crash_the_next_serve_still_stops_postgresql(env: dict[str, str]) -> None:
    """A ``serve`` killed with SIGKILL leaves its PostgreSQL running (nothing can stop it); the
    next ``serve`` attaches to it, and a SIGTERM then stops it, not leaves it for the dead pid."""
    with serving(env) as server:
        server.process.kill()
        server.process.wait()
    pg = postmaster(env)
    assert pg is not None
    assert not stopped(pg)
    with serving(env) as server:
        assert postmaster(env) == pg  # attached, not restarted
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 128 + signal.SIGTERM, server.output()
        assert postmaster(env) is None, server.output()
        assert stopped(pg)


def test_a_command_on_the_embedded_server_prints_no_runtime_dir_warning(
    env: dict[str, str],
) -> None:
    """Issue 30 item 8: without XDG_RUNTIME_DIR (a container, su, cron) every command printed
    platformdirs' RuntimeDirWarning, raised when pgserver is imported; the command's own
    output is all there is."""
    env = {k: v for k, v in env.items() if k != "XDG_RUNTIME_DIR"}
    done = subprocess.run(
        [str(SERVE), "migrate"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Schema at revision" in done.stdout + done.stderr
    assert "Warning" not in done.stderr, done.stderr
