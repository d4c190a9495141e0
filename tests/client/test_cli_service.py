"""``loomsync service install|uninstall|status`` (issue 17 item 2), run as a subprocess with a
fresh HOME at 80 columns, against recording stand-ins for ``systemctl`` and ``launchctl``
(tests/client/service_managers.py: the OS service managers are the one allowed stand-in).

The systemd unit is read back with configparser and checked by ``systemd-analyze verify``; the
launchd plist is read back with plistlib. What the CLI asked the manager to do is read from
the stand-in's log: daemon-reload then enable --now; over a stale unit, enable and restart;
uninstall's disable --now, removal and reload, twice without harm; status's show properties.
Without a service manager the command says how to run ``loomsync watch`` instead (exit 1),
its cron line carrying the unit's variables; the rest of that case is
tests/client/test_cli_service_no_manager.py.
Nothing here depends on what ``loomsync watch`` does (issue 17 item 1).
"""

from __future__ import annotations

import configparser
import json
import os
import plistlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.client.conftest import LOOMSYNC, Person, Result
from tests.client.service_managers import FakeManager

UNIT = "loomsync-watch.service"
LABEL = "dev.loomsync.watch"
WATCH = f"{LOOMSYNC} watch"
XDG = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
linux_only = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="detection picks launchd on macOS"
)


def run(person: Person, fake: FakeManager | None, *args: str, **env: str) -> Result:
    """``loomsync *args`` in ``person``'s HOME at 80 columns, the stand-in first on PATH."""
    extra = {"COLUMNS": "80", **(fake.env if fake else {}), **env}
    return person(*args, env=extra)


@pytest.fixture
def systemctl(person: Person) -> FakeManager:
    return FakeManager(person.home / "fakebin", "systemctl")


@pytest.fixture
def launchctl(person: Person) -> FakeManager:
    return FakeManager(person.home / "fakebin", "launchctl")


def unit_path(person: Person) -> Path:
    return person.home / ".config" / "systemd" / "user" / UNIT


def read_unit(path: Path) -> dict[str, dict[str, str]]:
    """The unit's sections of keys, read as configparser reads an INI file but keeping
    repeated keys (``Environment=``) as lines of one value."""
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    repeated: dict[tuple[str, str], list[str]] = {}
    section = ""
    for line in path.read_text().splitlines():
        if line.startswith("["):
            section = line.strip("[]")
        elif "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            repeated.setdefault((section, key), []).append(value)
    parser.read_string(path.read_text())  # parses as INI: sections, keys
    return {
        name: {key: "\n".join(repeated[(name, key)]) for key in parser[name]}
        for name in parser.sections()
    }


@linux_only
def test_install_writes_a_user_unit_and_enables_it(person: Person, systemctl: FakeManager) -> None:
    done = run(person, systemctl, "service", "install", LOOMSYNC_TOKEN="secret-token-1234")
    assert done.code == 0, done.err
    path = unit_path(person)
    assert done.out.splitlines() == [
        f"Wrote {path}",
        f"Started {UNIT} (systemd): `loomsync watch` runs now and at every login, and again "
        "after a failure.",
        "Logs: journalctl --user -u loomsync-watch. Status: loomsync service status.",
        "To keep it running after you log out, and start it at boot: loginctl enable-linger",
    ]
    assert "Not copied into the unit: LOOMSYNC_RETRIES, LOOMSYNC_TOKEN." in done.err
    assert "Not logged in" in done.err
    unit = read_unit(path)
    assert unit["Service"]["ExecStart"] == WATCH
    assert unit["Service"]["Restart"] == "on-failure"
    assert unit["Install"]["WantedBy"] == "default.target"
    assert unit["Service"]["Environment"].splitlines() == [
        "PYTHONUNBUFFERED=1",
        f"XDG_CONFIG_HOME={person.home / '.config'}",
        f"XDG_DATA_HOME={person.home / '.local' / 'share'}",
        f"XDG_STATE_HOME={person.home / '.local' / 'state'}",
        f"XDG_CACHE_HOME={person.home / '.cache'}",
    ]
    assert "secret-token-1234" not in path.read_text()
    assert "LOOMSYNC_" not in path.read_text()
    assert systemctl.calls() == [
        ["--user", "is-system-running"],  # detection: a user manager runs
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", UNIT],
    ]
    assert systemctl.state["command"] == WATCH  # what the manager loaded and started


def test_the_unit_passes_systemd_analyze_verify(person: Person, systemctl: FakeManager) -> None:
    spaced = person.home / "my configs"  # a folder with a space, quoted in Environment=
    done = run(
        person, systemctl, "service", "install", "--manager", "systemd",
        XDG_CONFIG_HOME=str(spaced),
    )  # fmt: skip
    assert done.code == 0, done.err
    path = spaced / "systemd" / "user" / UNIT
    assert read_unit(path)["Service"]["Environment"].splitlines()[1] == (
        f'"XDG_CONFIG_HOME={spaced}"'
    )
    checked = subprocess.run(
        ["systemd-analyze", "verify", str(path)], capture_output=True, text=True, check=False
    )
    assert (checked.returncode, checked.stderr) == (0, "")


def test_dry_run_prints_the_unit_and_changes_nothing(
    person: Person, systemctl: FakeManager
) -> None:
    shown = run(person, systemctl, "service", "install", "--dry-run", "--manager", "systemd")
    assert shown.code == 0, shown.err
    path = unit_path(person)
    assert not path.exists()
    assert not (person.home / ".config" / "systemd").exists()
    assert systemctl.calls() == []
    lines = shown.out.splitlines()
    assert lines[0] == f"Would write {path}:"
    assert lines[-4:] == [
        "Would run:",
        "  systemctl --user daemon-reload",
        f"  systemctl --user enable --now {UNIT}",
        "Nothing was changed (--dry-run).",
    ]
    assert run(person, systemctl, "service", "install", "--manager", "systemd").code == 0
    assert "\n".join(lines[1:-4]) + "\n" == path.read_text()  # what install writes


def test_reinstall_over_a_stale_unit_says_so_and_restarts(
    person: Person, systemctl: FakeManager
) -> None:
    path = unit_path(person)
    path.parent.mkdir(parents=True)
    path.write_text(
        "[Service]\nExecStart=/gone/venv/bin/loomsync watch\n[Install]\nWantedBy=default.target\n"
    )
    assert (
        "that program is gone"
        in run(person, systemctl, "service", "status", "--manager", "systemd").out
    )
    systemctl.calls()
    shown = run(person, systemctl, "service", "install", "--manager", "systemd", "--dry-run")
    assert "Would replace an old service file whose command was /gone/venv/bin/loomsync " in (
        shown.err
    )
    assert f"  systemctl --user restart {UNIT}" in shown.out.splitlines()
    done = run(person, systemctl, "service", "install", "--manager", "systemd")
    assert done.code == 0, done.err
    assert (
        "Replaced an old service file whose command was /gone/venv/bin/loomsync watch: that "
        "program is gone." in done.err.replace("\n", " ")
    )
    assert read_unit(path)["Service"]["ExecStart"] == WATCH
    assert systemctl.calls() == [
        ["--user", "daemon-reload"],
        ["--user", "enable", UNIT],
        ["--user", "restart", UNIT],
    ]
    assert systemctl.state["command"] == WATCH  # restarted with the new ExecStart
    again = run(person, systemctl, "service", "install", "--manager", "systemd")
    assert again.code == 0
    assert "Replaced" not in again.err  # the same unit: nothing to say


def test_status_shows_installed_enabled_running_and_logs(
    person: Person, systemctl: FakeManager
) -> None:
    missing = run(person, systemctl, "service", "status", "--manager", "systemd")
    assert missing.code == 1
    assert "Installed: no: `loomsync service install` sets it up" in missing.out
    assert run(person, systemctl, "service", "install", "--manager", "systemd").code == 0
    systemctl.calls()
    shown = run(person, systemctl, "service", "status", "--manager", "systemd")
    assert shown.code == 0, shown.err
    state = systemctl.state
    assert shown.out.splitlines() == [
        f"Service:   {UNIT} (systemd)",
        f"File:      {unit_path(person)}",
        "Installed: yes",
        f"Command:   {WATCH}",
        "Enabled:   yes",
        f"Running:   yes: active (running), PID {state['pid']}, since {state['since']}",
        "Logs:      journalctl --user -u loomsync-watch",
    ]
    [call] = systemctl.calls()
    assert call[:3] == ["--user", "show", UNIT]
    as_json = json.loads(run(person, systemctl, "service", "status", "--json").out)
    assert as_json == {
        "manager": "systemd",
        "name": UNIT,
        "path": str(unit_path(person)),
        "installed": True,
        "command": [str(LOOMSYNC), "watch"],
        "stale": False,
        "enabled": True,
        "running": True,
        "state": "active (running)",
        "pid": state["pid"],
        "since": state["since"],
        "logs": "journalctl --user -u loomsync-watch",
        "problem": None,
    }


def test_uninstall_stops_disables_removes_and_is_idempotent(
    person: Person, systemctl: FakeManager
) -> None:
    assert run(person, systemctl, "service", "install", "--manager", "systemd").code == 0
    systemctl.calls()
    done = run(person, systemctl, "service", "uninstall", "--manager", "systemd")
    assert done.code == 0, done.err
    assert done.out == f"Stopped and removed {UNIT} ({unit_path(person)}).\n"
    assert not unit_path(person).exists()
    assert systemctl.calls() == [
        ["--user", "disable", "--now", UNIT],
        ["--user", "daemon-reload"],
        ["--user", "reset-failed", UNIT],
    ]
    assert systemctl.state["active"] == "inactive"
    again = run(person, systemctl, "service", "uninstall", "--manager", "systemd")
    assert (again.code, again.err) == (0, "")
    assert again.out == f"{UNIT} is not installed ({unit_path(person)}): nothing to do.\n"
    assert systemctl.calls() == []
    stopped = run(person, systemctl, "service", "status", "--manager", "systemd")
    assert stopped.code == 1
    assert "Running:   no: not loaded\n" in stopped.out


def test_a_refused_step_is_one_error_line_and_exit_1(
    person: Person, systemctl: FakeManager
) -> None:
    done = run(
        person, systemctl, "service", "install", "--manager", "systemd", FAKE_SERVICE_FAIL="enable"
    )
    assert done.code == 1
    assert done.err.splitlines()[0] == (
        f"error: `systemctl --user enable --now {UNIT}` failed (exit code 1): Job for {UNIT} "
        "failed because the control process exited with error code."
    )
    assert unit_path(person).exists()  # written: `status` shows it, a re-install retries


@linux_only
@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (None, "no service manager here (systemctl is not on PATH)"),
        ("offline", "no service manager here (`systemctl --user is-system-running` says offline)"),
    ],
)
def test_without_a_service_manager_it_says_how_to_run_watch(
    person: Person, systemctl: FakeManager, answer: str | None, why: str
) -> None:
    if answer is None:
        empty = person.home / "emptybin"
        empty.mkdir()
        done = run(person, None, "service", "install", PATH=str(empty))
    else:
        done = run(person, systemctl, "service", "install", FAKE_SYSTEMD_STATE=answer)
    assert done.code == 1
    assert done.out == ""
    log = person.home / ".local" / "state" / "loomsync" / "watch.log"
    xdg = " ".join(f"{name}={person.env[name]}" for name in XDG)  # what the unit carries
    assert done.err.splitlines() == [
        f"error: {why}, so `loomsync service` cannot run `loomsync watch` for you (nothing was "
        "installed). Run it another way:",
        "  in the background, until you log out or reboot:",
        f"    mkdir -p {log.parent} && nohup {WATCH} >> {log} 2>&1 &",
        "  in a tmux session you can come back to (tmux attach -t loomsync):",
        f"    tmux new-session -d -s loomsync '{WATCH}'",
        "  at every boot: add this line with `crontab -e`:",
        f"    @reboot PYTHONUNBUFFERED=1 {xdg} {WATCH} >> {log} 2>&1",
    ]
    assert not (person.home / ".config" / "systemd").exists()


def test_launchd_agent_install_status_reinstall_uninstall(
    person: Person, launchctl: FakeManager
) -> None:
    force = {"LOOMSYNC_SERVICE_MANAGER": "launchd", "FAKE_LAUNCHD_PID": str(os.getpid())}
    target = f"gui/{os.getuid()}/{LABEL}"
    plist = person.home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    log = person.home / "Library" / "Logs" / "loomsync" / "watch.log"
    done = run(person, launchctl, "service", "install", **force)
    assert done.code == 0, done.err
    assert done.out.splitlines()[:3] == [
        f"Wrote {plist}",
        f"Started {LABEL} (launchd): `loomsync watch` runs now and at every login, and again "
        "after a failure.",
        f"Logs: {log}. Status: loomsync service status.",
    ]
    agent = plistlib.loads(plist.read_bytes())
    assert agent["Label"] == LABEL
    assert agent["ProgramArguments"] == [str(LOOMSYNC), "watch"]
    assert agent["RunAtLoad"] is True
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log)
    assert agent["EnvironmentVariables"]["PYTHONUNBUFFERED"] == "1"
    assert not any(k.startswith("LOOMSYNC_") for k in agent["EnvironmentVariables"])
    assert log.parent.is_dir()  # launchd does not make the folder of a log path
    assert launchctl.calls() == [
        ["print", target],
        ["enable", target],
        ["bootstrap", f"gui/{os.getuid()}", str(plist)],
    ]

    shown = run(person, launchctl, "service", "status", **force)
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[:5] == [
        f"Service:   {LABEL} (launchd)",
        f"File:      {plist}",
        "Installed: yes",
        f"Command:   {WATCH}",
        "Enabled:   yes",
    ]
    assert lines[5].startswith(f"Running:   yes: running, PID {os.getpid()}, since ")
    assert lines[5] != f"Running:   yes: running, PID {os.getpid()}, since "  # ps's start time
    assert lines[6] == f"Logs:      {log}"
    launchctl.calls()

    again = run(person, launchctl, "service", "install", **force)
    assert again.code == 0, again.err
    assert [c[0] for c in launchctl.calls()] == ["print", "bootout", "enable", "bootstrap"]

    gone = run(person, launchctl, "service", "uninstall", **force)
    assert (gone.code, gone.out) == (0, f"Stopped and removed {LABEL} ({plist}).\n")
    assert not plist.exists()
    assert launchctl.calls() == [["print", target], ["bootout", target]]
    twice = run(person, launchctl, "service", "uninstall", **force)
    assert (twice.code, twice.out) == (0, f"{LABEL} is not installed ({plist}): nothing to do.\n")
    assert launchctl.calls() == [["print", target]]
    status = run(person, launchctl, "service", "status", **force)
    assert status.code == 1
    assert "Running:   no: not loaded\n" in status.out


def test_launchd_dry_run_prints_the_plist(person: Person, launchctl: FakeManager) -> None:
    done = run(person, launchctl, "service", "install", "--dry-run", "--manager", "launchd")
    assert done.code == 0, done.err
    plist = person.home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    lines = done.out.splitlines()
    assert lines[0] == f"Would write {plist}:"
    text = "\n".join(lines[1:-4]) + "\n"
    assert plistlib.loads(text.encode())["ProgramArguments"] == [str(LOOMSYNC), "watch"]
    assert not (person.home / "Library").exists()
    assert [c[0] for c in launchctl.calls()] == ["print"]  # asked whether it is loaded, only


def test_service_help_fits_80_columns(person: Person) -> None:
    done = run(person, None, "service", "--help")
    assert done.code == 0
    for command in ("install", "uninstall", "status"):
        assert f" {command} " in done.out
    assert max(len(line) for line in done.out.splitlines()) <= 80
    bad = run(person, None, "service", "status", "--manager", "upstart")
    assert bad.code == 2


def test_status_of_a_unit_that_failed_says_so(person: Person, systemctl: FakeManager) -> None:
    assert run(person, systemctl, "service", "install", "--manager", "systemd").code == 0
    failed = {"active": "failed", "sub": "failed", "pid": 0, "since": "Wed 2026-12-02 01:02:03 UTC"}
    systemctl.state_file.write_text(json.dumps({**systemctl.state, **failed}))
    shown = run(person, systemctl, "service", "status", "--manager", "systemd")
    assert shown.code == 1
    assert "Running:   no: failed (failed), since Wed 2026-12-02 01:02:03 UTC\n" in shown.out
    assert "Logs:      journalctl --user -u loomsync-watch\n" in shown.out


def test_the_dry_run_in_the_docs_is_what_it_prints(person: Person, systemctl: FakeManager) -> None:
    from loomsync import __version__

    docs = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    block = docs.split("$ loomsync service install --dry-run\n", 1)[1].split("\n\n$ ", 1)[0]
    documented = (
        block.replace("/home/alice/loomsync/.venv/bin/loomsync", str(LOOMSYNC))
        .replace("/home/alice", str(person.home))
        .replace("(loomsync 0.1.0)", f"(loomsync {__version__})")
    )
    shown = run(person, systemctl, "service", "install", "--dry-run", "--manager", "systemd")
    assert shown.code == 0, shown.err
    printed = [line for line in shown.out.splitlines() if not line.startswith("Environment=XDG_")]
    assert printed == documented.splitlines()
