"""What the two service managers share (issue 17 item 2): the command the service runs, the
environment it gets, the shapes of a status and an install, and the one way to call
``systemctl`` / ``launchctl``.

The service runs ``loomsync watch`` with no arguments, by the absolute path of the ``loomsync``
executable that runs now (:func:`watch_command`), so a service installed from a virtualenv
keeps working outside it. Its environment (:func:`service_environment`) carries the XDG base
folders set now, so the service reads the same config.toml, token and store as this shell, and
``PYTHONUNBUFFERED=1`` so each log line reaches the journal or the log file when written. No
``LOOMSYNC_*`` variable is copied (``LOOMSYNC_TOKEN`` is a secret): the service reads the files
``loomsync login`` writes, like every command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from loomsync.errors import ServiceError

#: The XDG base folders copied into the service's environment when set now.
XDG_FOLDERS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
#: How long one ``systemctl`` / ``launchctl`` call may take, in seconds.
TOOL_TIMEOUT = 30.0


def watch_command(argv0: str | None = None) -> list[str]:
    """``[<absolute path of the running loomsync>, "watch"]``.

    ``argv0`` (default ``sys.argv[0]``) is used when it is an executable file (the console
    script, made absolute; a symlink such as pipx's ``~/.local/bin/loomsync`` is kept, so an
    upgrade behind it is followed); otherwise ``loomsync`` is looked up on PATH.

    Raises:
        ServiceError: neither is found (``python -c``, an embedding program).
    """
    given = argv0 if argv0 is not None else sys.argv[0]
    if given and os.path.isfile(given) and os.access(given, os.X_OK):
        return [os.path.abspath(given), "watch"]
    found = shutil.which("loomsync")
    if found:
        return [os.path.abspath(found), "watch"]
    raise ServiceError(
        "cannot find the `loomsync` command to run as a service: install loomsync so that "
        "`loomsync` is on PATH (pipx install loomsync), then run `loomsync service install`"
    )


def service_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables the service runs with: ``PYTHONUNBUFFERED=1`` and those of
    :data:`XDG_FOLDERS` set (non-empty, absolute) in ``env`` (default ``os.environ``)."""
    env = os.environ if env is None else env
    chosen = {"PYTHONUNBUFFERED": "1"}
    for name in XDG_FOLDERS:
        value = env.get(name, "")
        if value and os.path.isabs(value):
            chosen[name] = value
    return chosen


def left_out(env: Mapping[str, str] | None = None) -> list[str]:
    """The ``LOOMSYNC_*`` variables set now that the service will not see (sorted): a shell
    that logs in with ``LOOMSYNC_TOKEN`` must run ``loomsync login`` for the service to."""
    env = os.environ if env is None else env
    return sorted(n for n in env if n.startswith("LOOMSYNC_") and n != "LOOMSYNC_SERVICE_MANAGER")


def stale(command: list[str] | None) -> bool:
    """True when ``command`` (a service file's) starts with a path that is no longer an
    executable file (a removed virtualenv, an uninstalled copy)."""
    if not command:
        return False
    return not (os.path.isfile(command[0]) and os.access(command[0], os.X_OK))


def write_file(path: Path, data: bytes) -> None:
    """Replace ``path`` (mode 0644, its folder made) with ``data``: a temporary file in the
    same folder, fsynced, renamed over it. Not :func:`loomsync.store.files.atomic_write`: its
    ``.lock`` file would be left in the service manager's folder.

    Raises:
        OSError: the folder or the file could not be written (``path`` is then unchanged).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(temp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def run_tool(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a service manager's command (``systemctl --user …``, ``launchctl …``) and return
    what it said (text, captured).

    Raises:
        ServiceError: the program is not on PATH (or cannot be run), did not answer within
            :data:`TOOL_TIMEOUT`, or (with ``check``) exited non-zero; the message names the
            command and its last line of output.
    """
    shown = " ".join(argv)
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
        )
    except FileNotFoundError:
        raise ServiceError(f"cannot run `{shown}`: {argv[0]} is not on PATH") from None
    except OSError as exc:  # not executable, ...
        raise ServiceError(f"cannot run `{shown}`: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise ServiceError(f"`{shown}` did not answer in {TOOL_TIMEOUT:.0f} s") from None
    if check and done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).splitlines()
        reason = said[-1] if said else "no output"
        raise ServiceError(f"`{shown}` failed (exit code {done.returncode}): {reason}")
    return done


@dataclass(frozen=True)
class ServiceStatus:
    """What ``loomsync service status`` reports (``--json``: :meth:`as_dict`).

    Attributes:
        manager: ``systemd`` or ``launchd``; None when that platform's manager is not running
            here (the file is still looked for: ``installed`` may be true).
        name: the unit's name or the agent's label.
        path: the unit or plist file.
        installed: the file exists.
        command: the command line in the file (None when not installed or unreadable).
        stale: that command's program is gone (reinstall).
        enabled: starts at login (None: the manager could not be asked).
        running: the process runs now.
        state: the manager's words (``active (running)``, ``inactive (dead)``, ``not loaded``).
        pid: the main process id, when running.
        since: when it entered its state, as the manager says it (None: unknown).
        logs: how to read its output (a command or a file).
        problem: why the manager could not be asked (None when it answered).
    """

    manager: str | None
    name: str
    path: Path
    installed: bool
    command: list[str] | None
    stale: bool
    enabled: bool | None
    running: bool
    state: str
    pid: int | None
    since: str | None
    logs: str
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields, ``path`` as a string."""
        return {**asdict(self), "path": str(self.path)}


@dataclass(frozen=True)
class InstallPlan:
    """What :meth:`ServiceManager.install` writes and runs (``--dry-run`` prints it).

    Attributes:
        path: the file written.
        text: its content.
        steps: the manager commands run after writing, in order.
        previous: the command line of the file it replaces (None: a new install).
        changed: the content differs from the file there now.
    """

    path: Path
    text: str
    steps: list[list[str]] = field(default_factory=list)
    previous: list[str] | None = None
    changed: bool = True


@dataclass(frozen=True)
class Removal:
    """What :meth:`ServiceManager.uninstall` did.

    Attributes:
        removed: something was installed (a file, a loaded agent) and its file is gone now.
        failed: the manager steps that could not be done (stop, disable, reload), one line
            each (a :class:`~loomsync.errors.ServiceError`'s text, or why no manager was asked).
    """

    removed: bool
    failed: list[str] = field(default_factory=list)


def put_back(path: Path, old: bytes | None) -> None:
    """Undo a :func:`write_file` of ``path``: ``old`` written again, or the file removed when
    there was none (``old`` None). Raises OSError as :func:`write_file` does."""
    if old is None:
        path.unlink(missing_ok=True)
    else:
        write_file(path, old)


class ServiceManager(Protocol):
    """A service manager ``loomsync service`` drives (:mod:`loomsync.service.systemd`,
    :mod:`loomsync.service.launchd`)."""

    #: ``systemd`` or ``launchd``.
    manager: str
    #: The unit's name or the agent's label.
    name: str

    @property
    def path(self) -> Path:
        """The unit or plist file."""
        ...

    @property
    def logs(self) -> str:
        """How to read the service's output (a command or a file path)."""
        ...

    def plan(self) -> InstallPlan:
        """What an install would write and run, nothing touched."""
        ...

    def install(self) -> InstallPlan:
        """Write the file, load, enable and (re)start the service; the plan carried out.

        Raises:
            ServiceError: a manager command failed (the file is written by then, except when
                the first step, loading it, failed: the file is then put back as it was).
            OSError: the file could not be written.
        """
        ...

    def uninstall(self, why_not: str | None = None) -> Removal:
        """Stop, disable and remove the service. The file is removed even when the manager
        cannot be asked or refuses a step (``failed`` says which); ``why_not`` (why no manager
        runs here) skips asking it. Never raises ServiceError."""
        ...

    def status(self, why_not: str | None = None) -> ServiceStatus:
        """What is installed and running now (never raises for a missing manager: the
        status says so in ``problem``); ``why_not`` (why no manager runs here) skips asking
        the manager: ``manager`` is then None and ``problem`` says why."""
        ...


__all__ = [
    "XDG_FOLDERS",
    "InstallPlan",
    "Removal",
    "ServiceManager",
    "ServiceStatus",
    "left_out",
    "put_back",
    "run_tool",
    "service_environment",
    "stale",
    "watch_command",
    "write_file",
]
