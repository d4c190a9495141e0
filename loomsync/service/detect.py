"""Which service manager ``loomsync service`` uses here (issue 17 item 2).

macOS: launchd. Linux: systemd when a user manager is usable (``systemctl`` on PATH, and
``$XDG_RUNTIME_DIR/systemd`` is there or ``systemctl --user is-system-running`` says the
manager runs: ``running``, ``degraded``, ``starting``...; ``offline`` or no bus is no manager).
Anything else: :class:`~loomsync.errors.NoServiceManagerError`, which carries the
``loomsync watch`` command line to run another way.

The choice can be forced (testing, and a unit written for a user manager that runs later):
``--manager systemd|launchd`` or ``LOOMSYNC_SERVICE_MANAGER``; forced, nothing is probed.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from loomsync.config import default_paths
from loomsync.errors import NoServiceManagerError, ServiceError
from loomsync.service.base import ServiceManager, run_tool, watch_command
from loomsync.service.launchd import LaunchAgent
from loomsync.service.systemd import SystemdUserService

Manager = Literal["systemd", "launchd"]
MANAGERS: tuple[Manager, ...] = ("systemd", "launchd")
#: ``is-system-running`` answers of a user manager that can take a unit.
USABLE_STATES = frozenset({"running", "degraded", "starting", "initializing", "maintenance"})


def systemd_usable(env: Mapping[str, str] | None = None) -> str | None:
    """None when a systemd user manager is usable, else why not (one line)."""
    env = os.environ if env is None else env
    if shutil.which("systemctl", path=env.get("PATH")) is None:
        return "systemctl is not on PATH"
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if runtime and (Path(runtime) / "systemd").is_dir():
        return None
    try:
        done = run_tool(["systemctl", "--user", "is-system-running"], check=False)
    except ServiceError as exc:
        return str(exc)
    answer = done.stdout.strip() or done.stderr.strip() or "no answer"
    if answer in USABLE_STATES:
        return None
    return f"`systemctl --user is-system-running` says {answer.splitlines()[-1]}"


def watch_log() -> Path:
    """Where the instructions send ``loomsync watch``'s output: ``<state>/watch.log``."""
    return default_paths().state_dir / "watch.log"


def choose(forced: Manager | None = None, env: Mapping[str, str] | None = None) -> ServiceManager:
    """The service manager to use: ``forced``, else the platform's (module docstring).

    Raises:
        NoServiceManagerError: none is usable here (the message says why).
        ServiceError: the ``loomsync`` executable cannot be found (:func:`watch_command`).
    """
    env = os.environ if env is None else env
    if forced == "systemd":
        return SystemdUserService(env=env)
    if forced == "launchd":
        return LaunchAgent(env=env)
    if sys.platform == "darwin":
        return LaunchAgent(env=env)
    if sys.platform.startswith("linux"):
        why = systemd_usable(env)
        if why is None:
            return SystemdUserService(env=env)
    else:
        why = f"no systemd or launchd on {sys.platform}"
    raise NoServiceManagerError(shlex.join(watch_command()), watch_log(), why)


__all__ = ["MANAGERS", "Manager", "choose", "systemd_usable", "watch_log"]
