"""``loomsync import`` stores a workspace for every session whose project folder is known
(newcomer findings 2 and 5), through the real CLI on the real files of
../shared/data/transcripts: a Crush store named by a relative path gets its absolute project
folder (``list --workspace`` finds it, and importing it by its absolute path later changes
nothing); a Pi session gets its working folder as workspace.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.client.conftest import Person
from tests.importers.corpus import TRANSCRIPTS

CRUSH = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang"
PI = TRANSCRIPTS / "pi" / "session.jsonl"


def listed(person: Person, *args: str) -> list[dict[str, object]]:
    done = person("list", "--limit", "0", "--json", *args)
    assert done.code == 0, done.err
    rows = json.loads(done.out)
    assert isinstance(rows, list)
    return rows


def test_a_crush_store_imported_by_a_relative_path_gets_its_absolute_project(
    person: Person,
) -> None:
    relative = os.path.relpath(CRUSH, person.home)  # the CLI runs in person.home
    assert not Path(relative).is_absolute()
    done = person("import", relative)
    assert done.code == 0, done.err
    project = str(CRUSH.resolve())
    rows = listed(person)
    assert rows
    assert {(row["workspace_root"], row.get("cwd", project)) for row in rows} == {
        (project, project)
    }
    assert len(listed(person, "--workspace", project)) == len(rows)
    again = person("import", "--json", project)
    assert again.code == 0, again.err
    summary = json.loads(again.out)
    assert summary["created"] == []
    assert summary["updated"] == []


def test_a_pi_session_is_found_by_its_working_folder(person: Person) -> None:
    done = person("import", str(PI))
    assert done.code == 0, done.err
    [row] = listed(person, "--workspace", "/Users/badlogic/workspaces/pi-mono")
    assert row["workspace_root"] == "/Users/badlogic/workspaces/pi-mono"
