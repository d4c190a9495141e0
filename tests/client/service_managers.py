"""Recording stand-ins for ``systemctl`` and ``launchctl`` (issue 17 item 2's tests).

The OS service managers are outside our control and this machine has no systemd user session,
so ``loomsync service`` is tested against programs of the same name put first on PATH. Each
appends its argv to ``$FAKE_SERVICE_LOG`` (one JSON list a line), keeps the service's state in
``$FAKE_SERVICE_STATE`` (JSON), and answers as the real one does (systemd 252, macOS 14):
exit codes, ``show``'s ``Key=Value`` lines, ``launchctl print``'s block and its refusals.
``$FAKE_SERVICE_FAIL`` names a verb to refuse the way the real manager refuses a job;
``$FAKE_SYSTEMD_STATE`` is what ``is-system-running`` answers (default ``running``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

_COMMON = r"""
import json, os, plistlib, sys, time
from pathlib import Path

args = sys.argv[1:]
with open(os.environ["FAKE_SERVICE_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
state_file = Path(os.environ["FAKE_SERVICE_STATE"])
state = json.loads(state_file.read_text()) if state_file.exists() else {}


def done(code=0, out="", err=""):
    state_file.write_text(json.dumps(state))
    if out:
        sys.stdout.write(out + "\n")
    if err:
        sys.stderr.write(err + "\n")
    sys.exit(code)


def start(command):
    state["count"] = state.get("count", 0) + 1
    state.update(active="active", sub="running", pid=4000 + state["count"], command=command,
                 since=time.strftime("%a %Y-%m-%d %H:%M:%S UTC", time.gmtime()))
"""

SYSTEMCTL = (
    _COMMON
    + r"""
NAME = "loomsync-watch.service"
config = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
unit = Path(config) / "systemd" / "user" / NAME
if args[:1] != ["--user"]:
    done(1, err="Failed to connect to bus: No medium found")
verb, rest = args[1], args[2:]
if verb == os.environ.get("FAKE_SERVICE_FAIL"):
    done(1, err=f"Job for {NAME} failed because the control process exited with error code.")


def loaded_command():
    for line in state.get("loaded", "").splitlines():
        if line.startswith("ExecStart="):
            return line.removeprefix("ExecStart=")
    return None


if verb == "is-system-running":
    answer = os.environ.get("FAKE_SYSTEMD_STATE", "running")
    done(0 if answer == "running" else 1, out=answer)
if verb == "daemon-reload":
    state["loaded"] = unit.read_text() if unit.exists() else ""
    done()
if NAME not in rest:
    done(1, err=f"Unknown command verb {verb}.")
if verb == "enable":
    if not unit.exists():
        done(1, err=f"Failed to enable unit: Unit file {NAME} does not exist.")
    state["enabled"] = True
    if "--now" in rest and state.get("active") != "active":
        start(loaded_command())
    wants = unit.parent / "default.target.wants" / NAME
    done(err=f"Created symlink {wants} \u2192 {unit}.")
if verb in ("restart", "start"):
    if not state.get("loaded"):
        done(5, err=f"Failed to {verb} {NAME}: Unit {NAME} not found.")
    start(loaded_command())
    done()
if verb == "disable":
    if not unit.exists():
        done(1, err=f"Failed to disable unit: Unit file {NAME} does not exist.")
    state["enabled"] = False
    if "--now" in rest:
        state.update(active="inactive", sub="dead", pid=0, since="Wed 2026-12-02 01:00:00 UTC")
    done(err=f"Removed \"{unit.parent / 'default.target.wants' / NAME}\".")
if verb == "reset-failed":
    if state.get("active") != "failed":
        done(1, err=f"Failed to reset failed state of unit {NAME}: Unit {NAME} not loaded.")
    state.update(active="inactive", sub="dead")
    done()
if verb == "show":
    active = state.get("active", "inactive")
    values = {
        "LoadState": "loaded" if unit.exists() else "not-found",
        "UnitFileState": ("enabled" if state.get("enabled") else "disabled") if unit.exists() else "",
        "ActiveState": active,
        "SubState": state.get("sub", "dead"),
        "MainPID": str(state.get("pid", 0)),
        "ActiveEnterTimestamp": state.get("since", "") if active == "active" else "",
        "InactiveEnterTimestamp": state.get("since", "") if active != "active" else "",
    }
    if not unit.exists() and active != "active":  # an unloaded unit: no times, no state
        values.update(ActiveEnterTimestamp="", InactiveEnterTimestamp="")
    asked = [a.removeprefix("--property=") for a in args if a.startswith("--property=")]
    names = ",".join(asked).split(",") if asked else list(values)
    done(out="\n".join(f"{n}={values.get(n, '')}" for n in names))
done(1, err=f"Unknown command verb {verb}.")
"""
)

LAUNCHCTL = (
    _COMMON
    + r"""
LABEL = "dev.loomsync.watch"
verb, rest = args[0], args[1:]
if verb == os.environ.get("FAKE_SERVICE_FAIL"):
    done(5, err="Bootstrap failed: 5: Input/output error")
domain = f"gui/{os.getuid()}"
target = f"{domain}/{LABEL}"
if verb == "print" and rest == [target]:
    if not state.get("active") == "active":
        done(113, err=f'Could not find service "{LABEL}" in domain for user gui: {os.getuid()}')
    words = "".join(f"\t\t{w}\n" for w in state["command"])
    done(out=f"{target} = {{\n\tactive count = 1\n\tpath = {state['path']}\n"
             f"\ttype = LaunchAgent\n\tstate = running\n\n\tprogram = {state['command'][0]}\n"
             f"\targuments = {{\n{words}\t}}\n\n\tpid = {state['pid']}\n"
             f"\tlast exit code = (never exited)\n}}")
if verb == "print-disabled" and rest == [domain]:
    flag = "disabled" if state.get("disabled") else "enabled"
    done(out=f'disabled services = {{\n\t"{LABEL}" => {flag}\n}}')
if verb == "enable" and rest == [target]:
    state["disabled"] = False
    done()
if verb == "bootstrap" and rest[:1] == [domain] and len(rest) == 2:
    if state.get("active") == "active":
        done(5, err="Bootstrap failed: 5: Input/output error")
    try:
        agent = plistlib.loads(Path(rest[1]).read_bytes())
    except FileNotFoundError:
        done(2, err="Bootstrap failed: 2: No such file or directory")
    except Exception:
        done(5, err="Bootstrap failed: 5: Input/output error")
    state["path"] = rest[1]
    start(agent["ProgramArguments"])
    state["pid"] = int(os.environ.get("FAKE_LAUNCHD_PID", state["pid"]))
    done()
if verb == "bootout" and rest == [target]:
    if state.get("active") != "active":
        done(3, err="Boot-out failed: 3: No such process")
    state.update(active="inactive", pid=0)
    done()
done(64, err=f"Unrecognized subcommand: {verb}")
"""
)


class FakeManager:
    """A stand-in ``systemctl`` or ``launchctl`` in ``bin_dir``, with its log and state.

    ``env`` is what a test adds to the CLI's environment: PATH with ``bin_dir`` first (then
    this Python's folder and the system's, for ``ps``), and the log and state files.
    """

    def __init__(self, bin_dir: Path, name: str) -> None:
        source = {"systemctl": SYSTEMCTL, "launchctl": LAUNCHCTL}[name]
        bin_dir.mkdir(parents=True, exist_ok=True)
        self.program = bin_dir / name
        self.program.write_text(f"#!{sys.executable}\n{source}")
        self.program.chmod(0o755)
        self.log = bin_dir / f"{name}.calls"
        self.state_file = bin_dir / f"{name}.state.json"
        self.env = {
            "PATH": os.pathsep.join([str(bin_dir), "/usr/bin", "/bin"]),
            "FAKE_SERVICE_LOG": str(self.log),
            "FAKE_SERVICE_STATE": str(self.state_file),
        }

    def calls(self) -> list[list[str]]:
        """Every argv it was run with, oldest first (and forget them)."""
        if not self.log.exists():
            return []
        lines = self.log.read_text().splitlines()
        self.log.unlink()
        return [json.loads(line) for line in lines]

    @property
    def state(self) -> dict[str, object]:
        """The service's state as the stand-in keeps it."""
        if not self.state_file.exists():
            return {}
        found = json.loads(self.state_file.read_text())
        assert isinstance(found, dict)
        return found
