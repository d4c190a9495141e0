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
from loomsync.service.base import ServiceManager, run_tool, service_environment, watch_command
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


def detect(
    forced: Manager | None = None, env: Mapping[str, str] | None = None
) -> tuple[ServiceManager, str | None]:
    """The platform's service manager (``forced``: that one, nothing probed) and why it is
    not running here (None: usable). ``install --dry-run``, ``status`` and ``uninstall`` work
    on its file even when no manager runs (issue 17 item 2; docs/client.md).

    Raises:
        NoServiceManagerError: the platform has neither systemd nor launchd (not Linux, not
            macOS).
        ServiceError: the ``loomsync`` executable cannot be found (:func:`watch_command`).
    """
    env = os.environ if env is None else env
    if forced == "systemd":
        return SystemdUserService(env=env), None
    if forced == "launchd" or (forced is None and sys.platform == "darwin"):
        return LaunchAgent(env=env), None
    if sys.platform.startswith("linux"):
        return SystemdUserService(env=env), systemd_usable(env)
    raise unusable(f"no systemd or launchd on {sys.platform}", env)


def unusable(why: str, env: Mapping[str, str] | None = None) -> NoServiceManagerError:
    """The error ``install`` raises without a service manager: why, and the ``loomsync
    watch`` command line, log file and XDG variables to run it another way with."""
    return NoServiceManagerError(
        shlex.join(watch_command()), watch_log(), why, environment=service_environment(env)
    )


def choose(forced: Manager | None = None, env: Mapping[str, str] | None = None) -> ServiceManager:
    """The service manager to use: ``forced``, else the platform's (module docstring).

    Raises:
        NoServiceManagerError: none is usable here (the message says why).
        ServiceError: the ``loomsync`` executable cannot be found (:func:`watch_command`).
    """
    chosen, why = detect(forced, env)
    if why is not None:
        raise unusable(why, env)
    return chosen


__all__ = ["MANAGERS", "Manager", "choose", "detect", "systemd_usable", "unusable", "watch_log"]
