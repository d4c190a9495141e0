"""The third-party door and discovery (issue 28 items 2 and 4), through the real CLI.

A throwaway distribution is made on a ``sys.path`` entry of the CLI's own (``PYTHONPATH``):
its module is tests/client/thirdparty_agent.py as ``loomsync_folio``, its ``.dist-info``
holds the ``entry_points.txt`` that ``importlib.metadata`` reads, exactly as pip would leave
it, plus a broken entry point. ``loomsync agents``, ``loomsync import --all`` and
``loomsync import PATH`` then use the third party's agent beside the built-in ones; the broken
one is said once and skipped; config.toml's exclusions hold.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len

from loomsync.watch.offsets import Offset, Offsets
from tests.client import thirdparty_agent
from tests.client.conftest import Person, make_person, on_a_terminal
from tests.importers.corpus import TRANSCRIPTS

ROLLOUT = next((TRANSCRIPTS / "codex-rollout").glob("rollout-2026-01-02*.jsonl"))
GEMINI = TRANSCRIPTS / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json"
CLAUDE = TRANSCRIPTS / "claude-code" / "short.jsonl"
TURNS = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]


def _distribution(site: Path) -> None:
    """``loomsync-folio 1.0``: a module and its metadata, as an installer writes them."""
    site.mkdir(parents=True)
    shutil.copy(Path(thirdparty_agent.__file__), site / "loomsync_folio.py")
    info = site / "loomsync_folio-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: loomsync-folio\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[loomsync.importers]\n"
        "folio = loomsync_folio:FOLIO\n"
        "sqlfake = loomsync_folio:SQLFAKE\n"
        "broken = loomsync_no_such_module:IMPORTER\n"
    )


@pytest.fixture
def machine(tmp_path: Path) -> Person:
    """A person with the third party's importer installed and three agents' folders."""
    person = make_person(tmp_path / "home", columns=80)
    _distribution(tmp_path / "site")
    repo = str(Path(__file__).resolve().parents[2])  # loomsync_folio imports tests-free code
    person.env["PYTHONPATH"] = f"{tmp_path / 'site'}:{repo}"
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "FOLIO_HOME"):
        person.env.pop(name, None)
    home = person.home
    day = home / ".codex" / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    shutil.copy(ROLLOUT, day / ROLLOUT.name)
    chats = home / ".gemini" / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(GEMINI, chats / GEMINI.name)
    thirdparty_agent.write_folio(home / ".folio" / "one.folio", "one", TURNS, cwd="/w/app")
    thirdparty_agent.write_folio(home / ".folio" / "two.folio", "two", TURNS, cwd="/w/secret/x")
    return person


def test_agents_lists_every_agent_found_the_third_partys_too(machine: Person) -> None:
    done = machine("agents", "--json")
    assert done.code == 0, done.err
    rows = {row["name"]: row for row in json.loads(done.out)}
    assert set(rows) == {"codex", "gemini-cli", "folio"}  # claude-code etc.: no folder here
    assert rows["folio"]["files"] == 2
    assert rows["folio"]["folders"] == [str(machine.home / ".folio")]
    assert rows["folio"]["live"] == "rewrite"
    assert rows["codex"]["files"] == 1
    assert rows["codex"]["records"] == ["messages", "tool calls", "usage", "git"]
    assert rows["gemini-cli"]["last_captured"] is None
    said = [line for line in done.err.splitlines() if "broken" in line]
    assert len(said) == 1, done.err  # said once, skipped
    assert "does not load" in said[0]
    piped = machine("agents")
    header, *lines = piped.out.splitlines()
    assert header.split("\t") == ["AGENT", "FILES", "CAPTURED", "LIVE", "RECORDS", "FOLDER"]
    assert sorted(line.split("\t")[0] for line in lines) == ["codex", "folio", "gemini-cli"]


def test_the_agents_table_fits_80_columns(machine: Person) -> None:
    shown = re.sub(r"\x1b\[[0-9;]*m", "", on_a_terminal(machine, "agents", columns=80).decode())
    lines = [line for line in shown.replace("\r", "").split("\n") if line.strip()]
    lines = [line for line in lines if not line.startswith("warning:")]
    assert lines[0].startswith("AGENT")
    assert all(cell_len(line) <= 80 for line in lines), shown
    assert any(line.startswith("folio") for line in lines)


def test_import_all_reads_every_agent_found_except_what_config_excludes(machine: Person) -> None:
    machine.paths.config_dir.mkdir(parents=True, exist_ok=True)
    machine.paths.config_file.write_text(
        '[import]\nexclude_agents = ["gemini_cli"]\nexclude_repositories = ["/w/secret"]\n'
    )
    done = machine("import", "--all", "--json")
    assert done.code == 0, done.err
    summary = json.loads(done.out)
    assert len(summary["created"]) == 2  # the rollout, folio "one"
    assert summary["excluded"] == 1  # folio "two" ran in /w/secret/x
    assert set(summary["formats"].values()) == {"codex", "folio"}
    listed = machine("list", "--json")
    assert "/w/secret" not in listed.out
    again = json.loads(machine("import", "--all", "--json").out)
    assert again["created"] == []
    assert len(again["unchanged"]) == 2
    refused = machine("import", "gemini-cli")
    assert refused.code == 2
    assert "excluded in config.toml" in refused.err


def test_import_path_recognises_a_folder_copied_from_another_machine(
    machine: Person, tmp_path: Path
) -> None:
    copied = tmp_path / "from-laptop"
    thirdparty_agent.write_folio(copied / "x" / "s.folio", "s", TURNS)
    (copied / "claude" / "-home-bob-app").mkdir(parents=True)
    shutil.copy(CLAUDE, copied / "claude" / "-home-bob-app" / CLAUDE.name)
    shutil.copy(ROLLOUT, copied / ROLLOUT.name)
    (copied / "notes.txt").write_text("not a session")
    done = machine("import", str(copied))
    assert done.code == 0, done.err
    for name in ("folio", "claude-code", "codex"):
        assert f"({name})" in done.err
    assert "3 created" in done.out
    missing = machine("import", str(tmp_path / "nowhere"))  # a path: no such file, exit 1
    assert missing.code == 1
    assert f"error: no such file or folder: {tmp_path / 'nowhere'}" in missing.err


def test_agents_says_when_the_watch_last_captured_each_agent(machine: Person) -> None:
    offsets = Offsets(machine.paths.state_dir / "watch" / "offsets.sqlite3")
    try:
        unit = machine.home / ".folio" / "one.folio" / "session.json"
        offsets.put(Offset(str(unit), 1, 2, 10, 1_767_225_600_000_000_000, 10, "", "folio"))
        junk = machine.home / ".folio" / "junk.json"
        offsets.put(Offset(str(junk), 1, 3, 10, 1_800_000_000_000_000_000, 0, "", None, True))
    finally:
        offsets.close()
    rows = {row["name"]: row for row in json.loads(machine("agents", "--json").out)}
    assert rows["folio"]["last_captured"] == "2026-01-01T00:00:00+00:00"
    assert rows["codex"]["last_captured"] is None
