"""GET /api/threads: keyset pagination, filters and scopes (API.md section 6)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory

START = datetime(2026, 1, 1, tzinfo=UTC)


async def _put(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    tid = ThreadId.new()
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return str(tid)


async def _all_pages(
    client: httpx.AsyncClient, headers: dict[str, str], **params: Any
) -> list[str]:
    ids: list[str] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/api/threads", params=query, headers=headers)).json()
        ids += [t["id"] for t in page["threads"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


async def test_pages_cover_every_thread_once_newest_first(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("lister"))
    same_time = (START + timedelta(days=1)).isoformat()
    ids = [
        await _put(client, headers, last_activity_at=(START + timedelta(minutes=i)).isoformat())
        for i in range(7)
    ]
    ties = [await _put(client, headers, last_activity_at=same_time) for _ in range(4)]
    listed = await _all_pages(client, headers, limit=3)
    assert len(listed) == len(set(listed)) == 11
    assert listed[:4] == sorted(ties, reverse=True)  # ties: higher (newer UUIDv7) id first
    assert listed[4:] == list(reversed(ids))


async def test_pagination_neither_repeats_nor_skips_while_others_are_written(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("lister"))
    old = [
        await _put(client, headers, last_activity_at=(START + timedelta(hours=i)).isoformat())
        for i in range(10)
    ]
    seen: list[str] = []
    page = (await client.get("/api/threads", params={"limit": 4}, headers=headers)).json()
    seen += [t["id"] for t in page["threads"]]
    # new threads arrive (newer activity) while the client pages
    await asyncio.gather(*(_put(client, headers) for _ in range(5)))
    cursor = page["next_cursor"]
    while cursor:
        page = (
            await client.get("/api/threads", params={"limit": 4, "cursor": cursor}, headers=headers)
        ).json()
        seen += [t["id"] for t in page["threads"]]
        cursor = page["next_cursor"]
    assert sorted(seen) == sorted(old)


async def test_summary_fields(client: httpx.AsyncClient, auth: TokenFactory, new_user) -> None:
    headers = auth(new_user("lister"), org="o1")
    await _put(
        client,
        headers,
        workspace_root="/w",
        git_branch="main",
        metadata={"title": "T", "tags": ["a"], "is_pinned": True},
        conversation={"messages": [{"role": "user", "content": "x"}]},
        created_at="2026-01-01T00:00:00+02:00",
    )
    summary = (await client.get("/api/threads", headers=headers)).json()["threads"][0]
    assert set(summary) == {
        "id", "title", "workspace_root", "git_branch", "git_remote_url", "provider", "model", "tags",
        "is_pinned", "visibility", "is_shared_with_support", "owner_id", "org_id", "version",
        "message_count", "created_at", "last_activity_at", "archived_at",
    }  # fmt: skip
    assert summary["title"] == "T"
    assert summary["tags"] == ["a"]
    assert summary["is_pinned"] is True
    assert summary["message_count"] == 1
    assert summary["org_id"] == "o1"
    assert summary["created_at"] == "2025-12-31T22:00:00Z"


async def test_workspace_filter_is_exact(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("lister"))
    inside = await _put(client, headers, workspace_root="/repo/a")
    await _put(client, headers, workspace_root="/repo/a/b")
    await _put(client, headers, workspace_root=None)
    assert await _all_pages(client, headers, workspace="/repo/a") == [inside]


async def test_scope_mine_is_default_and_visible_adds_shared(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, new_org
) -> None:
    org = new_org("acme")
    me, colleague = auth(new_user("me"), org=org), auth(new_user("colleague"), org=org)
    mine = await _put(client, me, visibility="private")
    theirs = await _put(client, colleague, visibility="organization")
    their_private = await _put(client, colleague, visibility="private")
    assert await _all_pages(client, me) == [mine]
    visible = await _all_pages(client, me, scope="visible")
    assert theirs in visible
    assert mine in visible
    assert their_private not in visible


@pytest.mark.parametrize(
    "params",
    [
        {"limit": 0},
        {"limit": 201},
        {"limit": "x"},
        {"scope": "all"},
        {"archived": "maybe"},
        {"cursor": "!!!"},
        {"cursor": "e30"},
    ],
)
async def test_bad_list_parameters_are_4xx_problems(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, params: dict[str, Any]
) -> None:
    response = await client.get("/api/threads", params=params, headers=auth(new_user("x")))
    assert response.status_code in (400, 422)
    assert response.headers["content-type"] == "application/problem+json"
