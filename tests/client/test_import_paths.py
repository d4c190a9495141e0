"""``loomsync import PATH`` and config.toml's exclusions at the edges a newcomer found
(newcomer findings 1, 3, 4, 6, 8 and 11), through the real CLI on real session files read in
place from ../shared/data/transcripts, with real symbolic links.

1. an excluded folder holds through links on either side, ``~`` under a linked ``$HOME`` and
   a relative path with ``..``;
3. a session found in two places is imported once, then "unchanged" from either place;
4. a path or file left out by config.toml says so, never "No session files found";
6. ``import PATH`` of a path that does not exist is ``error: no such file or folder``, exit 1;
8. a sibling file of a session of several files imports its session;
11. ``agents --all`` marks the excluded agents in its table.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.client.conftest import Person, Result, make_person
from tests.importers.corpus import TRANSCRIPTS

CRUSH = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"
PI = TRANSCRIPTS / "pi" / "session.jsonl"
CLINE = TRANSCRIPTS / "cline-sdk" / "1784094124598_rruoq"
ROO = TRANSCRIPTS / "roo-code" / "tasks" / "eaece8cc-d874-4e46-9330-52d772f31492"
OPENCODE = TRANSCRIPTS / "opencode-storage" / "jwp23__dotfiles" / "storage"
_AGENT_VARIABLES = (
    "CRUSH_GLOBAL_DATA",
    "PI_CODING_AGENT_DIR",
    "PI_CODING_AGENT_SESSION_DIR",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
)


@pytest.fixture
def person(tmp_path: Path) -> Person:
    """Someone with a HOME of their own and no agent variable of this machine's."""
    someone = make_person(tmp_path / "home")
    for name in _AGENT_VARIABLES:
        someone.env.pop(name, None)
    return someone


def _config(
    person: Person, *, agents: list[str] | None = None, repositories: list[str] | None = None
) -> None:
    folder = person.home / ".config" / "loomsync"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(
        "[import]\n"
        f"exclude_agents = {json.dumps(agents or [])}\n"
        f"exclude_repositories = {json.dumps(repositories or [])}\n"
    )


def _crush_project(folder: Path) -> Path:
    """A project folder holding a copy of a real Crush store (``.crush/crush.db``)."""
    (folder / ".crush").mkdir(parents=True)
    shutil.copyfile(CRUSH, folder / ".crush" / "crush.db")
    return folder


def _imported(done: Result) -> dict[str, object]:
    assert done.code == 0, done.err
    summary: dict[str, object] = json.loads(done.out)
    return summary


def _stored(person: Person) -> list[dict[str, object]]:
    done = person("list", "--limit", "0", "--json")
    assert done.code == 0, done.err
    rows: list[dict[str, object]] = json.loads(done.out)
    return rows


# --- 1: exclusions through symbolic links ----------------------------------------------------


def test_an_excluded_folder_named_through_a_link_holds_for_its_real_path(
    person: Person, tmp_path: Path
) -> None:
    _crush_project(tmp_path / "proj" / "secret")
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "proj")
    _config(person, repositories=[str(link / "secret")])
    for argument, cwd in (
        (str(link / "secret"), None),
        ("secret", link),  # relative, from inside the link
        (str(tmp_path / "proj" / "secret"), None),  # the real path
    ):
        summary = _imported(person("import", argument, "--json", cwd=cwd))
        assert summary["created"] == [], argument
        assert summary["updated"] == [], argument
        assert summary["excluded"] == 1, (argument, summary)
    assert _stored(person) == []


def test_a_tilde_folder_holds_when_home_is_reached_through_a_link(
    person: Person, tmp_path: Path
) -> None:
    real = person.home
    _crush_project(real / "src" / "ciscoauto")
    crush = real / ".local" / "share" / "crush"
    crush.mkdir(parents=True)
    project = {"path": str(real / "src" / "ciscoauto"), "data_dir": ".crush"}
    (crush / "projects.json").write_text(json.dumps({"projects": [project]}))
    _config(person, repositories=["~/src/ciscoauto"])
    linked = tmp_path / "home-link"
    linked.symlink_to(real)
    done = person("import", "--all", "--json", env={"HOME": str(linked)})
    summary = _imported(done)
    assert summary["created"] == [], summary
    assert summary["excluded"] == 1
    assert summary["excluded_repositories"] == {"~/src/ciscoauto": 1}
    assert _stored(person) == []


def test_a_relative_path_through_a_linked_folder_is_excluded_like_the_absolute_one(
    person: Person, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.symlink_to(TRANSCRIPTS)  # the real files, reached through a link
    work = tmp_path / "work"
    work.mkdir()
    _config(person, repositories=[f"{shared}/opencode-go-sqlite/*"])
    summary = _imported(person("import", "../shared/opencode-go-sqlite", "--json", cwd=work))
    assert summary["created"] == [], summary
    assert summary["excluded"] == 2  # the two projects' stores, never opened
    summary = _imported(person("import", str(TRANSCRIPTS / "opencode-go-sqlite"), "--json"))
    assert summary["created"] == []
    assert summary["excluded"] == 2
    assert _stored(person) == []


# --- 3: one session in two places ------------------------------------------------------------


def test_a_pi_session_in_two_places_is_unchanged_from_either(person: Person) -> None:
    sessions = person.home / ".pi" / "agent" / "sessions" / "--home-u-proj--"
    sessions.mkdir(parents=True)
    shutil.copyfile(PI, sessions / "2025-12-17T19-39-21-535Z_5fd1e58c.jsonl")
    first = _imported(person("import", "--all", "--json"))
    assert len(first["created"]) == 1  # type: ignore[arg-type]
    for _ in range(2):
        for args in (("import", str(PI)), ("import", "--all")):
            again = _imported(person(*args, "--json"))
            assert again["created"] == [], (args, again)
            assert again["updated"] == [], (args, again)
            assert again["unchanged"] == first["created"]


def test_a_crush_store_in_two_projects_is_unchanged_from_either(
    person: Person, tmp_path: Path
) -> None:
    one = _crush_project(tmp_path / "one")
    two = _crush_project(tmp_path / "two")
    first = _imported(person("import", str(one), "--json"))
    assert first["created"]
    for folder in (two, one, two):
        again = _imported(person("import", str(folder), "--json"))
        assert again["updated"] == [], (folder, again)
        assert again["created"] == [], (folder, again)
        assert sorted(again["unchanged"]) == sorted(first["created"])  # type: ignore[type-var]


# --- 4: what config.toml left out is said -----------------------------------------------------


def test_an_excluded_agents_path_says_so(person: Person) -> None:
    _config(person, agents=["pi"])
    for args in (
        ("import", str(PI.parent)),
        ("import", str(PI)),
        ("import", "auto", str(PI.parent / "large-session.jsonl")),
    ):
        done = person(*args)
        assert done.code == 0, done.err
        assert "No session" not in done.out + done.err, args
        assert "pi is excluded in config.toml ([import] exclude_agents)" in done.out, args
    assert person("import", "pi").code == 2  # named as a FORMAT: refused, as before


def test_an_excluded_repositorys_file_says_so(person: Person, tmp_path: Path) -> None:
    project = _crush_project(tmp_path / "src" / "ciscoauto")
    _config(person, repositories=[str(project)])
    for args in (
        ("import", "crush", str(project / ".crush" / "crush.db")),
        ("import", str(project)),
    ):
        done = person(*args)
        assert done.code == 0, done.err
        assert "No crush sessions" not in done.err, args
        assert "No session" not in done.err, args
        assert (
            "Left out 1 session(s) of repositories excluded in config.toml"
            f" ([import] exclude_repositories): {project}." in done.out
        ), done.out


# --- 6: a path that does not exist ------------------------------------------------------------


def test_a_missing_path_is_no_such_file_not_an_unknown_format(person: Person) -> None:
    for argument in ("./nope.jsonl", "/nonexistent", "nope.jsonl", "~/gone"):
        done = person("import", argument)
        assert done.code == 1, (argument, done.err)
        assert "error: no such file or folder:" in done.err, done.err
        assert "unknown format" not in done.err
    done = person("import", "bogus")  # a bare word that is no path: an unknown FORMAT
    assert done.code == 2
    assert "unknown format 'bogus'" in done.err


# --- 8: sibling files of a session of several files -------------------------------------------


@pytest.mark.parametrize(
    ("sibling", "session"),
    [
        (CLINE / "1784094124598_rruoq.messages.json", CLINE / "1784094124598_rruoq.json"),
        (ROO / "ui_messages.json", ROO / "api_conversation_history.json"),
        (
            next((OPENCODE / "message" / "ses_539950424ffev4SAECXTZKSubM").glob("msg_*.json")),
            OPENCODE / "session",
        ),
    ],
    ids=["cline", "roo-code", "opencode"],
)
def test_a_sibling_file_imports_its_session(person: Person, sibling: Path, session: Path) -> None:
    done = person("import", str(sibling), "--json")
    summary = _imported(done)
    assert len(summary["created"]) == 1, summary  # type: ignore[arg-type]
    formats: dict[str, str] = summary["formats"]  # type: ignore[assignment]
    (file,) = formats
    assert Path(file) != sibling
    assert Path(file) == session or Path(file).is_relative_to(session)
    whole = _imported(person("import", str(Path(file)), "--json"))
    assert whole["unchanged"] == summary["created"]  # the same session


# --- 11: agents --all marks the excluded ones -------------------------------------------------


def test_agents_all_marks_the_excluded_agents(person: Person) -> None:
    sessions = person.home / ".pi" / "agent" / "sessions" / "--home-u-proj--"
    sessions.mkdir(parents=True)
    shutil.copyfile(PI, sessions / "2025-12-17T19-39-21-535Z_5fd1e58c.jsonl")
    day = person.home / ".codex" / "sessions" / "2026" / "01" / "02"
    day.mkdir(parents=True)
    rollout = next((TRANSCRIPTS / "codex-rollout").glob("rollout-2026-01-02*.jsonl"))
    shutil.copyfile(rollout, day / rollout.name)
    _config(person, agents=["pi"])
    done = person("agents", "--all")
    assert done.code == 0, done.err
    rows = {line.split("\t")[0]: line.split("\t") for line in done.out.splitlines()[1:]}
    assert "excluded" in rows["pi"], done.out
    assert "excluded" not in rows["codex"], done.out
    shown = person("agents").out.splitlines()[1:]
    assert [line.split("\t")[0] for line in shown if "\t" in line] == ["codex"]
