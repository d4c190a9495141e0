"""Re-importing the same files (newcomer finding 2): nothing is created, updated or sent, the
counts add up, and a thread the person deleted is not brought back by a later import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.auth import create_token
from app.config import Settings
from tests.client.conftest import LiveServer, Person, login, wait_for

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts"
SWE = TRANSCRIPTS / "swe-agent-traj"


@pytest.fixture
def token(settings: Settings, new_user) -> str:  # type: ignore[no-untyped-def]
    return create_token(settings, new_user("reimporter"), org="acme")


def writes(server: LiveServer, since: int) -> list[str]:
    return [r for r in server.requests()[since:] if not r.startswith("GET")]


def test_reimporting_swe_agent_trajectories_changes_and_sends_nothing(
    person: Person, server: LiveServer, token: str
) -> None:
    assert login(person, server, token).code == 0
    first = json.loads(person("import", "swe-agent", str(SWE), "--json").out)
    assert len(first["created"]) == 3
    wait_for(lambda: len(writes(server, 0)) >= 3, what="PUTs logged")
    listed = person("list", "--json").out
    before = len(server.requests())
    for _ in range(2):
        again = person("import", "swe-agent", str(SWE), "--json")
        assert again.code == 0, again.err
        summary = json.loads(again.out)
        assert summary["created"] == []
        assert summary["updated"] == []
        assert sorted(summary["unchanged"]) == sorted(first["created"])
    assert writes(server, before) == []
    assert person("list", "--json").out == listed  # LAST ACTIVITY did not move


def test_auto_import_counts_each_thread_once(person: Person, tmp_path: Path) -> None:
    result = person("import", "auto", str(TRANSCRIPTS), "--json")
    assert result.code == 0, result.err
    first = json.loads(result.out)
    again = json.loads(person("import", "auto", str(TRANSCRIPTS), "--json").out)
    assert again["created"] == []
    assert again["updated"] == []
    assert len(again["unchanged"]) == len(set(again["unchanged"]))
    assert sorted(again["unchanged"]) == sorted(set(first["created"]) | set(first["unchanged"]))
    text = person("import", "auto", str(TRANSCRIPTS)).out
    threads = len(again["unchanged"])
    assert f"{threads} thread(s): 0 created, 0 updated, {threads} unchanged" in text


def test_a_deleted_thread_is_not_imported_again(
    person: Person, server: LiveServer, token: str
) -> None:
    assert login(person, server, token).code == 0
    first = json.loads(person("import", "swe-agent", str(SWE), "--json").out)
    gone = first["created"][0]
    wait_for(lambda: len(writes(server, 0)) >= 3, what="PUTs logged")
    deleted = person("delete", gone, "--yes")
    assert deleted.code == 0, deleted.err
    assert person("sync").code == 0
    before = len(server.requests())
    for _ in range(2):
        again = person("import", "swe-agent", str(SWE))
        assert again.code == 0, again.err + again.out
        assert "0 created, 0 updated, 2 unchanged" in again.out
        assert (
            f"Skipped 1 thread(s) you deleted: {gone}; to import them anyway, add"
            " --include-deleted." in again.out.replace("\n", " ")
        )
    assert writes(server, before) == []
    assert gone not in person("list", "--json").out

    anyway = person("import", "swe-agent", str(SWE), "--include-deleted", "--json")
    assert anyway.code == 0, anyway.err
    assert json.loads(anyway.out)["created"] == [gone]
    shown = json.loads(person("show", gone, "--json").out)
    assert shown["is_private"] is True  # the server never takes a deleted id again
    assert writes(server, before) == []
    assert json.loads(person("import", "swe-agent", str(SWE), "--json").out)["created"] == []
