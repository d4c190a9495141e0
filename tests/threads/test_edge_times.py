"""Timestamps at the edges of the range, and leap seconds (issue 11, items 2 and 9).

API.md section 6: "every cursor the server issues is accepted back, whatever the timestamps of
the threads it points between". ``0001-01-01T00:00:00Z`` (Go's zero time, common in real
exports) and ``9999-12-31T23:59:59.999999Z`` are stored, read back exactly (section 2: UTC ``Z``
form) and paged through; instants an offset pushes beyond them are a 422 naming the field; a
leap second is accepted as the last microsecond before it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory

FIRST = "0001-01-01T00:00:00Z"
LAST = "9999-12-31T23:59:59.999999Z"
ORDINARY = ["2026-03-01T12:00:00Z", "2026-03-02T12:00:00.5Z"]


async def _put(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    tid = str(ThreadId.new())
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return tid


async def _walk(
    client: httpx.AsyncClient, headers: dict[str, str], path: str, **params: Any
) -> list[dict[str, Any]]:
    """Every row of a listing, one per page (``limit=1``): each issued cursor is sent back."""
    rows: list[dict[str, Any]] = []
    cursor = None
    for _ in range(100):
        query = {**params, "limit": 1, **({"cursor": cursor} if cursor else {})}
        response = await client.get(path, params=query, headers=headers)
        assert response.status_code == 200, f"page {len(rows) + 1}: {response.text}"
        page = response.json()
        rows += page["hits"] if "hits" in page else page["threads"]
        cursor = page["next_cursor"]
        if cursor is None:
            return rows
    pytest.fail("the walk never ended")


class Edges:
    """Threads at both edges (two each, so ties are paged too) and ordinary ones, in one
    workspace: some mine, one an org member's, one a stranger's public thread; one archived.

    ``mine`` and ``visible`` are the ids each scope must list, newest activity first.
    """

    def __init__(self, workspace: str, me: dict[str, str]) -> None:
        self.workspace = workspace
        self.me = me
        self.mine: list[str] = []
        self.visible: list[str] = []
        self.word = f"edgeword{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def edges(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> Edges:
    made = Edges(f"/work/edges-{uuid.uuid4().hex}", auth(new_user("edgy"), org="edge-org"))
    colleague = auth(new_user("colleague"), org="edge-org")
    stranger = auth(new_user("stranger"), org="elsewhere")
    common = {"workspace_root": made.workspace, "metadata": {"title": f"about {made.word}"}}
    # (owner, last_activity_at, created_at, visibility)
    plan = [
        (made.me, LAST, LAST, "private"),
        (made.me, LAST, FIRST, "private"),
        (made.me, ORDINARY[0], FIRST, "private"),
        (made.me, ORDINARY[1], LAST, "private"),
        (made.me, FIRST, FIRST, "private"),
        (made.me, "0001-01-01T01:00:00+01:00", ORDINARY[0], "private"),  # the same instant
        (colleague, LAST, ORDINARY[0], "organization"),
        (stranger, FIRST, LAST, "public"),
        (stranger, ORDINARY[0], ORDINARY[0], "private"),  # never listed for me
    ]
    rows: list[tuple[str, str, str]] = []  # (normalised activity, id, owner kind)
    for owner, activity, created, visibility in plan:
        tid = await _put(
            client,
            owner,
            last_activity_at=activity,
            created_at=created,
            visibility=visibility,
            **common,
        )
        kind = "mine" if owner is made.me else visibility
        rows.append((FIRST if activity.startswith("0001") else activity, tid, kind))
    archived = rows[1][1]
    patched = await client.patch(
        f"/api/threads/{archived}", json={"archived": True}, headers=made.me
    )
    assert patched.status_code == 200, patched.text
    ordered = sorted(rows, key=lambda r: (r[0], r[1]), reverse=True)
    made.mine = [tid for _, tid, kind in ordered if kind == "mine"]
    made.visible = [tid for _, tid, kind in ordered if kind in ("mine", "organization", "public")]
    return made


@pytest.mark.parametrize("scope", ["mine", "visible"])
async def test_list_walk_with_limit_1_reaches_every_thread_past_both_edges(
    client: httpx.AsyncClient, edges: Edges, scope: str
) -> None:
    rows = await _walk(
        client, edges.me, "/api/threads", scope=scope, archived="any", workspace=edges.workspace
    )
    expected = edges.mine if scope == "mine" else edges.visible
    assert [r["id"] for r in rows] == expected


@pytest.mark.parametrize("scope", ["mine", "visible"])
async def test_search_walk_with_limit_1_reaches_every_thread_past_both_edges(
    client: httpx.AsyncClient, edges: Edges, scope: str
) -> None:
    rows = await _walk(
        client,
        edges.me,
        "/api/threads/search",
        q=edges.word,
        scope=scope,
        archived="any",
        workspace=edges.workspace,
    )
    expected = edges.mine if scope == "mine" else edges.visible
    assert [r["thread"]["id"] for r in rows] == expected  # equal scores: newest activity first


async def test_edge_timestamps_read_back_exactly_in_get_and_list(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    me = auth(new_user("edgy"))
    workspace = f"/work/exact-{uuid.uuid4().hex}"
    low = await _put(client, me, created_at=FIRST, last_activity_at=FIRST, workspace_root=workspace)
    high = await _put(client, me, created_at=LAST, last_activity_at=LAST, workspace_root=workspace)
    shifted = await _put(
        client,
        me,
        created_at="9999-12-31T23:59:59.999999+00:00",
        last_activity_at="0001-01-01T05:30:00+05:30",
        workspace_root=workspace,
    )
    want = {low: (FIRST, FIRST), high: (LAST, LAST), shifted: (LAST, FIRST)}
    for tid, (created, activity) in want.items():
        got = (await client.get(f"/api/threads/{tid}", headers=me)).json()
        assert (got["created_at"], got["last_activity_at"]) == (created, activity)
    listed = (await client.get("/api/threads", params={"workspace": workspace}, headers=me)).json()
    assert {t["id"]: (t["created_at"], t["last_activity_at"]) for t in listed["threads"]} == want


async def test_append_and_fork_keep_an_edge_activity_time(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    me = auth(new_user("edgy"))
    tid = await _put(client, me)
    appended = await client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [{"role": "user", "content": "hi"}], "last_activity_at": LAST},
        headers={**me, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    assert (await client.get(f"/api/threads/{tid}", headers=me)).json()["last_activity_at"] == LAST
    fork = await client.post(f"/api/threads/{tid}/fork", json={}, headers=me)
    assert fork.status_code == 201, fork.text
    assert fork.json()["last_activity_at"] == LAST


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("created_at", "0001-01-01T00:00:00+01:00"),
        ("last_activity_at", "0001-01-01T00:59:59.999999+01:00"),
        ("created_at", "9999-12-31T23:59:59-00:01"),
        ("last_activity_at", "9999-12-31T23:30:00-01:00"),
    ],
)
async def test_instant_beyond_the_range_once_in_utc_is_422_naming_the_field(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    field: str,
    value: str,
) -> None:
    tid = str(ThreadId.new())
    response = await client.put(
        f"/api/threads/{tid}", json={"id": tid, field: value}, headers=auth(new_user("edgy"))
    )
    assert response.status_code == 422, response.text
    [error] = response.json()["errors"]
    assert error["loc"] == ["body", field]
    assert "UTC" in error["msg"]


async def test_message_and_append_times_beyond_the_range_are_422_naming_the_field(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    me = auth(new_user("edgy"))
    tid = str(ThreadId.new())
    message = {"role": "user", "content": "x", "created_at": "0001-01-01T00:00:00+00:01"}
    put = await client.put(
        f"/api/threads/{tid}",
        json={"id": tid, "conversation": {"messages": [message]}},
        headers=me,
    )
    assert put.status_code == 422, put.text
    assert put.json()["errors"][0]["loc"] == ["body", "conversation", "messages", 0, "created_at"]
    tid = await _put(client, me)
    appended = await client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [], "last_activity_at": "9999-12-31T23:59:59-01:00"},
        headers={**me, "If-Match": '"1"'},
    )
    assert appended.status_code == 422, appended.text
    assert appended.json()["errors"][0]["loc"] == ["body", "last_activity_at"]


# Item 9: a leap second is accepted, as the last microsecond before it.


@pytest.mark.parametrize(
    ("sent", "stored"),
    [
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
        ("2016-12-31T23:59:60.5Z", "2016-12-31T23:59:59.999999Z"),
        ("2017-01-01T00:59:60+01:00", "2016-12-31T23:59:59.999999Z"),
        ("2015-06-30T23:59:60", "2015-06-30T23:59:59.999999Z"),
        ("9999-12-31T23:59:60Z", LAST),
    ],
)
async def test_leap_second_in_thread_times_is_clamped_to_the_microsecond_before(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    sent: str,
    stored: str,
) -> None:
    me = auth(new_user("leaper"))
    tid = await _put(client, me, created_at=sent, last_activity_at=sent)
    got = (await client.get(f"/api/threads/{tid}", headers=me)).json()
    assert (got["created_at"], got["last_activity_at"]) == (stored, stored)


async def test_leap_second_in_messages_and_appends_is_accepted(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    """Message JSON is stored as sent (API.md section 2), so a message keeps its ``:60``; the
    activity time, a column, is clamped like the thread's own times."""
    me = auth(new_user("leaper"))
    leap = "2016-12-31T23:59:60Z"
    message = {"role": "user", "content": "at the leap", "created_at": leap}
    tid = await _put(client, me, conversation={"messages": [message]})
    appended = await client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [message], "last_activity_at": leap},
        headers={**me, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    got = (await client.get(f"/api/threads/{tid}", headers=me)).json()
    assert [m["created_at"] for m in got["conversation"]["messages"]] == [leap, leap]
    assert got["last_activity_at"] == "2016-12-31T23:59:59.999999Z"


@pytest.mark.parametrize(
    "bad", ["2016-12-31T23:59:61Z", "2016-12-31T23:60:00Z", "2016-12-31T24:00:00Z"]
)
async def test_seconds_past_60_are_still_422(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str], bad: str
) -> None:
    tid = str(ThreadId.new())
    response = await client.put(
        f"/api/threads/{tid}", json={"id": tid, "created_at": bad}, headers=auth(new_user("x"))
    )
    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["loc"] == ["body", "created_at"]
