"""scripts/test-setup.sh, the one set-up script of ``make test`` and .ci/run (issue 30 item 6),
run for real in ``--check`` mode (it installs nothing).

With the machine's tools hidden (PATH is a folder holding only ``bash``, the one program the
check itself runs; the script's other places to look, Debian's sbin folders and
``/usr/lib/postgresql``, emptied through its ``LOOMSYNC_SETUP_*`` variables) it names every tool
it would install, with its package, and exits 1; with this machine's own PATH and places, where
everything the suite needs is installed, it says nothing is missing and exits 0.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "test-setup.sh"

#: Each tool the suite needs and the package the script must name for it.
EXPECTED = {
    "chromium": "apt-get install chromium fonts-dejavu-core",
    "pgbouncer": "apt-get install pgbouncer",
    "redis-server": "apt-get install redis-server",
    "PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)": "apt-get install postgresql",
    "systemd-analyze": "apt-get install systemd",
    "docker": "apt-get install docker.io",
    "dockerd": "apt-get install docker.io",
    "debootstrap": "apt-get install debootstrap",
    "docker compose (Compose v2)": "Debian trixie's docker-compose",
}


def check(env: dict[str, str], bash: str) -> subprocess.CompletedProcess[str]:
    """``bash scripts/test-setup.sh --check`` under ``env`` (nothing else inherited)."""
    return subprocess.run(
        [bash, str(SCRIPT), "--check"], env=env, capture_output=True, text=True, timeout=60
    )


def test_with_the_tools_hidden_it_names_each_one_it_would_install(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    only = tmp_path / "bin"
    only.mkdir()
    (only / "bash").symlink_to(bash)
    env = {"PATH": str(only), "LOOMSYNC_SETUP_SBIN": "", "LOOMSYNC_SETUP_PG_ROOT": ""}

    done = check(env, str(only / "bash"))

    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert all(line.startswith("missing: ") for line in lines), done.stdout
    named = [line.removeprefix("missing: ").rsplit(" (", 1)[0] for line in lines]
    assert sorted(named) == sorted(EXPECTED), done.stdout  # one line per tool, each once
    for line, tool in zip(lines, named, strict=True):
        assert EXPECTED[tool] in line, line
    assert done.stderr == ""


def test_on_this_machine_nothing_is_missing() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOMSYNC_SETUP_")}
    bash = shutil.which("bash")
    assert bash is not None

    done = check(env, bash)

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "nothing missing: the test suite has every tool it needs"
    ], done.stdout
