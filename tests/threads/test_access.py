"""The access table of API.md section 4, cell by cell, through HTTP.

Every test makes its own cast (owner, same-org user, other-org user, anonymous, a ``support``
and an ``admin`` user from another organization) with ids unique to the test, and puts its
threads in a workspace of its own, so listings only ever see this test's threads.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loomsync.core.document.codec import document as document_of
from loomsync.core.document.codec import dumps
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.edits import forked
from tests.conftest import TokenFactory

KINDS: dict[str, dict[str, Any]] = {
    "private": {"visibility": "private", "is_shared_with_support": False},
    "organization": {"visibility": "organization", "is_shared_with_support": False},
    "public": {"visibility": "public", "is_shared_with_support": False},
    "organization_shared": {"visibility": "organization", "is_shared_with_support": True},
    "private_shared": {"visibility": "private", "is_shared_with_support": True},
}

# API.md section 4, one row per caller, one column per entry of KINDS.
# W = read and write, R = read only, - = 404 exactly as for a missing thread.
# fmt: off
TABLE: dict[str, tuple[str, ...]] = {
    #             private organization public org_shared private_shared
    "owner":     ("W",    "W",         "W",   "W",       "W"),
    "same_org":  ("-",    "R",         "R",   "R",       "-"),
    "other_org": ("-",    "-",         "R",   "-",       "-"),
    "anonymous": ("-",    "-",         "R",   "-",       "-"),
    "support":   ("-",    "-",         "R",   "R",       "R"),
    "admin":     ("W",    "W",         "W",   "W",       "W"),
}
# Forks (API.md section 4): F = 201, a private copy owned by the caller; X = 403, the caller
# reads the thread only through the support role ("support reads, and does not copy"); - = 404.
FORKS: dict[str, tuple[str, ...]] = {
    #             private organization public org_shared private_shared
    "owner":     ("F",    "F",         "F",   "F",       "F"),
    "same_org":  ("-",    "F",         "F",   "F",       "-"),
    "other_org": ("-",    "-",         "F",   "-",       "-"),
    "support":   ("-",    "-",         "F",   "X",       "X"),
    "admin":     ("F",    "F",         "F",   "F",       "F"),
}
# fmt: on
CALLERS = tuple(TABLE)
SIGNED_IN = tuple(caller for caller in CALLERS if caller != "anonymous")
CELLS = [
    pytest.param(caller, kind, TABLE[caller][i], id=f"{caller}-{kind}")
    for caller in CALLERS
    for i, kind in enumerate(KINDS)
]
FORK_CELLS = [
    pytest.param(caller, kind, FORKS[caller][i], id=f"{caller}-{kind}")
    for caller in FORKS
    for i, kind in enumerate(KINDS)
]
WRITES = ("put", "patch", "delete", "append")
SUCCESS = {"put": 200, "patch": 200, "delete": 204, "append": 200}


@dataclass(frozen=True, slots=True)
class People:
    """The callers of one test: user ids, Authorization headers, and a workspace of its own."""

    users: dict[str, str]
    headers: dict[str, dict[str, str]]
    workspace: str


@pytest.fixture
def people(
    auth: TokenFactory, new_user: Callable[[str], str], new_org: Callable[[str], str]
) -> People:
    acme, globex = new_org("acme"), new_org("globex")
    users = {
        "owner": new_user("olivia"),
        "same_org": new_user("sam"),
        "other_org": new_user("otto"),
        "support": new_user("sue"),
        "admin": new_user("ada"),
    }
    headers = {
        "owner": auth(users["owner"], org=acme),
        "same_org": auth(users["same_org"], org=acme),
        "other_org": auth(users["other_org"], org=globex),
        "anonymous": {},
        "support": auth(users["support"], org=globex, roles=("support",)),
        "admin": auth(users["admin"], org=globex, roles=("admin",)),
    }
    return People(users, headers, f"/work/{uuid.uuid4().hex}")


def document(tid: str, kind: str, workspace: str, title: str = "original") -> dict[str, Any]:
    return {
        "id": tid,
        "workspace_root": workspace,
        "metadata": {"title": title},
        "conversation": {"messages": [{"role": "user", "content": "hello"}]},
        **KINDS[kind],
    }


async def create(
    client: httpx.AsyncClient, people: People, kind: str, author: str = "owner"
) -> ThreadId:
    tid = ThreadId.new()
    body = document(tid, kind, people.workspace)
    r = await client.put(f"/api/threads/{tid}", json=body, headers=people.headers[author])
    assert r.status_code == 201, r.text
    return tid


async def write(
    client: httpx.AsyncClient, people: People, caller: str, op: str, tid: ThreadId, kind: str
) -> httpx.Response:
    """One write of kind ``op`` by ``caller``, based on version 1 (the thread as created)."""
    url = f"/api/threads/{tid}"
    headers = {**people.headers[caller], "If-Match": '"1"'}
    if op == "put":
        body = document(tid, kind, people.workspace, title="changed")
        return await client.put(url, json=body, headers=headers)
    if op == "patch":
        return await client.patch(url, json={"metadata": {"title": "changed"}}, headers=headers)
    if op == "append":
        body = {"messages": [{"role": "assistant", "content": "hi"}]}
        return await client.post(f"{url}/messages", json=body, headers=headers)
    return await client.delete(url, headers=headers)


async def owner_view(client: httpx.AsyncClient, people: People, tid: ThreadId) -> httpx.Response:
    return await client.get(f"/api/threads/{tid}", headers=people.headers["owner"])


def assert_problem(r: httpx.Response, status: int, code: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == code


async def listed(client: httpx.AsyncClient, people: People, caller: str, scope: str) -> list[str]:
    params: dict[str, str | int] = {"scope": scope, "workspace": people.workspace, "limit": 200}
    r = await client.get("/api/threads", params=params, headers=people.headers[caller])
    assert r.status_code == 200, r.text
    assert r.json()["next_cursor"] is None
    return [t["id"] for t in r.json()["threads"]]


@pytest.mark.parametrize(("caller", "kind", "cell"), CELLS)
async def test_read_follows_access_table(
    client: httpx.AsyncClient, people: People, caller: str, kind: str, cell: str
) -> None:
    tid = await create(client, people, kind)
    r = await client.get(f"/api/threads/{tid}", headers=people.headers[caller])
    if cell == "-":
        missing = await client.get(f"/api/threads/{ThreadId.new()}", headers=people.headers[caller])
        assert_problem(r, 404, "not_found")
        assert r.json() == missing.json()
        assert r.headers["content-type"] == missing.headers["content-type"]
        assert "etag" not in r.headers
    else:
        assert r.status_code == 200, r.text
        assert r.json()["id"] == tid
        assert r.json()["owner_id"] == people.users["owner"]
        assert r.headers["etag"] == '"1"'


@pytest.mark.parametrize("op", WRITES)
@pytest.mark.parametrize(("caller", "kind", "cell"), CELLS)
async def test_write_follows_access_table(
    client: httpx.AsyncClient, people: People, caller: str, kind: str, cell: str, op: str
) -> None:
    tid = await create(client, people, kind)
    r = await write(client, people, caller, op, tid, kind)
    after = await owner_view(client, people, tid)
    if caller == "anonymous":
        assert_problem(r, 401, "unauthorized")
    elif cell == "W":
        assert r.status_code == SUCCESS[op], r.text
        if op == "delete":
            assert_problem(after, 410, "gone")
            return
        assert after.json()["version"] == 2
        assert after.json()["owner_id"] == people.users["owner"]
        assert after.json()["visibility"] == KINDS[kind]["visibility"]
        return
    elif cell == "R":
        assert_problem(r, 403, "forbidden")
    else:
        assert_problem(r, 404, "not_found")
    assert after.status_code == 200, after.text
    assert after.json()["version"] == 1
    assert after.json()["metadata"]["title"] == "original"
    assert after.json()["message_count"] == 1


@pytest.mark.parametrize(("caller", "kind", "cell"), FORK_CELLS)
async def test_fork_follows_access_table(
    client: httpx.AsyncClient, people: People, caller: str, kind: str, cell: str
) -> None:
    tid = await create(client, people, kind)
    r = await client.post(f"/api/threads/{tid}/fork", json={}, headers=people.headers[caller])
    if cell == "F":
        assert r.status_code == 201, r.text
        assert r.json()["owner_id"] == people.users[caller]
        assert r.json()["visibility"] == "private"
        return
    if cell == "X":
        assert_problem(r, 403, "forbidden")
        assert "support" in r.json()["detail"]
    else:
        assert_problem(r, 404, "not_found")
    assert await listed(client, people, caller, "mine") == []  # no copy was stored
    assert (await owner_view(client, people, tid)).json()["version"] == 1


@pytest.mark.parametrize(("caller", "kind", "cell"), FORK_CELLS)
async def test_fork_made_on_the_client_follows_the_same_table(
    client: httpx.AsyncClient, people: People, caller: str, kind: str, cell: str
) -> None:
    """``loomsync fork`` forks on the client (``loomsync.edits.forked``) and uploads the copy
    as a new thread naming its source in ``metadata.extra.forked_from``: that upload obeys the
    fork rule too. A caller who cannot read the source (cell ``-``) learns nothing from the
    answer: it is the same as for a source that does not exist."""
    tid = await create(client, people, kind)
    source = Thread.model_validate((await owner_view(client, people, tid)).json())
    copy = forked(source)
    headers = {**people.headers[caller], "If-Match": '"0"', "Content-Type": "application/json"}
    r = await client.put(
        f"/api/threads/{copy.id}", content=dumps(document_of(copy)), headers=headers
    )
    if cell == "X":
        assert_problem(r, 403, "forbidden")
        assert "support" in r.json()["detail"]
        assert await listed(client, people, caller, "mine") == []
        return
    assert r.status_code == 201, r.text
    assert r.json()["owner_id"] == people.users[caller]
    assert r.json()["metadata"]["extra"]["forked_from"] == {"id": tid, "version": 1}


async def test_anonymous_fork_gets_401(client: httpx.AsyncClient, people: People) -> None:
    tid = await create(client, people, "public")
    r = await client.post(f"/api/threads/{tid}/fork", json={})
    assert_problem(r, 401, "unauthorized")


@pytest.mark.parametrize(
    ("ground", "visibility"),
    [
        pytest.param("same_org", "organization", id="support_in_the_owners_org"),
        pytest.param("owner", "private", id="support_user_owns_it"),
        pytest.param("public", "public", id="public_and_shared"),
        pytest.param("admin", "private", id="support_and_admin"),
    ],
)
async def test_support_user_who_reads_the_thread_another_way_may_fork_it(
    client: httpx.AsyncClient,
    people: People,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
    ground: str,
    visibility: str,
) -> None:
    """The support role takes nothing away: a support user with another ground to read a thread
    shared with support (its owner, a member of its organization, an admin, or the thread is
    public) forks it."""
    acme, sue = new_org("acme"), new_user("sue")
    owner = auth(new_user("olivia"), org=acme)
    roles = ("support", "admin") if ground == "admin" else ("support",)
    support = auth(sue, org=acme if ground == "same_org" else new_org("globex"), roles=roles)
    tid = ThreadId.new()
    body = {**document(tid, "public", people.workspace), "visibility": visibility}
    body["is_shared_with_support"] = True
    author = support if ground == "owner" else owner
    stored = await client.put(f"/api/threads/{tid}", json=body, headers=author)
    assert stored.status_code == 201, stored.text
    r = await client.post(f"/api/threads/{tid}/fork", json={}, headers=support)
    assert r.status_code == 201, r.text
    assert r.json()["owner_id"] == sue
    assert r.json()["metadata"]["extra"]["forked_from"] == {"id": tid, "version": 1}


async def test_support_keeps_no_copy_once_the_owner_stops_sharing(
    client: httpx.AsyncClient, people: People
) -> None:
    """Issue 11 item 12: support read a thread shared with it, forked it, kept the fork after
    the owner stopped sharing, and could make that fork public. Now the fork is refused, and
    once sharing ends support reads nothing of the thread."""
    tid = await create(client, people, "private_shared")
    support = people.headers["support"]
    assert (await client.get(f"/api/threads/{tid}", headers=support)).status_code == 200
    fork = await client.post(f"/api/threads/{tid}/fork", json={"up_to": 1}, headers=support)
    assert_problem(fork, 403, "forbidden")
    headers = {**people.headers["owner"], "If-Match": '"1"'}
    unshared = await client.patch(
        f"/api/threads/{tid}", json={"is_shared_with_support": False}, headers=headers
    )
    assert unshared.status_code == 200, unshared.text
    assert_problem(await client.get(f"/api/threads/{tid}", headers=support), 404, "not_found")
    assert await listed(client, people, "support", "mine") == []
    assert await listed(client, people, "support", "visible") == []


async def test_same_org_user_forks_organization_thread_into_own_private_thread(
    client: httpx.AsyncClient, people: People
) -> None:
    tid = await create(client, people, "organization")
    r = await client.post(f"/api/threads/{tid}/fork", json={}, headers=people.headers["same_org"])
    assert r.status_code == 201, r.text
    fork = r.json()
    assert fork["id"] != tid
    assert r.headers["location"] == f"/api/threads/{fork['id']}"
    assert fork["owner_id"] == people.users["same_org"]
    assert fork["visibility"] == "private"
    assert fork["is_shared_with_support"] is False
    assert fork["metadata"]["extra"]["forked_from"] == {"id": tid, "version": 1}
    assert fork["conversation"]["messages"] == [{"role": "user", "content": "hello"}]
    hidden = await owner_view(client, people, fork["id"])
    assert_problem(hidden, 404, "not_found")
    source = await owner_view(client, people, tid)
    assert source.json()["version"] == 1


@pytest.mark.parametrize("caller", SIGNED_IN)
async def test_list_visible_shows_exactly_readable_threads(
    client: httpx.AsyncClient, people: People, caller: str
) -> None:
    """With a token, ``scope=visible`` lists every thread the caller may read, public threads
    of other organizations included."""
    ids = {kind: await create(client, people, kind) for kind in KINDS}
    expected = {ids[kind] for kind, cell in zip(KINDS, TABLE[caller], strict=True) if cell != "-"}
    got = await listed(client, people, caller, "visible")
    assert len(got) == len(set(got))
    assert set(got) == expected


@pytest.mark.parametrize("caller", SIGNED_IN)
async def test_search_visible_finds_exactly_readable_threads(
    client: httpx.AsyncClient, people: People, caller: str
) -> None:
    ids = {kind: await create(client, people, kind) for kind in KINDS}
    expected = {ids[kind] for kind, cell in zip(KINDS, TABLE[caller], strict=True) if cell != "-"}
    params: dict[str, str | int] = {"q": "hello", "scope": "visible", "limit": 100}
    params["workspace"] = people.workspace
    r = await client.get("/api/threads/search", params=params, headers=people.headers[caller])
    assert r.status_code == 200, r.text
    assert {hit["thread"]["id"] for hit in r.json()["hits"]} == expected


@pytest.mark.parametrize(
    ("path", "params"),
    [
        pytest.param("/api/threads", {}, id="list"),
        pytest.param("/api/threads", {"scope": "visible", "archived": "any"}, id="list_visible"),
        pytest.param("/api/threads/search", {"q": "hello"}, id="search"),
        pytest.param("/api/threads/search", {"q": "hello", "scope": "visible"}, id="search_all"),
        pytest.param("/api/threads", {"scope": "visible", "limit": 0}, id="list_bad_limit"),
    ],
)
async def test_anonymous_callers_cannot_list_or_search(
    client: httpx.AsyncClient, people: People, path: str, params: dict[str, str | int]
) -> None:
    """API.md section 1: public threads are readable by id, not listed, so that strangers
    cannot enumerate them. Without a token, listing and searching are 401 (a bare ``Bearer``
    challenge, RFC 6750 section 3.1), whatever the parameters; the thread is still read by id."""
    tid = await create(client, people, "public")
    r = await client.get(path, params={**params, "workspace": people.workspace})
    assert_problem(r, 401, "unauthorized")
    assert r.headers["www-authenticate"] == 'Bearer realm="loomsync"'
    assert tid not in r.text
    by_id = await client.get(f"/api/threads/{tid}")
    assert by_id.status_code == 200, by_id.text
    assert by_id.json()["visibility"] == "public"


@pytest.mark.parametrize("caller", SIGNED_IN)
async def test_list_mine_shows_only_callers_own_threads(
    client: httpx.AsyncClient, people: People, caller: str
) -> None:
    owners = {kind: await create(client, people, kind) for kind in KINDS}
    sams = await create(client, people, "organization", author="same_org")
    expected = {"owner": set(owners.values()), "same_org": {sams}}.get(caller, set())
    got = await listed(client, people, caller, "mine")
    assert len(got) == len(set(got))
    assert set(got) == expected


async def test_anonymous_create_gets_401_and_stores_nothing(
    client: httpx.AsyncClient, people: People
) -> None:
    tid = ThreadId.new()
    r = await client.post("/api/threads", json=document(tid, "public", people.workspace))
    assert_problem(r, 401, "unauthorized")
    assert_problem(await client.get(f"/api/threads/{tid}"), 404, "not_found")


@pytest.mark.parametrize("method", ["put", "post"])
async def test_private_session_is_refused_and_not_stored(
    client: httpx.AsyncClient, people: People, method: str
) -> None:
    tid = ThreadId.new()
    body = {**document(tid, "private", people.workspace), "is_private": True}
    headers = people.headers["owner"]
    if method == "put":
        r = await client.put(f"/api/threads/{tid}", json=body, headers=headers)
    else:
        r = await client.post("/api/threads", json=body, headers=headers)
    assert_problem(r, 422, "validation_error")
    assert {"loc": ["body", "is_private"]} in [{"loc": e["loc"]} for e in r.json()["errors"]]
    assert_problem(await owner_view(client, people, tid), 404, "not_found")
    assert await listed(client, people, "owner", "mine") == []


async def test_private_session_replacing_stored_thread_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, people: People
) -> None:
    tid = await create(client, people, "organization")
    body = {**document(tid, "organization", people.workspace, "changed"), "is_private": True}
    headers = {**people.headers["owner"], "If-Match": '"1"'}
    r = await client.put(f"/api/threads/{tid}", json=body, headers=headers)
    assert_problem(r, 422, "validation_error")
    after = await owner_view(client, people, tid)
    assert after.json()["version"] == 1
    assert after.json()["metadata"]["title"] == "original"
