"""``loomsync watch`` as a systemd user unit (issue 17 item 2, Linux).

The unit is ``$XDG_CONFIG_HOME/systemd/user/loomsync-watch.service`` (``~/.config`` without
it), the folder the user manager reads. It runs :func:`~loomsync.service.base.watch_command`,
restarts it 5 s after a failure, and runs it at a low priority (``Nice=10``); its output goes
to the journal (``journalctl --user -u loomsync-watch``). Installing runs ``systemctl --user
daemon-reload`` and ``enable --now`` (``enable`` and ``restart`` over a unit already there, so
a new ExecStart takes effect); uninstalling runs ``disable --now``, removes the file and
reloads again.

A user unit runs while the user has a session; ``loginctl enable-linger $USER`` keeps it
running after logout and starts it at boot (docs/client.md).
"""

from __future__ import annotations

import configparser
import os
import shlex
from collections.abc import Mapping
from pathlib import Path

from loomsync.core.version import __version__
from loomsync.errors import ServiceError
from loomsync.service.base import (
    InstallPlan,
    Removal,
    ServiceStatus,
    put_back,
    run_tool,
    service_environment,
    stale,
    watch_command,
    write_file,
)

NAME = "loomsync-watch.service"
LOGS = "journalctl --user -u loomsync-watch"
#: The properties ``status`` asks ``systemctl --user show`` for.
PROPERTIES = (
    "LoadState",
    "UnitFileState",
    "ActiveState",
    "SubState",
    "MainPID",
    "ActiveEnterTimestamp",
    "InactiveEnterTimestamp",
)


def unit_folder(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/systemd/user`` (an absolute XDG_CONFIG_HOME; else ``~/.config``)."""
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME", "")
    base = Path(config) if config and os.path.isabs(config) else Path.home() / ".config"
    return base / "systemd" / "user"


def quote(word: str) -> str:
    """One word of a unit's command line or ``Environment=``: ``%`` and ``$`` doubled (no
    specifier, no variable), in double quotes with ``\\`` and ``"`` escaped when it holds
    white space, a quote or a backslash."""
    word = word.replace("%", "%%").replace("$", "$$")
    if word and not any(c.isspace() or c in "\"'\\;" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_unit(command: list[str], environment: Mapping[str, str]) -> str:
    """The unit file's text for ``command`` and ``environment`` (no secrets: see
    :func:`~loomsync.service.base.service_environment`)."""
    env_lines = "".join(
        f"Environment={quote(f'{key}={value}')}\n" for key, value in environment.items()
    )
    return (
        f"# {NAME}: written by `loomsync service install` (loomsync {__version__}).\n"
        "# `loomsync service status` shows it; `loomsync service uninstall` removes it.\n"
        "[Unit]\n"
        "Description=loomsync watch: import AI agents' sessions as they are written and sync them\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={' '.join(quote(word) for word in command)}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        f"{env_lines}"
        "Nice=10\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def unit_command(text: str) -> list[str] | None:
    """The ExecStart of a unit file's text as words (None: no readable ExecStart)."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(text)
        line = parser.get("Service", "ExecStart", fallback="")
        words = shlex.split(line)
    except (configparser.Error, ValueError):
        return None
    return [w.replace("%%", "%").replace("$$", "$") for w in words] or None


def parse_show(text: str) -> dict[str, str]:
    """``Key=Value`` lines of ``systemctl show`` as a dict."""
    pairs = (line.partition("=") for line in text.splitlines() if "=" in line)
    return {key: value for key, _, value in pairs}


class SystemdUserService:
    """``loomsync-watch.service`` under the systemd user manager (a
    :class:`~loomsync.service.base.ServiceManager`).

    ``command`` defaults to :func:`~loomsync.service.base.watch_command`, ``env`` (the
    environment the unit's folder and variables are read from) to ``os.environ``.
    """

    manager = "systemd"
    name = NAME

    def __init__(
        self, command: list[str] | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._command = command

    @property
    def path(self) -> Path:
        """The unit file."""
        return unit_folder(self._env) / NAME

    @property
    def logs(self) -> str:
        """``journalctl --user -u loomsync-watch``."""
        return LOGS

    def _current(self) -> tuple[str | None, list[str] | None]:
        try:
            text = self.path.read_text()
        except (FileNotFoundError, NotADirectoryError):
            return None, None
        return text, unit_command(text)

    def plan(self) -> InstallPlan:
        """The unit to write and the ``systemctl --user`` steps, nothing touched."""
        command = self._command or watch_command()
        text = render_unit(command, service_environment(self._env))
        old_text, old_command = self._current()
        if old_text is None:
            steps = [["daemon-reload"], ["enable", "--now", NAME]]
        else:
            steps = [["daemon-reload"], ["enable", NAME], ["restart", NAME]]
        return InstallPlan(
            path=self.path,
            text=text,
            steps=[["systemctl", "--user", *step] for step in steps],
            previous=old_command if old_text is not None else None,
            changed=old_text != text,
        )

    def install(self) -> InstallPlan:
        """Write the unit (mode 0644), reload the manager, enable and (re)start the unit.

        When ``daemon-reload`` (the first step) fails, the unit is put back as it was (removed
        when there was none), so ``status`` and ``uninstall`` find what the manager has.

        Raises:
            ServiceError: a ``systemctl`` step failed (the message says whether the unit was
                put back).
            OSError: the unit could not be written.
        """
        plan = self.plan()
        old, _ = self._current()
        write_file(plan.path, plan.text.encode())
        first, *rest = plan.steps
        try:
            run_tool(first)
        except ServiceError as exc:
            put_back(plan.path, None if old is None else old.encode())
            undone = "removed again" if old is None else "put back as it was"
            raise ServiceError(f"{exc} (nothing was installed: {plan.path} {undone})") from None
        for step in rest:
            run_tool(step)
        return plan

    def uninstall(self, why_not: str | None = None) -> Removal:
        """``disable --now``, remove the unit, ``daemon-reload``, ``reset-failed``; nothing
        run when no unit file is there (``removed`` False). The file is removed even when a
        step fails or ``why_not`` says no manager runs here (``failed`` says what was not
        done)."""
        if not self.path.exists():
            return Removal(removed=False)
        if why_not is not None:
            self.path.unlink(missing_ok=True)
            return Removal(removed=True, failed=[f"no service manager is running here ({why_not})"])
        failed: list[str] = []
        try:
            run_tool(["systemctl", "--user", "disable", "--now", NAME])
        except ServiceError as exc:
            failed.append(str(exc))
        self.path.unlink(missing_ok=True)
        try:
            run_tool(["systemctl", "--user", "daemon-reload"])
            run_tool(["systemctl", "--user", "reset-failed", NAME], check=False)  # may be clean
        except ServiceError as exc:
            failed.append(str(exc))
        return Removal(removed=True, failed=failed)

    def _show(self, shown: dict[str, str]) -> str | None:
        """Fill ``shown`` with ``systemctl --user show``'s properties; why it could not be
        asked (None: it answered)."""
        try:
            done = run_tool(
                ["systemctl", "--user", "show", NAME, f"--property={','.join(PROPERTIES)}"],
                check=False,
            )
        except ServiceError as exc:  # no systemctl to ask; the file still tells
            return str(exc)
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or "no answer").splitlines()
            return f"the systemd user manager did not answer: {said[-1]}"
        shown.update(parse_show(done.stdout))
        return None

    def status(self, why_not: str | None = None) -> ServiceStatus:
        """The unit file and ``systemctl --user show``'s properties of the unit; only the
        file when ``why_not`` says no manager runs here (``manager`` None)."""
        text, command = self._current()
        problem: str | None = None
        shown: dict[str, str] = {}
        if why_not is not None:
            problem = f"no service manager is running here ({why_not})"
        else:
            problem = self._show(shown)
        active = shown.get("ActiveState", "")
        running = active in ("active", "reloading")
        pid = int(shown.get("MainPID", "0") or 0)
        since = shown.get("ActiveEnterTimestamp" if running else "InactiveEnterTimestamp", "")
        loaded = shown.get("LoadState", "")
        if problem is not None:
            state = "unknown"
        elif loaded == "not-found":
            state, since = "not loaded", ""
        else:
            state = f"{active} ({shown.get('SubState', '')})" if active else "unknown"
        unit_state = shown.get("UnitFileState", "")
        return ServiceStatus(
            manager=self.manager if why_not is None else None,
            name=NAME,
            path=self.path,
            installed=text is not None,
            command=command,
            stale=stale(command),
            enabled=None if problem is not None else unit_state.startswith("enabled"),
            running=running,
            state=state,
            pid=pid or None,
            since=since or None,
            logs=LOGS,
            problem=problem,
        )


__all__ = [
    "LOGS",
    "NAME",
    "SystemdUserService",
    "parse_show",
    "quote",
    "render_unit",
    "unit_command",
    "unit_folder",
]
