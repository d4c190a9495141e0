"""Issue 12, "Done means", end to end through a real server.

A Claude Code transcript with planted credentials of every kind (tests/client/planted.py) is
imported and synced by ``loomsync`` through a recording reverse proxy (real TCP, in front of the
test server), and an agent adds a git remote URL with userinfo. Then:

- no request body the client sent holds any planted value (counted at the proxy);
- a GET and a search as the owner, and (after ``loomsync share``) as an org mate, find none of
  them, snippets included; the markers are searchable (``REDACTED aws``);
- a same-org user sees nothing of the thread until the owner shares it.

The checks are parametrized by kind, so each kind the detector misses fails on its own. With the
placeholder rules of loomsync/core/secrets only aws-access-key, github-token and private-key pass:
that is expected until the detector lands (``planted.PLACEHOLDER_KINDS``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync import edits
from tests.client import planted
from tests.client.conftest import LiveServer, Person
from tests.client.recording_proxy import RecordingProxy, recording_proxy
from tests.homes import home_env

KINDS = sorted(planted.PLANTED)


def _unmarked(text: str) -> str:
    """Response text with search highlighting removed (``<b>`` could split a value)."""
    return text.replace("<b>", "").replace("</b>", "")


@dataclass
class Seen:
    """What one reader got: the thread document and a search for each planted value."""

    document: str = ""
    searches: dict[str, str] = field(default_factory=dict)


@dataclass
class Scenario:
    thread_id: str
    proxy: RecordingProxy
    owner: Seen
    mate: Seen
    before_share: dict[str, object]
    markers: dict[str, list[str]]


def _person(root: Path) -> Person:
    home = root / "home"
    home.mkdir(parents=True)
    return Person(home, home_env(home, COLUMNS="120", LOOMSYNC_RETRIES="1"))


def _seen(client: httpx.Client, thread_id: str) -> Seen:
    seen = Seen()
    got = client.get(f"/api/threads/{thread_id}")
    assert got.status_code == 200, got.text
    seen.document = got.text
    for _, value in planted.every_value():
        hits = client.get("/api/threads/search", params={"q": value, "scope": "visible"})
        assert hits.status_code == 200, hits.text
        seen.searches[value] = _unmarked(hits.text)
    return seen


def _list_ids(client: httpx.Client) -> list[str]:
    """Ids of the threads of the fixture's workspace the caller may read."""
    params = {"scope": "visible", "limit": 200, "workspace": "/home/dev/payments"}
    response = client.get("/api/threads", params=params)
    assert response.status_code == 200, response.text
    return [row["id"] for row in response.json()["threads"]]


def _hit_ids(client: httpx.Client, query: str) -> list[str]:
    response = client.get("/api/threads/search", params={"q": query, "scope": "visible"})
    assert response.status_code == 200, response.text
    return [hit["thread"]["id"] for hit in response.json()["hits"]]


@pytest.fixture(scope="module")
def scenario(
    live_server: LiveServer, settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Scenario]:
    suffix = uuid.uuid4().hex[:10]
    org = f"acme-{suffix}"
    owner_token = create_token(settings, f"owner-{suffix}", org=org)
    mate_token = create_token(settings, f"mate-{suffix}", org=org)
    root = tmp_path_factory.mktemp("e2e")
    owner = _person(root)
    transcript, thread_id = planted.session_copy(root / "sessions", f"owner-{suffix}")
    with (
        recording_proxy(live_server.url) as (url, proxy),
        httpx.Client(
            base_url=live_server.url, headers={"Authorization": f"Bearer {owner_token}"}
        ) as as_owner,
        httpx.Client(
            base_url=live_server.url, headers={"Authorization": f"Bearer {mate_token}"}
        ) as as_mate,
    ):
        assert owner("login", "--server", url, "--token", owner_token).code == 0
        imported = owner("import", "claude-code", str(transcript))
        assert imported.code == 0, imported.out + imported.err
        agent = owner.agent()  # the session goes on: a snapshot with the remote's userinfo
        thread = agent.load(thread_id)
        agent.save(edits.with_fields(thread, git_remote_url=planted.GIT_REMOTE))
        synced = owner("sync")
        assert synced.code == 0, synced.out + synced.err
        before = {
            "get": as_mate.get(f"/api/threads/{thread_id}").status_code,
            "list": thread_id in _list_ids(as_mate),
            "search": thread_id in _hit_ids(as_mate, "REDACTED aws"),
        }
        markers = {"owner": _hit_ids(as_owner, "REDACTED aws")}
        owner_seen = _seen(as_owner, thread_id)
        shared = owner("share", thread_id, "--visibility", "organization")
        assert shared.code == 0, shared.out + shared.err
        markers["mate"] = _hit_ids(as_mate, "REDACTED aws")
        yield Scenario(thread_id, proxy, owner_seen, _seen(as_mate, thread_id), before, markers)


def test_the_fixture_is_what_planted_writes() -> None:
    assert planted.FIXTURE.read_text(encoding="utf-8") == planted.transcript()


def test_every_planted_value_is_in_the_fixture() -> None:
    text = planted.FIXTURE.read_text(encoding="utf-8")
    missing = [
        kind for kind, value in planted.every_value() if value not in text.replace("\\n", "\n")
    ]
    assert not missing


@pytest.mark.parametrize("kind", KINDS)
def test_no_request_body_the_client_sent_holds_it(scenario: Scenario, kind: str) -> None:
    bodies = scenario.proxy.bodies().decode("utf-8", "replace")
    assert any(r.method == "PUT" for r in scenario.proxy.requests)
    counts = {value[:8] + "…": bodies.count(value) for value in planted.PLANTED[kind]}
    assert not any(counts.values()), f"{kind} sent: {counts}"


@pytest.mark.parametrize("kind", KINDS)
def test_owner_get_and_search_find_none_of_it(scenario: Scenario, kind: str) -> None:
    for value in planted.PLANTED[kind]:
        assert value not in scenario.owner.document, f"{kind} in the owner's GET"
        assert value not in scenario.owner.searches[value], f"{kind} in the owner's search"


@pytest.mark.parametrize("kind", KINDS)
def test_org_mate_get_and_search_after_share_find_none_of_it(scenario: Scenario, kind: str) -> None:
    for value in planted.PLANTED[kind]:
        assert value not in scenario.mate.document, f"{kind} in the org mate's GET"
        assert value not in scenario.mate.searches[value], f"{kind} in the org mate's search"


def test_markers_are_searchable(scenario: Scenario) -> None:
    assert scenario.thread_id in scenario.markers["owner"]
    assert scenario.thread_id in scenario.markers["mate"]
    assert "[REDACTED:aws-access-key]" in scenario.mate.document


def test_an_org_mate_sees_nothing_until_the_owner_shares(scenario: Scenario) -> None:
    assert scenario.before_share == {"get": 404, "list": False, "search": False}
    assert '"visibility":"organization"' in scenario.mate.document.replace(" ", "")
