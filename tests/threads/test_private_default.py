"""Private until shared (issue 12 item 5; API.md §2 "absent on a new thread: private"), through
a real uvicorn process: a document without ``visibility`` makes a private thread, whichever
write creates it; a PUT that replaces a thread without naming ``visibility`` keeps the stored
one (only a write that names it changes it: PATCH, or a PUT with the field)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from tests.conftest import TokenFactory
from tests.servers import app_env, uvicorn_server


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[str]:
    with uvicorn_server(app_env(database_url, settings)) as running:
        yield running.base_url


@pytest.fixture
def http(server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server, timeout=30) as client:
        yield client


@pytest.fixture
def team(
    auth: TokenFactory, new_user: Callable[[str], str], new_org: Callable[[str], str]
) -> tuple[dict[str, str], dict[str, str]]:
    """(owner, a user of the owner's organization)."""
    org = new_org("acme")
    return auth(new_user("owner"), org=org), auth(new_user("mate"), org=org)


def test_the_model_default_is_private() -> None:
    assert Thread().visibility == "private"


def _create(http: httpx.Client, owner: dict[str, str], how: str) -> str:
    doc: dict[str, Any] = {"conversation": {"messages": [{"role": "user", "content": "hi"}]}}
    if how == "post":
        created = http.post("/api/threads", json=doc, headers=owner)
    else:
        created = http.put(f"/api/threads/{ThreadId.new()}", json=doc, headers=owner)
    assert created.status_code == 201, created.text
    assert created.json()["visibility"] == "private"
    tid: str = created.json()["id"]
    return tid


@pytest.mark.parametrize("how", ["post", "put"])
def test_a_new_thread_without_visibility_is_private(
    http: httpx.Client, team: tuple[dict[str, str], dict[str, str]], how: str
) -> None:
    owner, mate = team
    tid = _create(http, owner, how)
    assert http.get(f"/api/threads/{tid}", headers=owner).json()["visibility"] == "private"
    assert http.get(f"/api/threads/{tid}", headers=mate).status_code == 404
    listed = http.get("/api/threads", params={"scope": "visible"}, headers=mate).json()
    assert tid not in [t["id"] for t in listed["threads"]]


@pytest.mark.parametrize("stored", ["organization", "public", "private"])
def test_a_replace_without_visibility_keeps_the_stored_one(
    http: httpx.Client, team: tuple[dict[str, str], dict[str, str]], stored: str
) -> None:
    owner, mate = team
    tid = ThreadId.new()
    first = {"visibility": stored, "conversation": {"messages": []}}
    assert http.put(f"/api/threads/{tid}", json=first, headers=owner).status_code == 201
    doc = {"version": 1, "conversation": {"messages": [{"role": "user", "content": "more"}]}}
    replaced = http.put(f"/api/threads/{tid}", json=doc, headers=owner)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["visibility"] == stored
    got = http.get(f"/api/threads/{tid}", headers=owner).json()
    assert got["visibility"] == stored
    assert got["conversation"]["messages"][0]["content"] == "more"
    reads = http.get(f"/api/threads/{tid}", headers=mate).status_code
    assert reads == (404 if stored == "private" else 200)
    summary = http.get("/api/threads", headers=owner).json()["threads"]
    assert [t["visibility"] for t in summary if t["id"] == tid] == [stored]


def test_a_replace_that_names_visibility_changes_it(
    http: httpx.Client, team: tuple[dict[str, str], dict[str, str]]
) -> None:
    owner, mate = team
    tid = ThreadId.new()
    first = {"visibility": "organization"}
    assert http.put(f"/api/threads/{tid}", json=first, headers=owner).status_code == 201
    replaced = http.put(
        f"/api/threads/{tid}", json={"version": 1, "visibility": "private"}, headers=owner
    )
    assert replaced.json()["visibility"] == "private"
    assert http.get(f"/api/threads/{tid}", headers=mate).status_code == 404
