"""``loomsync service`` where no service manager answers, and a manager step that fails
(issue 17 item 2; newcomer finding 4 in watch-findings.md; docs/client.md "Without systemd or
launchd"). Run as a subprocess with a fresh HOME at 80 columns, with PATH holding no
``systemctl`` (or the recording stand-in of tests/client/service_managers.py answering
``offline``, or refusing one verb).

``install --dry-run`` still prints the unit, plus a note, exit 0; ``status --json`` always
prints JSON (``manager`` null, ``problem`` why), exit 1; ``uninstall`` with nothing there
is "nothing to do", exit 0, and a unit left on disk is removed anyway, saying what it could
not do; ``install`` failing at ``daemon-reload`` puts the unit back as it was.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.client.conftest import Person, Result
from tests.client.service_managers import FakeManager
from tests.client.test_cli_service import UNIT, WATCH, run, unit_path

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="detection picks launchd on macOS"
)
NO_SYSTEMCTL = "systemctl is not on PATH"
OFFLINE = "`systemctl --user is-system-running` says offline"


def without_manager(person: Person, how: str, *args: str) -> Result:
    """``loomsync *args`` with no systemd user manager: PATH without ``systemctl``
    (``how`` = "path") or the stand-in answering ``offline`` (``how`` = "offline")."""
    if how == "path":
        empty = person.home / "emptybin"
        empty.mkdir(exist_ok=True)
        return run(person, None, *args, PATH=str(empty))
    fake = FakeManager(person.home / "fakebin", "systemctl")
    return run(person, fake, *args, FAKE_SYSTEMD_STATE="offline")


def leave_a_unit(person: Person) -> Path:
    """A unit written by an earlier install (with a user manager then), left on disk."""
    fake = FakeManager(person.home / "fakebin", "systemctl")
    assert run(person, fake, "service", "install").code == 0
    return unit_path(person)


WHY = pytest.mark.parametrize(("how", "why"), [("path", NO_SYSTEMCTL), ("offline", OFFLINE)])


@WHY
def test_dry_run_prints_the_unit_and_says_no_manager_runs(
    person: Person, how: str, why: str
) -> None:
    shown = without_manager(person, how, "service", "install", "--dry-run")
    assert shown.code == 0, shown.err
    lines = shown.out.splitlines()
    assert lines[0] == f"Would write {unit_path(person)}:"
    assert f"ExecStart={WATCH}" in lines
    assert lines[-1] == "Nothing was changed (--dry-run)."
    assert " ".join(shown.err.split()) == (
        f"No service manager is running here ({why}): `loomsync service install` would not "
        "install this; it prints how to run `loomsync watch` another way."
    )
    assert not (person.home / ".config" / "systemd").exists()


@WHY
def test_status_json_always_prints_json(person: Person, how: str, why: str) -> None:
    shown = without_manager(person, how, "service", "status", "--json")
    assert shown.code == 1  # not installed, not running (docs/client.md exit codes)
    found = json.loads(shown.out)
    assert found["installed"] is False
    assert found["manager"] is None
    assert found["running"] is False
    assert found["problem"] == f"no service manager is running here ({why})"
    assert found["path"] == str(unit_path(person))


@WHY
def test_status_finds_a_unit_on_disk_without_a_manager(person: Person, how: str, why: str) -> None:
    leave_a_unit(person)
    shown = without_manager(person, how, "service", "status")
    assert shown.code == 1
    assert shown.out.splitlines()[:4] == [
        f"Service:   {UNIT} (no service manager is running here)",
        f"File:      {unit_path(person)}",
        "Installed: yes, but no service manager is running here",
        f"Command:   {WATCH}",
    ]
    assert f"Problem:   no service manager is running here ({why})" in shown.out
    found = json.loads(without_manager(person, how, "service", "status", "--json").out)
    assert (found["installed"], found["manager"]) == (True, None)
    assert found["command"] == WATCH.split()


@WHY
def test_uninstall_with_nothing_installed_is_nothing_to_do(
    person: Person, how: str, why: str
) -> None:
    done = without_manager(person, how, "service", "uninstall")
    assert (done.code, done.err) == (0, "")
    assert done.out == f"{UNIT} is not installed ({unit_path(person)}): nothing to do.\n"


@WHY
def test_uninstall_removes_a_unit_left_on_disk(person: Person, how: str, why: str) -> None:
    path = leave_a_unit(person)
    done = without_manager(person, how, "service", "uninstall")
    assert done.code == 0, done.err
    assert not path.exists()
    assert " ".join(done.err.split()) == (
        f"Removed {path}, but could not stop or disable {UNIT}: no service manager is "
        f"running here ({why})."
    )
    again = without_manager(person, how, "service", "uninstall")
    assert (again.code, again.out) == (0, f"{UNIT} is not installed ({path}): nothing to do.\n")


def test_forced_uninstall_removes_the_unit_when_disable_fails(person: Person) -> None:
    path = leave_a_unit(person)
    fake = FakeManager(person.home / "fakebin", "systemctl")
    fake.calls()
    done = run(
        person, fake, "service", "uninstall", "--manager", "systemd", FAKE_SERVICE_FAIL="disable"
    )
    assert done.code == 1  # the manager runs and refused: it may still run
    assert not path.exists()
    said = " ".join(done.err.split())
    assert said.startswith(f"Removed {path}, but could not stop or disable {UNIT}: ")
    assert f"`systemctl --user disable --now {UNIT}` failed (exit code 1)" in said
    assert [call[1] for call in fake.calls()] == ["disable", "daemon-reload", "reset-failed"]


def test_install_failing_at_daemon_reload_puts_the_unit_back(person: Person) -> None:
    fake = FakeManager(person.home / "fakebin", "systemctl")
    failing = {"FAKE_SERVICE_FAIL": "daemon-reload"}
    done = run(person, fake, "service", "install", "--manager", "systemd", **failing)
    assert done.code == 1
    path = unit_path(person)
    assert done.err.splitlines()[0].startswith(
        "error: `systemctl --user daemon-reload` failed (exit code 1): "
    )
    assert f"(nothing was installed: {path} removed again)" in " ".join(done.err.split())
    assert not path.exists()
    status = run(person, fake, "service", "status", "--manager", "systemd")
    assert "Installed: no: `loomsync service install` sets it up" in status.out

    old = "[Service]\nExecStart=/gone/venv/bin/loomsync watch\n"
    path.write_text(old)
    again = run(person, fake, "service", "install", "--manager", "systemd", **failing)
    assert again.code == 1
    assert "put back as it was" in " ".join(again.err.split())
    assert path.read_text() == old


def test_the_status_json_in_the_docs_is_what_it_prints(person: Person) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    block = docs.split("$ loomsync service status --json\n", 1)[1].split("\n```", 1)[0]
    documented = json.loads(block.replace("/home/alice", str(person.home)))
    shown = without_manager(person, "path", "service", "status", "--json")
    assert json.loads(shown.out) == documented
