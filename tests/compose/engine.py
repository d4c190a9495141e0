"""The Docker engine and the `docker` / `docker compose` CLIs for tests/compose.

The engine is the machine's (Debian's ``docker.io``, installed by scripts/test-setup.sh): used
as it is when one answers, else started here as root (overlay2, else vfs where the file system
cannot hold overlays) and stopped again by whoever started it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.infra.process import stop_process

SETUP_HINT = "run scripts/test-setup.sh as root (it installs docker.io, debootstrap, Compose v2)"
#: how long dockerd gets to answer on its socket, in seconds
START_SECONDS = 60


class DockerError(RuntimeError):
    """A docker command failed: ``str()`` holds the command and its stderr."""


def docker(
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    timeout: float = 900,
    env: Mapping[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``docker ARGS`` (in environment ``env``, default this process's) and capture its
    output (bytes).

    Raises:
        DockerError: ``check`` and a non-zero exit status, naming the command and stderr.
    """
    done = subprocess.run(
        ["docker", *args], input=input, capture_output=True, timeout=timeout, check=False, env=env
    )
    if check and done.returncode != 0:
        raise DockerError(
            f"docker {' '.join(args)} exited {done.returncode}:\n"
            f"{done.stderr.decode(errors='replace')[-4000:]}"
        )
    return done


def engine_answers() -> bool:
    """True when ``docker version`` reaches a daemon."""
    if shutil.which("docker") is None:
        return False
    done = docker("version", "--format", "{{.Server.Version}}", check=False, timeout=30)
    return done.returncode == 0


def _start(driver: str, log: Path) -> subprocess.Popen[bytes] | None:
    with log.open("ab") as out:
        daemon = subprocess.Popen(
            ["dockerd", f"--storage-driver={driver}"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if daemon.poll() is not None:
            return None
        if engine_answers():
            return daemon
        time.sleep(0.5)
    stop_process(daemon, 60)
    return None


@contextmanager
def running_engine() -> Iterator[None]:
    """A Docker engine that answers for the ``with`` block: the running one, else ``dockerd``
    started here (and stopped at the end).

    Raises:
        RuntimeError: no docker CLI, no dockerd, not root, or dockerd did not come up; the
            message names what to install and where dockerd's log is.
    """
    missing = [tool for tool in ("docker", "dockerd") if shutil.which(tool) is None]
    probe = docker("compose", "version", check=False) if not missing else None
    if probe is not None and probe.returncode != 0:
        missing.append("the Compose v2 plugin (`docker compose`)")
    if missing:
        raise RuntimeError(f"tests/compose need {', '.join(missing)}: {SETUP_HINT}")
    if engine_answers():
        yield
        return
    if os.geteuid() != 0:
        raise RuntimeError("no Docker engine answers, and only root can start dockerd here")
    log = Path(tempfile.gettempdir()) / "loomsync-tests-dockerd.log"
    daemon = _start("overlay2", log) or _start("vfs", log)
    if daemon is None:
        raise RuntimeError(f"dockerd did not start with overlay2 nor vfs; see {log}")
    try:
        yield
    finally:
        stop_process(daemon, 60)


def compose_command(project: str, files: Sequence[Path], *args: str) -> list[str]:
    """``docker compose -p PROJECT -f FILE… ARGS`` as an argument list."""
    command = ["compose", "-p", project]
    for file in files:
        command += ["-f", str(file)]
    return [*command, *args]
