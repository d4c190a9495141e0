"""Which folders ``loomsync watch`` watches and how it says so (newcomer findings 7, 9, 10),
through the real ``loomsync watch`` subprocess with a fresh HOME and the real files of
../shared/data/transcripts:

- one rule: only Codex, Claude Code and Gemini CLI declare ``watch_by_default`` (their missing
  folders are waited for and named at start-up), in the importers, in
  :func:`loomsync.watch.sources.watched_by_default` and in docs/agents.md alike; the start-up
  line stays short (a count, the first folders, "and N more");
- any other agent's folder that appears while the watch runs (Pi installed later, a project
  Crush adds to its ``projects.json``) is watched and imported without a restart;
- the per-folder count is of session files only (no link, no junk), as ``loomsync agents``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, parse_file
from loomsync.watch import started_line
from loomsync.watch.sources import Source, watched_by_default
from tests.client.conftest import Person, wait_for
from tests.client.test_watch import CLAUDE_DIR, LONGER, SHORT, Watch, local_counts, watches
from tests.importers.corpus import TRANSCRIPTS

__all__ = ["watches"]  # the fixture, used by name below

DOC = Path(__file__).resolve().parents[2] / "docs" / "agents.md"
CRUSH = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang" / ".crush"
PI = TRANSCRIPTS / "pi" / "session.jsonl"
BIG_CLI_AGENTS = {"codex", "claude-code", "gemini-cli"}


@pytest.fixture
def bare(person: Person) -> Person:
    """A person whose environment names no agent's own folder."""
    for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "CRUSH_GLOBAL_DATA", "PI_CODING_AGENT_DIR",
                 "PI_CODING_AGENT_SESSION_DIR", "GOOSE_PATH_ROOT"):  # fmt: skip
        person.env.pop(name, None)
    return person


def test_only_the_big_cli_agents_are_watched_by_default_in_code_and_docs() -> None:
    assert set(watched_by_default()) == BIG_CLI_AGENTS
    assert {n for n, i in FORMATS.items() if i.watch_by_default} == BIG_CLI_AGENTS
    text = " ".join(DOC.read_text().split())
    said = re.search(r"Only (.+?) declare `watch_by_default`", text)
    assert said is not None
    names = {FORMATS[n].agent for n in BIG_CLI_AGENTS}
    assert set(re.split(r", | and ", said.group(1))) == names


def test_the_start_up_line_names_a_few_folders_and_counts_the_rest(tmp_path: Path) -> None:
    missing = [Source(tmp_path / f"agent-{i}" / "sessions", "pi") for i in range(40)]
    line = started_line([Source(tmp_path, None), *missing], tmp_path / "offsets.sqlite3")
    assert line.startswith("started: 41 folder(s) to watch (40 not there yet: ")
    assert str(missing[2].root) in line
    assert str(missing[3].root) not in line
    assert "and 37 more" in line
    assert len(line) < 400


def test_a_fresh_home_waits_for_three_agents_and_picks_up_others_as_they_appear(
    bare: Person, watches: list[Watch]
) -> None:
    home = bare.home
    watches.append(watch := Watch(bare))
    [started] = watch.lines("started: ")
    assert "started: 4 folder(s) to watch (4 not there yet: ~/.codex/sessions, " in started
    assert "and 1 more" in started, started
    assert len(started) < 400, started
    # Pi installed while the watch runs: its folder appears, it is watched, its session read
    sessions = home / ".pi" / "agent" / "sessions" / "--home-u-proj--"
    sessions.mkdir(parents=True)
    shutil.copyfile(PI, sessions / PI.name)
    [pi] = parse_file(FORMATS["pi"], sessions / PI.name).threads
    wait_for(lambda: len(pi.messages) in local_counts(bare).values(), what="the Pi session")
    assert watch.lines(f"now watching {home / '.pi' / 'agent' / 'sessions'} (pi)")
    # a project Crush adds to its projects.json while the watch runs (finding 9)
    project = home / "src" / "cisco"
    (project / ".crush").mkdir(parents=True)
    shutil.copyfile(CRUSH / "crush.db", project / ".crush" / "crush.db")
    listed = home / ".local" / "share" / "crush" / "projects.json"
    listed.parent.mkdir(parents=True)
    listed.write_text(json.dumps({"projects": [{"path": str(project), "data_dir": ".crush"}]}))
    want = {
        len(t.messages) for t in FORMATS["crush"].parse(project / ".crush" / "crush.db").threads
    }
    wait_for(lambda: want <= set(local_counts(bare).values()), what="the Crush project")
    assert watch.lines(f"now watching {project / '.crush'} (crush)")
    assert watch.stop() == 0


def test_per_folder_counts_are_of_session_files_as_loomsync_agents_counts(
    bare: Person, watches: list[Watch]
) -> None:
    folder = bare.home / CLAUDE_DIR
    folder.mkdir(parents=True)
    shutil.copyfile(SHORT, folder / SHORT.name)
    (folder / "junk.jsonl").write_bytes(b"\x00\x01\x02binary")
    (folder / "link.jsonl").symlink_to(LONGER.resolve())  # a real session, but elsewhere
    agents = bare("agents", "--json")
    assert agents.code == 0, agents.err
    [claude] = [a for a in json.loads(agents.out) if a["name"] == "claude-code"]
    assert claude["files"] == 1
    watches.append(watch := Watch(bare))
    root = bare.home / ".claude" / "projects"
    wait_for(lambda: watch.lines(f"watching {root} "), what="the Claude Code folder read")
    assert watch.lines(f"watching {root} (claude-code): 1 file(s)"), watch.text()
