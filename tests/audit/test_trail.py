"""The audit trail: every create, delete, visibility change, support-sharing change and fork
leaves one event (who, what, which thread, when, from where), written in the write's own
transaction; ``GET /api/audit`` shows them to admins only, newest first, keyset-paginated.

Isolation: the trail is shared by every test, so each test reads only its own users' events.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory


@pytest.fixture
def admin(auth: TokenFactory, new_user: Callable[[str], str]) -> dict[str, str]:
    return auth(new_user("auditor"), roles=("admin",))


async def events(
    client: httpx.AsyncClient, admin: dict[str, str], **params: Any
) -> list[dict[str, Any]]:
    response = await client.get("/api/audit", params=params, headers=admin)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


async def test_create_is_audited_with_who_where_and_when(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    admin: dict[str, str],
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    alice, acme = new_user("alice"), new_org("acme")
    headers = {**auth(alice, acme), "X-Request-ID": "audit-create-1"}
    before = datetime.now(UTC) - timedelta(seconds=5)
    created = await client.post("/api/threads", json={"visibility": "public"}, headers=headers)
    assert created.status_code == 201
    put_id = ThreadId.new()
    put = await client.put(f"/api/threads/{put_id}", json={}, headers=auth(alice, acme))
    assert put.status_code == 201
    [put_event, post_event] = await events(client, admin, actor=alice)
    assert post_event["action"] == put_event["action"] == "thread.create"
    assert post_event["thread_id"] == created.json()["id"]
    assert put_event["thread_id"] == put_id
    assert post_event["actor_id"] == alice
    assert post_event["actor_org"] == acme
    assert post_event["actor_roles"] == []
    assert post_event["client_ip"] == "127.0.0.1"  # httpx's ASGI transport
    assert post_event["request_id"] == "audit-create-1"
    assert post_event["details"] == {"visibility": "public", "is_shared_with_support": False}
    assert before <= datetime.fromisoformat(post_event["occurred_at"]) <= datetime.now(UTC)


async def test_visibility_and_support_sharing_changes_are_audited(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    admin: dict[str, str],
    new_user: Callable[[str], str],
) -> None:
    bob = new_user("bob")
    me = auth(bob)
    created = await client.post("/api/threads", json={"visibility": "organization"}, headers=me)
    tid = created.json()["id"]
    url = f"/api/threads/{tid}"
    assert (await client.patch(url, json={"visibility": "public"}, headers=me)).status_code == 200
    same = await client.patch(url, json={"visibility": "public"}, headers=me)
    assert same.status_code == 200
    shared = await client.patch(url, json={"is_shared_with_support": True}, headers=me)
    assert shared.status_code == 200
    title_only = await client.patch(url, json={"metadata": {"title": "t"}}, headers=me)
    assert title_only.status_code == 200
    # a whole-thread replace that changes visibility is a visibility change too
    replaced = await client.put(
        url,
        json={"visibility": "private", "is_shared_with_support": True},
        headers={**me, "If-Match": '"5"'},
    )
    assert replaced.status_code == 200, replaced.text
    trail = await events(client, admin, thread=tid)
    assert [(e["action"], e["details"]) for e in reversed(trail)] == [
        ("thread.create", {"visibility": "organization", "is_shared_with_support": False}),
        ("thread.visibility", {"from": "organization", "to": "public"}),
        ("thread.support_sharing", {"from": False, "to": True}),
        ("thread.visibility", {"from": "public", "to": "private"}),
    ]


async def test_fork_and_delete_are_audited(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    admin: dict[str, str],
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    org = new_org("acme")
    owner, reader = new_user("owner"), new_user("reader")
    source = await client.post(
        "/api/threads",
        json={
            "visibility": "organization",
            "conversation": {"messages": [{"role": "user"}, {"role": "assistant"}]},
        },
        headers=auth(owner, org),
    )
    tid = source.json()["id"]
    fork = await client.post(
        f"/api/threads/{tid}/fork", json={"up_to": 1}, headers=auth(reader, org)
    )
    assert fork.status_code == 201
    deleted = await client.delete(f"/api/threads/{tid}", headers=auth(owner, org))
    assert deleted.status_code == 204
    (forked,) = await events(client, admin, actor=reader, action="thread.fork")
    assert forked["thread_id"] == tid
    assert forked["details"] == {"fork": fork.json()["id"], "source_version": 1, "up_to": 1}
    (gone,) = await events(client, admin, thread=tid, action="thread.delete")
    assert gone["actor_id"] == owner
    assert gone["details"] == {}


async def test_refused_writes_leave_no_event(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    admin: dict[str, str],
    new_user: Callable[[str], str],
) -> None:
    owner, other = new_user("owner"), new_user("other")
    tid = (await client.post("/api/threads", json={}, headers=auth(owner))).json()["id"]
    stale = await client.patch(
        f"/api/threads/{tid}",
        json={"visibility": "public"},
        headers={**auth(owner), "If-Match": '"7"'},
    )
    assert stale.status_code == 409
    again = await client.post("/api/threads", json={"id": tid}, headers=auth(owner))
    assert again.status_code == 409
    forbidden = await client.delete(f"/api/threads/{tid}", headers=auth(other))
    assert forbidden.status_code == 404
    invalid = await client.patch(
        f"/api/threads/{tid}", json={"visibility": None}, headers=auth(owner)
    )
    assert invalid.status_code == 422
    assert [e["action"] for e in await events(client, admin, thread=tid)] == ["thread.create"]


async def test_audit_trail_is_for_admins_only(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    anonymous = await client.get("/api/audit")
    assert anonymous.status_code == 401
    assert anonymous.headers["www-authenticate"] == 'Bearer realm="loomsync"'
    for roles in [(), ("support",)]:
        refused = await client.get("/api/audit", headers=auth(new_user("u"), roles=roles))
        assert refused.status_code == 403
        assert refused.json()["code"] == "forbidden"


async def test_audit_pages_never_repeat_or_skip_events(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    admin: dict[str, str],
    new_user: Callable[[str], str],
) -> None:
    carol = new_user("carol")
    made = []
    for _ in range(5):
        made.append((await client.post("/api/threads", json={}, headers=auth(carol))).json()["id"])
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        params: dict[str, Any] = {"actor": carol, "limit": 2}
        if cursor:
            params["cursor"] = cursor
        page = (await client.get("/api/audit", params=params, headers=admin)).json()
        seen += [e["thread_id"] for e in page["events"]]
        pages += 1
        cursor = page["next_cursor"]
        if cursor is None:
            break
        # a write between pages does not disturb the pages still to come
        await client.post("/api/threads", json={}, headers=auth(new_user("noise")))
    assert seen == list(reversed(made))
    assert pages == 3


@pytest.mark.parametrize(
    "params",
    [{"cursor": "nope"}, {"thread": "T-nope"}, {"limit": 0}, {"action": "thread.read"}],
)
async def test_bad_audit_queries_are_4xx(
    client: httpx.AsyncClient, admin: dict[str, str], params: dict[str, Any]
) -> None:
    response = await client.get("/api/audit", params=params, headers=admin)
    assert response.status_code in (400, 422)
    assert response.headers["content-type"] == "application/problem+json"


async def test_actor_holding_nul_matches_nothing(
    client: httpx.AsyncClient, admin: dict[str, str]
) -> None:
    assert await events(client, admin, actor="a\x00b") == []
