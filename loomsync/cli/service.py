"""``loomsync service install|uninstall|status``: ``loomsync watch`` in the background, as a
systemd user unit (Linux) or a launchd agent (macOS) (issue 17 item 2; docs/client.md
"loomsync service install"). Registered on the one typer app of :mod:`loomsync.cli.main`;
the work is :mod:`loomsync.service`.

Exit codes (:mod:`loomsync.cli.exits`): 0 done (``status``: installed and running;
``install --dry-run`` and ``uninstall`` also without a service manager); 1 FAILED, the effect
did not happen (``install`` with no service manager here, which prints how to run ``loomsync
watch`` instead; a ``systemctl`` / ``launchctl`` step refused; ``status``: not installed or
not running, ``--json`` printed all the same); 2 usage.

Without a service manager, ``install --dry-run``, ``status`` and ``uninstall`` work on the
platform's file (systemd's unit on Linux): newcomer finding 4 (watch-findings.md).
"""

from __future__ import annotations

import shlex
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from loomsync.cli import messages, render
from loomsync.cli.exits import ExitCode
from loomsync.cli.main import JsonOption, app, console, errors
from loomsync.terminal import printable

if TYPE_CHECKING:
    from loomsync.service.base import InstallPlan, ServiceManager, ServiceStatus


class ManagerName(StrEnum):
    """The service managers ``--manager`` can force."""

    systemd = "systemd"
    launchd = "launchd"


service_app = typer.Typer(
    name="service",
    no_args_is_help=True,
    help="Run `loomsync watch` in the background (systemd user unit or launchd agent).",
)
app.add_typer(service_app, name="service")

ManagerOption = Annotated[
    ManagerName | None,
    typer.Option(
        "--manager",
        envvar="LOOMSYNC_SERVICE_MANAGER",
        help="Testing/advanced: use this service manager without detecting one.",
        show_default=False,
    ),
]


def _manager(forced: ManagerName | None) -> tuple[ServiceManager, str | None]:
    """The platform's (or the forced) manager and why it is not running here (None: it is)."""
    from loomsync.service.detect import detect  # systemd/launchd code only for this command

    return detect(forced.value if forced is not None else None)


def _note(line: str) -> None:
    errors.print(Text(printable(line), style="yellow"))


def _previous(plan: InstallPlan, verb: str) -> None:
    """Say what an install replaces: a stale path first (that program is gone)."""
    from loomsync.service.base import stale

    if plan.previous is None:
        return
    old = shlex.join(plan.previous)
    if stale(plan.previous):
        _note(f"{verb} an old service file whose command was {old}: that program is gone.")
    elif plan.changed:
        _note(f"{verb} an older service file (its command was {old}).")


def _print_plan(plan: InstallPlan) -> None:
    console.print(printable(f"Would write {plan.path}:"))
    console.write_text(plan.text if plan.text.endswith("\n") else plan.text + "\n")
    _previous(plan, "Would replace")
    console.print("Would run:")
    for step in plan.steps:
        console.print(printable(f"  {shlex.join(step)}"))
    console.print("Nothing was changed (--dry-run).")


@service_app.command()
def install(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the file and the commands; change nothing.")
    ] = False,
    manager: ManagerOption = None,
) -> None:
    """Install and start `loomsync watch` as a service (at every login; restarted on failure)."""
    from loomsync.config import default_paths
    from loomsync.service.base import left_out
    from loomsync.service.detect import unusable

    chosen, why = _manager(manager)
    if dry_run:
        _print_plan(chosen.plan())
        if why is not None:
            _note(messages.no_manager_here(why))
        return
    if why is not None:
        raise unusable(why)
    plan = chosen.install()
    console.print(printable(f"Wrote {plan.path}"))
    _previous(plan, "Replaced")
    what = "unit" if chosen.manager == "systemd" else "agent"
    console.print(
        printable(
            f"Started {chosen.name} ({chosen.manager}): `loomsync watch` runs now and at every "
            "login, and again after a failure."
        )
    )
    console.print(printable(f"Logs: {chosen.logs}. Status: loomsync service status."))
    if chosen.manager == "systemd":
        console.print(
            "To keep it running after you log out, and start it at boot: loginctl enable-linger"
        )
    unseen = left_out()
    if unseen:
        _note(
            f"Not copied into the {what}: {', '.join(unseen)}. The service reads config.toml and "
            "the token file; if you log in through the environment, run `loomsync login` once."
        )
    if not default_paths().token_file.exists():
        _note(
            "Not logged in: the service keeps sessions on this machine only, until "
            "`loomsync login --server URL --token TOKEN`."
        )


@service_app.command()
def uninstall(manager: ManagerOption = None) -> None:
    """Stop and remove the service (nothing to do when it is not installed).

    Exits 0 when nothing was installed or it is removed; the file is removed even when the
    manager cannot be asked (a note says what was not done); exit 1 only when a manager that
    runs here refused to stop or disable it."""
    chosen, why = _manager(manager)
    path = chosen.path
    done = chosen.uninstall(why)
    if not done.removed:
        console.print(printable(f"{chosen.name} is not installed ({path}): nothing to do."))
    elif not done.failed:
        console.print(printable(f"Stopped and removed {chosen.name} ({path})."))
    else:
        _note(messages.removed_anyway(chosen.name, path, done.failed))
        if why is None:
            raise typer.Exit(ExitCode.FAILED)


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")


def _status_lines(status: ServiceStatus) -> list[tuple[str, str]]:
    manager = status.manager or "no service manager is running here"
    rows = [("Service", f"{status.name} ({manager})"), ("File", str(status.path))]
    if not status.installed:
        rows.append(("Installed", "no: `loomsync service install` sets it up"))
    elif status.manager is None:
        rows.append(("Installed", "yes, but no service manager is running here"))
        if status.command:
            rows.append(("Command", shlex.join(status.command)))
    else:
        command = shlex.join(status.command) if status.command else "(no command found)"
        if status.stale:
            command += "  (that program is gone: run `loomsync service install` again)"
        rows += [("Installed", "yes"), ("Command", command)]
    rows.append(("Enabled", _yes(status.enabled)))
    running = f"{'yes' if status.running else 'no'}: {status.state}"
    if status.pid is not None:
        running += f", PID {status.pid}"
    if status.since:
        running += f", since {status.since}"
    rows.append(("Running", running))
    rows.append(("Logs", status.logs))
    if status.problem:
        rows.append(("Problem", status.problem))
    return rows


@service_app.command()
def status(manager: ManagerOption = None, as_json: JsonOption = False) -> None:
    """Show whether the service is installed, enabled and running, and where its logs go.

    Exits 0 when it is installed and running, 1 otherwise (no service manager here: 1, and
    ``--json`` still prints the status, ``manager`` null and ``problem`` saying why)."""
    chosen, why = _manager(manager)
    found = chosen.status(why)
    if as_json:
        render.print_json(console, found.as_dict())
    else:
        rows = _status_lines(found)
        width = max(len(key) for key, _ in rows) + 2
        for key, value in rows:
            console.print(printable(f"{key + ':':<{width}}{value}"))
    if not (found.installed and found.running):
        raise typer.Exit(ExitCode.FAILED)


__all__ = ["ManagerName", "install", "service_app", "status", "uninstall"]
