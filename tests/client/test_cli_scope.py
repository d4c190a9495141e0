"""Issue 16, item 6: shared with me. ``list`` and ``search`` cover your own threads (``--mine``,
the default); ``--scope visible`` every thread you may read, with its owner; ``search
--workspace``. Two users of one organization on a real server, each running the CLI as a
subprocess with a fresh HOME at 80 columns, piped.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.cells import cell_len

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from tests.client.conftest import LiveServer, Person, make_client, make_person, on_a_terminal
from tests.client.test_cli_view import screen


def _thread(title: str, visibility: str, workspace: str, word: str) -> Thread:
    return Thread.model_validate(
        {
            "id": str(ThreadId.new()),
            "metadata": {"title": title},
            "visibility": visibility,
            "workspace_root": workspace,
            "conversation": {"messages": [{"role": "user", "content": f"the {word} plan"}]},
        }
    )


@dataclass
class Team:
    """Ann and Ben of one organization; Ann stored three threads on the server."""

    ann: str  # her login name (the token's sub)
    ben: Person  # logged in
    word: str  # a word in every one of Ann's threads
    api: str  # a workspace root of this test alone, and another
    web: str
    shared: Thread  # organization, workspace api
    other: Thread  # organization, workspace web
    private: Thread  # private: Ben never sees it


@pytest.fixture
def team(tmp_path: Path, live_server: LiveServer, settings: Settings) -> Team:
    suffix = uuid.uuid4().hex[:6]
    org = f"acme-{suffix}"
    ann = f"ann-{suffix}"
    word = f"zebra{suffix}"
    client = make_client(live_server.url, create_token(settings, ann, org=org))
    api, web = f"/w/{suffix}/api", f"/w/{suffix}/web"
    shared = _thread("Org roadmap", "organization", api, word)
    other = _thread("Web notes", "organization", web, word)
    private = _thread("Ann's diary", "private", api, word)
    for thread in (shared, other, private):
        client.put_thread(thread, base_version=0)
    client.close()
    ben = make_person(tmp_path / "ben", columns=80)
    token = create_token(settings, f"ben-{suffix}", org=org)
    assert ben("login", "--server", live_server.url, "--token", token).code == 0
    return Team(ann, ben, word, api, web, shared, other, private)


def _row(out: str, thread: Thread) -> str:
    return next(line for line in out.splitlines() if line.startswith(str(thread.id)))


def test_list_shows_a_teammates_thread_only_with_scope_visible(team: Team) -> None:
    ben = team.ben
    for mine in (ben("list", "--server"), ben("list", "--server", "--mine")):
        assert (mine.code, mine.out) == (0, "No threads.\n")
    visible = ben("list", "--scope", "visible")  # implies --server; piped: tab-separated
    assert visible.code == 0, visible.err
    header, *rows = visible.out.splitlines()
    assert header.split("\t") == [
        "ID", "OWNER", "TITLE", "MSGS", "LAST ACTIVITY", "BRANCH", "VISIBILITY"
    ]  # fmt: skip
    assert {row.split("\t")[0] for row in rows if f"\t{team.ann}\t" in row} == {
        str(team.shared.id),
        str(team.other.id),
    }  # and, as anyone may read them, the public threads of other tests on this server
    for thread in (team.shared, team.other):
        cells = _row(visible.out, thread).split("\t")
        assert (cells[1], cells[2], cells[-1]) == (team.ann, thread.metadata.title, "organization")
    assert str(team.private.id) not in visible.out
    lines = screen(on_a_terminal(ben, "list", "--scope", "visible"))  # 80 columns
    assert lines[0].split()[:2] == ["ID", "OWNER"]
    assert all(cell_len(line) <= 80 for line in lines), lines
    assert sum(team.ann in line for line in lines) == 2  # 10 characters: OWNER keeps 10 cells
    data = json.loads(ben("list", "--scope", "visible", "--json").out)
    anns = sorted(r["id"] for r in data if r["owner_id"] == team.ann)
    assert anns == sorted([str(team.shared.id), str(team.other.id)])
    assert str(team.private.id) not in {r["id"] for r in data}
    only_api = json.loads(ben("list", "--scope", "visible", "--workspace", team.api, "--json").out)
    assert [r["id"] for r in only_api] == [str(team.shared.id)]
    own = ben("list")  # the local list: Ben's own threads, no OWNER column
    assert "OWNER" not in own.out


def test_a_server_listing_keeps_its_states_whole_at_80_columns(team: Team) -> None:
    """Issue 16 item 1 (review item 1): ``list --server`` and ``--scope visible`` at a terminal
    of 80 columns: the whole ids leave no room for LAST ACTIVITY, so it is left out and the
    VISIBILITY cell stays whole (``organization``, not ``organizati…``); every line fits."""
    ben = team.ben
    mine = _thread("A long title about the organization wide roadmap", "organization", "/w", "x")
    ben.agent().save(mine)
    assert ben("sync").code == 0
    for args, thread in (
        (["list", "--server"], mine),
        (["list", "--scope", "visible"], team.shared),
    ):
        lines = screen(on_a_terminal(ben, *args))
        assert all(cell_len(line) <= 80 for line in lines), lines
        assert (lines[0].split()[0], lines[0].split()[-1]) == ("ID", "VISIBILITY"), lines
        assert "LAST ACTIVITY" not in lines[0]
        row = next(line for line in lines if line.startswith(str(thread.id)))
        assert row.endswith("  organization"), row
        assert "organizati…" not in "".join(lines)
    piped = ben("list", "--server").out.splitlines()  # piped: every column, whole
    assert "LAST ACTIVITY" in piped[0].split("\t")
    wide = screen(on_a_terminal(ben, "list", "--server", columns=120))
    assert "LAST ACTIVITY" in wide[0]  # a wider terminal keeps it


def test_search_finds_a_teammates_thread_only_with_scope_visible(team: Team) -> None:
    ben = team.ben
    mine = ben("search", team.word)
    assert (mine.code, mine.out) == (0, f"0 threads found on the server for {team.word!r}\n")
    visible = ben("search", team.word, "--scope", "visible")
    assert visible.code == 0, visible.err
    assert visible.out.splitlines()[0] == f"2 threads found on the server for {team.word!r}"
    for thread in (team.shared, team.other):
        assert f"{thread.id}  by {team.ann}  {thread.metadata.title}" in visible.out
    assert str(team.private.id) not in visible.out
    found = json.loads(ben("search", team.word, "--scope", "visible", "--json").out)
    assert {hit["thread"]["owner_id"] for hit in found["hits"]} == {team.ann}


def test_search_workspace_filters_on_the_server_and_here(team: Team) -> None:
    ben = team.ben
    api = ben("search", team.word, "--scope", "visible", "--workspace", team.api, "--json")
    assert [hit["thread"]["id"] for hit in json.loads(api.out)["hits"]] == [str(team.shared.id)]
    agent = ben.agent()  # Ben's own threads, only on his machine
    here = agent.save(_thread("Local api", "organization", team.api, team.word))
    agent.save(_thread("Local web", "organization", team.web, team.word))
    for args in (["--local"], []):  # the local search, and local-only hits of the online one
        result = ben("search", team.word, "--workspace", team.api, "--json", *args)
        ids = [hit["thread"]["id"] for hit in json.loads(result.out)["hits"]]
        assert ids == [str(here.id)], (args, result.out)
    both = ben("search", team.word, "--local", "--json")
    assert len(json.loads(both.out)["hits"]) == 2


def test_scope_visible_needs_a_login_and_the_server(tmp_path: Path) -> None:
    nobody = make_person(tmp_path / "nobody", columns=80)
    for args in (["list", "--scope", "visible"], ["search", "plan", "--scope", "visible"]):
        result = nobody(*args)
        assert (result.code, result.out) == (3, ""), args  # exit code 3: log in
        assert result.err == (
            "error: --scope visible asks the server for the threads you may read (this machine "
            "holds only yours), but you are not logged in: run "
            "`loomsync login --server URL --token TOKEN`\n"
        )
    local = nobody("search", "plan", "--local", "--scope", "visible")
    assert local.code == 2
    assert "drop --local" in " ".join(local.err.split())
    both = nobody("list", "--mine", "--scope", "visible")
    assert both.code == 2
    assert "choose one" in " ".join(both.err.split())
