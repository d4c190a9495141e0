"""``--workspace`` as a person types it (newcomer finding 7) and ``search -n`` saying there is
more (finding 6), run as ``loomsync`` subprocesses with a fresh HOME at 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.auth import create_token
from app.config import Settings
from tests.client.conftest import LiveServer, Person, login, make_person, new_thread

SWE = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts" / "swe-agent-traj"


@pytest.fixture
def narrow(tmp_path: Path) -> Person:
    return make_person(tmp_path / "home", columns=80)


def test_workspace_is_matched_as_threads_record_it(narrow: Person, tmp_path: Path) -> None:
    project = narrow.home / "proj"
    project.mkdir()
    (tmp_path / "link").symlink_to(project)
    with narrow.agent() as agent:
        agent.save(new_thread(1, workspace_root=str(project.resolve())))
    written = [f"{project}/", "proj", "proj/", "./proj/../proj", "~/proj", str(tmp_path / "link")]
    for given in written:
        listed = narrow("list", "--workspace", given, "--json")
        assert listed.code == 0, listed.err
        assert len(json.loads(listed.out)) == 1, given
        found = narrow("search", "turn", "--local", "--workspace", given, "--json")
        assert len(json.loads(found.out)["hits"]) == 1, given
    assert len(json.loads(narrow("list", "--workspace", "/", "--json").out)) == 0


def test_an_empty_workspace_says_so(narrow: Person) -> None:
    with narrow.agent() as agent:
        agent.save(new_thread(1, workspace_root="/somewhere/else"))
    listed = narrow("list", "--workspace", "/nope/")
    assert listed.code == 0
    assert "No threads in workspace /nope " in listed.out
    assert "No threads yet" not in listed.out
    found = narrow("search", "turn", "--local", "--workspace", "/nope")
    assert "No threads in workspace /nope match" in found.out


def test_search_says_there_are_more_and_pages_on(
    narrow: Person, server: LiveServer, settings: Settings, new_user
) -> None:  # type: ignore[no-untyped-def]
    token = create_token(settings, new_user("pager"), org="acme")
    assert login(narrow, server, token).code == 0
    assert narrow("import", "swe-agent", str(SWE)).code == 0
    assert narrow("sync").code == 0
    first = narrow("search", "issue", "-n", "2")
    everything = json.loads(narrow("search", "issue", "--json").out)["hits"]
    assert len(everything) == 3
    assert first.out.startswith("2 threads found on the server for 'issue', and more there\n")
    note = [line for line in first.err.splitlines() if line.startswith("More on the server")]
    assert len(note) == 1, first.err
    cursor = note[0].split("--cursor ")[1].split()[0]
    rest = narrow("search", "issue", "-n", "2", "--cursor", cursor, "--json")
    assert rest.code == 0, rest.err
    ids = [
        h["thread"]["id"]
        for h in json.loads(narrow("search", "issue", "-n", "2", "--json").out)["hits"]
    ]
    ids += [h["thread"]["id"] for h in json.loads(rest.out)["hits"]]
    assert sorted(ids) == sorted(h["thread"]["id"] for h in everything)
    last = narrow("search", "issue", "-n", "2", "--cursor", cursor)
    assert "More on the server" not in last.err
    assert narrow("search", "issue", "--local", "--cursor", cursor).code == 2
