"""``GET /api/usage`` over real HTTP (issue 33 items 1 and 5): the real transcripts add up
to the hand-counted sums per agent; the side table follows every write (PUT, append, PATCH,
fork, delete) and the backfill; scopes and visibility as API.md section 4 and issue 33 say;
CSV; problems for bad input."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.auth import create_token
from app.config import Settings
from app.usage.backfill import backfill_sync
from loomsync.core.document import jsontext
from loomsync.core.document.ids import ThreadId
from tests.client.conftest import LiveServer
from tests.usage.corpus import EXPECTED, REASONING, WITHOUT_USAGE, corpus_documents

WIDE = {"since": "1900-01-01", "until": "2100-12-31"}


@pytest.fixture
async def http(live_server: LiveServer) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=live_server.url, timeout=120) as client:
        yield client


def _headers(settings: Settings, sub: str, org: str | None, admin: bool = False) -> dict[str, str]:
    roles = ["admin"] if admin else []
    return {"Authorization": f"Bearer {create_token(settings, sub, org=org, roles=roles)}"}


def turn(
    model: str = "claude-sonnet-4-5",
    provider: str = "anthropic",
    day: str = "2026-11-03",
    calls: int = 0,
    **counts: int,
) -> dict[str, Any]:
    """An assistant message with usage (issue 28's shape)."""
    usage = {"input_tokens": 1000, "output_tokens": 100, **counts}
    return {
        "role": "assistant",
        "content": "done",
        "created_at": f"{day}T10:00:00Z",
        "usage": {**usage, "model": model, "provider": provider},
        "tool_calls": [
            {"id": f"c{i}", "tool_name": "Read", "arguments_json": {}} for i in range(calls)
        ],
    }


def thread(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {
        "version": 0,
        "git_remote_url": "git@github.com:team/project.git",
        "workspace_root": "/home/alice/project",
        "metadata": {"extra": {"source": {"agent": "claude-code"}}},
        "conversation": {"messages": [{"role": "user", "content": "go"}, *messages]},
        **fields,
    }


async def put(http: httpx.AsyncClient, headers: dict[str, str], doc: dict[str, Any]) -> str:
    tid = str(ThreadId.new())
    answer = await http.put(
        f"/api/threads/{tid}",
        content=jsontext.dumps({**doc, "id": tid}),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert answer.status_code == 201, answer.text
    return tid


async def usage(http: httpx.AsyncClient, headers: dict[str, str], **params: Any) -> dict[str, Any]:
    answer = await http.get("/api/usage", params={**WIDE, **params}, headers=headers)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def by_key(body: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {g["key"]: g for g in body["groups"]}


async def test_real_transcripts_add_up_per_agent(
    http: httpx.AsyncClient, settings: Settings
) -> None:
    me = _headers(settings, f"corpus-{uuid.uuid4().hex[:8]}", None)
    for doc in corpus_documents():
        await put(http, me, doc)
    body = await usage(http, me, group_by="agent")
    groups = by_key(body)
    for agent, (inp, out, read, write) in EXPECTED.items():
        g = groups[agent]
        got = (
            g["input_tokens"],
            g["output_tokens"],
            g["cache_read_tokens"],
            g["cache_write_tokens"],
        )
        assert got == (inp, out, read, write), agent
        assert g["reasoning_tokens"] == REASONING.get(agent, 0)
        assert g["sessions_with_usage"] > 0
    for agent in WITHOUT_USAGE:
        g = groups[agent]
        assert g["sessions"] > 0, agent
        assert g["sessions_without_usage"] == g["sessions"], agent
        assert g["turns"] == 0
        assert g["without_usage"] > 0
        assert g["cost_usd"] is None
        assert g["cost_complete"] is False
    assert groups["pi"]["cost_usd"] > 40
    assert groups["pi"]["cost_complete"] is True
    assert body["prices"]["estimate"] is True
    assert body["prices"]["label"].startswith("estimate at genai-prices ")
    total = body["total"]
    assert total["tokens"] == sum(g["tokens"] for g in body["groups"])
    assert total["sessions"] == sum(g["sessions"] for g in body["groups"])


async def test_writes_keep_the_figures(
    http: httpx.AsyncClient, settings: Settings, database_url: str
) -> None:
    me = _headers(settings, f"w-{uuid.uuid4().hex[:8]}", f"o-{uuid.uuid4().hex[:8]}")
    silent = {"role": "assistant", "content": "x", "created_at": "2026-11-03T11:00:00Z"}
    tid = await put(http, me, thread([turn(calls=2), silent]))
    body = await usage(http, me, group_by="model")
    assert [g["key"] for g in body["groups"]] == ["claude-sonnet-4-5", ""]
    sonnet = body["groups"][0]
    assert sonnet["turns"] == 1
    assert sonnet["input_tokens"] == 1000
    assert sonnet["tool_calls"] == 2
    assert sonnet["cost_usd"] == pytest.approx((1000 * 3 + 100 * 15) / 1e6)
    assert body["total"]["without_usage"] == 1
    assert body["total"]["cost_complete"] is False
    # append: added to the day's row, O(appended)
    appended = await http.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [turn(day="2026-11-04", cache_read_tokens=5000)]},
        headers={**me, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    days = by_key(await usage(http, me, group_by="day"))
    assert set(days) == {"2026-11-03", "2026-11-04"}
    assert days["2026-11-04"]["cache_read_tokens"] == 5000
    # PATCH: the copied visibility follows
    patched = await http.patch(
        f"/api/threads/{tid}", json={"visibility": "organization"}, headers=me
    )
    assert patched.status_code == 200, patched.text
    engine = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            seen = await conn.execute(
                text("SELECT DISTINCT visibility FROM usage_daily WHERE thread_id = :id"),
                {"id": ThreadId.parse(tid).uuid},
            )
            assert [r.visibility for r in seen] == ["organization"]
        # fork: the fork counts the messages it holds
        fork = await http.post(f"/api/threads/{tid}/fork", json={}, headers=me)
        assert fork.status_code == 201, fork.text
        sessions = await usage(http, me, group_by="session")
        assert len(sessions["groups"]) == 2
        assert {g["turns"] for g in sessions["groups"]} == {2}
        # replace: the rows are those of the new messages only
        replaced = await http.put(
            f"/api/threads/{tid}",
            json={**thread([turn(model="gpt-5", provider="openai")]), "id": tid, "version": 3},
            headers=me,
        )
        assert replaced.status_code == 200, replaced.text
        models = by_key(await usage(http, me, group_by="model"))
        assert models["gpt-5"]["turns"] == 1
        assert models["claude-sonnet-4-5"]["turns"] == 2
        # delete: gone from the figures
        deleted = await http.delete(f"/api/threads/{fork.json()['id']}", headers=me)
        assert deleted.status_code == 204
        models = by_key(await usage(http, me, group_by="model"))
        assert set(models) == {"gpt-5"}
        # the backfill counts a thread stored without rows, once
        async with engine.connect() as conn:
            await conn.execute(
                text("DELETE FROM usage_daily WHERE thread_id = :id"),
                {"id": ThreadId.parse(tid).uuid},
            )
            assert not (await usage(http, me))["groups"]
            await conn.run_sync(lambda c: backfill_sync(c, again=True))
            await conn.run_sync(lambda c: backfill_sync(c, again=True))
    finally:
        await engine.dispose()
    assert by_key(await usage(http, me, group_by="model"))["gpt-5"]["turns"] == 1


async def test_scopes_and_visibility(http: httpx.AsyncClient, settings: Settings) -> None:
    org = f"org-{uuid.uuid4().hex[:8]}"
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    admin = _headers(settings, alice, org, admin=True)
    member = _headers(settings, bob, org)
    await put(http, admin, thread([turn()], visibility="private"))
    await put(http, member, thread([turn(), turn()], visibility="private"))
    await put(http, member, thread([turn(), turn(), turn()], visibility="organization"))
    await put(http, _headers(settings, "carol", "other-org"), thread([turn()], visibility="public"))
    assert (await usage(http, admin))["total"]["turns"] == 1
    assert (await usage(http, member))["total"]["turns"] == 5
    team = await usage(http, admin, scope="organization", group_by="person")
    # bob's private thread counts in bob's figures only, never in an admin's organization view
    assert {g["key"]: g["turns"] for g in team["groups"]} == {alice: 1, bob: 3}
    refused = await http.get("/api/usage", params={"scope": "organization"}, headers=member)
    assert refused.status_code == 403
    assert refused.headers["content-type"].startswith("application/problem+json")
    filtered = await usage(http, admin, scope="organization", person=bob, group_by="repository")
    assert [(g["key"], g["turns"]) for g in filtered["groups"]] == [("github.com/team/project", 3)]


async def test_csv_and_problems(http: httpx.AsyncClient, settings: Settings) -> None:
    me = _headers(settings, f"c-{uuid.uuid4().hex[:8]}", None)
    await put(
        http,
        me,
        thread([turn(model="=HYPERLINK(1)", provider="x")], workspace_root="/w"),
    )
    answer = await http.get(
        "/api/usage", params={**WIDE, "group_by": "model", "format": "csv"}, headers=me
    )
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["loomsync-prices"].startswith("estimate at genai-prices")
    rows = list(csv.DictReader(io.StringIO(answer.text)))
    assert rows[0]["key"] == "'=HYPERLINK(1)"  # a formula is shown as text
    assert rows[0]["cost_usd"] == ""
    assert rows[0]["unpriced_turns"] == "1"
    empty = await usage(http, me, since="2026-12-01", until="2026-11-01")
    assert empty["groups"] == []
    assert empty["total"]["sessions"] == 0
    for params in ({"since": "2026-02-30"}, {"until": "yesterday"}, {"group_by": "color"}):
        bad = await http.get("/api/usage", params=params, headers=me)
        assert bad.status_code in (400, 422), params
        assert bad.headers["content-type"].startswith("application/problem+json")
    assert (await http.get("/api/usage")).status_code == 401


async def test_counts_too_large_or_malformed_are_not_recorded(
    http: httpx.AsyncClient, settings: Settings
) -> None:
    """A newcomer's finding: one message recording 1e20 tokens (or three counts of 4e18 that
    overflow when added) made PUT, then every usage view of the organization, answer 500. Such
    counts, negative ones and text are malformed: the message is counted without usage, never
    as a free turn, and nothing overflows."""
    org = f"o-{uuid.uuid4().hex[:8]}"
    me = _headers(settings, f"h-{uuid.uuid4().hex[:8]}", org)
    admin = _headers(settings, f"a-{uuid.uuid4().hex[:8]}", org, admin=True)
    huge = turn(input_tokens=10**20)
    overflowing = turn(
        input_tokens=4 * 10**18, output_tokens=4 * 10**18, cache_read_tokens=4 * 10**18
    )
    malformed = turn()
    malformed["usage"] = {"input_tokens": -5000, "output_tokens": "100", "model": "m"}
    fine = turn(input_tokens=10, output_tokens=5)
    await put(http, me, thread([huge, overflowing, malformed, fine], visibility="organization"))
    appended = await put(http, me, thread([fine], visibility="organization"))
    answer = await http.post(
        f"/api/threads/{appended}/messages",
        content=jsontext.dumps({"messages": [turn(input_tokens=9 * 10**18)]}),
        headers={**me, "Content-Type": "application/json", "If-Match": '"1"'},
    )
    assert answer.status_code in (200, 201), answer.text
    for headers, scope in ((me, "mine"), (admin, "organization")):
        total = (await usage(http, headers, scope=scope))["total"]
        # huge and overflowing keep their valid counts (output 100 / 5 …); the malformed
        # message and the appended one without a valid count are messages without usage
        assert total["turns"] == 4, total
        assert total["without_usage"] == 2, total
        assert total["input_tokens"] == 10 + 10 + 0 + 0, total
        assert total["tokens"] < 10**6, total
    page = await http.get("/api/usage", params={**WIDE, "format": "csv"}, headers=admin)
    assert page.status_code == 200


async def test_a_thread_dated_minus_infinity_in_the_backfill(
    http: httpx.AsyncClient, settings: Settings, database_url: str
) -> None:
    """A thread whose last activity is PostgreSQL's ``-infinity`` (asyncpg reads it as a
    naive year-1 time) and whose messages are undated: the backfill, which reads every
    thread, counts it on the first day there is instead of stopping (CI: 'year 0 is out of
    range', the naive time converted as local time)."""
    me = _headers(settings, f"d-{uuid.uuid4().hex[:8]}", None)
    undated = turn()
    del undated["created_at"]
    tid = await put(http, me, thread([undated]))
    engine = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(
                text("UPDATE threads SET last_activity_at = '-infinity' WHERE id = :id;"),
                {"id": ThreadId.parse(tid).uuid},
            )
            await conn.execute(
                text("DELETE FROM usage_daily WHERE thread_id = :id"),
                {"id": ThreadId.parse(tid).uuid},
            )
            await conn.run_sync(lambda c: backfill_sync(c, again=True))
    finally:
        await engine.dispose()
    days = by_key(await usage(http, me, since="0001-01-01", until="9999-12-31", group_by="day"))
    assert days["0001-01-01"]["turns"] == 1
