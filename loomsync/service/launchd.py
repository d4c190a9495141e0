"""``loomsync watch`` as a launchd agent (issue 17 item 2, macOS).

The agent is ``~/Library/LaunchAgents/dev.loomsync.watch.plist`` (written with the stdlib's
:mod:`plistlib`): it runs :func:`~loomsync.service.base.watch_command` at load (``RunAtLoad``,
so at every login), starts it again when it exits with a failure (``KeepAlive`` with
``SuccessfulExit`` false, as systemd's ``Restart=on-failure``), at a low priority (``Nice``
10), and sends its output to ``~/Library/Logs/loomsync/watch.log`` (the folder Console.app
shows). Installing runs ``launchctl enable`` and ``launchctl bootstrap gui/$UID`` (a
``bootout`` first when it is loaded, so a new command takes effect); uninstalling runs
``launchctl bootout gui/$UID/dev.loomsync.watch`` and removes the file.
"""

from __future__ import annotations

import os
import plistlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from loomsync.errors import ServiceError
from loomsync.service.base import (
    InstallPlan,
    Removal,
    ServiceStatus,
    run_tool,
    service_environment,
    stale,
    watch_command,
    write_file,
)

LABEL = "dev.loomsync.watch"


def _field(text: str, name: str) -> str | None:
    """A top-level ``name = value`` line of ``launchctl print``'s answer."""
    found = re.search(rf"^\t{re.escape(name)} = (.*)$", text, re.M)
    return found.group(1).strip() if found else None


def render_plist(command: list[str], environment: Mapping[str, str], log: Path) -> bytes:
    """The agent's property list (XML) for ``command``, ``environment`` and the ``log``
    file both output streams go to."""
    agent: dict[str, Any] = {
        "Label": LABEL,
        "ProgramArguments": list(command),
        "EnvironmentVariables": dict(environment),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "Nice": 10,
        "StandardOutPath": str(log),
        "StandardErrorPath": str(log),
    }
    return plistlib.dumps(agent)


def plist_command(data: bytes) -> list[str] | None:
    """``ProgramArguments`` of a plist's bytes (None: not a plist, or no such list)."""
    try:
        agent = plistlib.loads(data)
    except (plistlib.InvalidFileException, ValueError, TypeError, KeyError):
        return None
    words = agent.get("ProgramArguments") if isinstance(agent, dict) else None
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        return None
    return words or None


class LaunchAgent:
    """``dev.loomsync.watch`` in the user's launchd domain ``gui/$UID`` (a
    :class:`~loomsync.service.base.ServiceManager`).

    ``command`` defaults to :func:`~loomsync.service.base.watch_command`, ``env`` (HOME and
    the variables the agent gets) to ``os.environ``, ``uid`` to this process's.
    """

    manager = "launchd"
    name = LABEL

    def __init__(
        self,
        command: list[str] | None = None,
        env: Mapping[str, str] | None = None,
        uid: int | None = None,
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._command = command
        self._uid = os.getuid() if uid is None else uid
        home = self._env.get("HOME", "")
        self._home = Path(home) if home and os.path.isabs(home) else Path.home()

    @property
    def domain(self) -> str:
        """``gui/<uid>``."""
        return f"gui/{self._uid}"

    @property
    def target(self) -> str:
        """``gui/<uid>/dev.loomsync.watch``."""
        return f"{self.domain}/{LABEL}"

    @property
    def path(self) -> Path:
        """``~/Library/LaunchAgents/dev.loomsync.watch.plist``."""
        return self._home / "Library" / "LaunchAgents" / f"{LABEL}.plist"

    @property
    def log(self) -> Path:
        """``~/Library/Logs/loomsync/watch.log``."""
        return self._home / "Library" / "Logs" / "loomsync" / "watch.log"

    @property
    def logs(self) -> str:
        """The log file's path."""
        return str(self.log)

    def _printed(self) -> str | None:
        """``launchctl print`` of the agent; None when it is not loaded (or no launchctl)."""
        try:
            done = run_tool(["launchctl", "print", self.target], check=False)
        except ServiceError:  # no launchctl to ask
            return None
        return done.stdout if done.returncode == 0 else None

    def _current(self) -> tuple[bytes | None, list[str] | None]:
        try:
            data = self.path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        return data, plist_command(data)

    def plan(self) -> InstallPlan:
        """The plist to write and the ``launchctl`` steps, nothing touched."""
        command = self._command or watch_command()
        data = render_plist(command, service_environment(self._env), self.log)
        old, old_command = self._current()
        steps = [["launchctl", "bootout", self.target]] if self._printed() is not None else []
        steps += [
            ["launchctl", "enable", self.target],
            ["launchctl", "bootstrap", self.domain, str(self.path)],
        ]
        return InstallPlan(
            path=self.path,
            text=data.decode(),
            steps=steps,
            previous=old_command if old is not None else None,
            changed=old != data,
        )

    def install(self) -> InstallPlan:
        """Make the log folder, write the plist (mode 0644), then (re)load the agent."""
        plan = self.plan()
        self.log.parent.mkdir(parents=True, exist_ok=True)
        write_file(plan.path, plan.text.encode())
        for step in plan.steps:
            run_tool(step)
        return plan

    def uninstall(self, why_not: str | None = None) -> Removal:
        """``bootout`` when loaded, then remove the plist; ``removed`` False when neither was
        there. The plist is removed even when ``bootout`` fails or ``why_not`` says launchd
        cannot be asked here (``failed`` says what was not done)."""
        failed: list[str] = []
        loaded = False
        if why_not is not None:
            failed.append(f"no service manager is running here ({why_not})")
        else:
            loaded = self._printed() is not None
            if loaded:
                try:
                    run_tool(["launchctl", "bootout", self.target])
                except ServiceError as exc:
                    failed.append(str(exc))
        if not self.path.exists():
            return Removal(removed=loaded, failed=failed if loaded else [])
        self.path.unlink(missing_ok=True)
        return Removal(removed=True, failed=failed)

    def _disabled(self) -> bool | None:
        try:
            done = run_tool(["launchctl", "print-disabled", self.domain])
        except ServiceError:
            return None
        found = re.search(rf'"{re.escape(LABEL)}" => (\w+)', done.stdout)
        return found is not None and found.group(1) in ("disabled", "true")

    def status(self, why_not: str | None = None) -> ServiceStatus:
        """The plist, ``launchctl print`` (state, pid) and the start time ``ps`` gives; only
        the plist when ``why_not`` says launchd cannot be asked here (``manager`` None)."""
        data, command = self._current()
        problem: str | None = None
        printed: str | None = None
        if why_not is not None:
            problem = f"no service manager is running here ({why_not})"
        else:
            try:
                done = run_tool(["launchctl", "print", self.target], check=False)
                printed = done.stdout if done.returncode == 0 else None
            except ServiceError as exc:  # no launchctl
                problem = str(exc)
        state = (_field(printed, "state") or "unknown") if printed else "not loaded"
        pid_text = _field(printed, "pid") if printed else None
        pid = int(pid_text) if pid_text and pid_text.isdigit() else None
        since = None
        if pid is not None:
            try:
                started = run_tool(["ps", "-o", "lstart=", "-p", str(pid)], check=False)
                since = started.stdout.strip() or None
            except ServiceError:  # no ps: the start time stays unknown
                since = None
        disabled = self._disabled() if problem is None else None
        return ServiceStatus(
            manager=self.manager if why_not is None else None,
            name=LABEL,
            path=self.path,
            installed=data is not None,
            command=command,
            stale=stale(command),
            enabled=None if disabled is None else (data is not None and not disabled),
            running=state == "running",
            state="unknown" if problem else state,
            pid=pid,
            since=since,
            logs=self.logs,
            problem=problem,
        )


__all__ = ["LABEL", "LaunchAgent", "plist_command", "render_plist"]
