"""Search snippets come from the indexed text that matched (issue 14, "Snippets miss the match")."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from app.threads.snippets import snippets
from loomsync.core.document.ids import ThreadId
from loomsync.core.textsearch.query import parse
from tests.conftest import TokenFactory
from tests.threads.test_search import put, search, word


@pytest.fixture
def me(auth: TokenFactory, new_user, new_org) -> dict[str, str]:
    return auth(new_user("snippets"), org=new_org("acme"))


async def test_match_in_tool_call_arguments_gets_a_tool_text_snippet(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    message = {
        "role": "assistant",
        "content": "Let me look at the file.",
        "tool_calls": [
            {"id": "c1", "tool_name": "Bash", "arguments_json": {"command": f"grep {w}"}}
        ],
    }
    await put(client, me, conversation={"messages": [message]})
    hit = (await search(client, me, w))[0]
    assert hit["message_index"] == 0
    assert f"<b>{w}</b>" in hit["snippet"]


async def test_match_in_indexed_tail_of_a_long_message_is_marked(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    content = "ordinary output line\n" * 20_000 + f"Traceback: {w} failed"
    await put(client, me, conversation={"messages": [{"role": "tool", "content": content}]})
    hit = (await search(client, me, w))[0]
    assert hit["message_index"] == 0
    assert f"<b>{w}</b>" in hit["snippet"]


async def test_snippet_marks_text_spelled_in_another_unicode_form(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    await put(
        client,
        me,
        conversation={"messages": [{"role": "user", "content": f"{w} cafe\u0301 pass\u00adword"}]},
    )
    hit = (await search(client, me, f"{w} café password"))[0]
    assert "<b>café</b>" in hit["snippet"]
    assert "<b>password</b>" in hit["snippet"]


async def test_title_hit_without_message_gets_title_snippet(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    await put(client, me, metadata={"title": f"Notes on {w}Parser"}, conversation={"messages": []})
    hit = (await search(client, me, f"{w}Parser"))[0]
    assert hit["message_index"] is None
    assert hit["snippet"] == f"Notes on <b>{w}Parser</b>"


async def test_snippets_past_their_budget_are_null_and_leave_the_transaction_usable(
    app: FastAPI, client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """A statement past the snippet budget is cancelled (its savepoint rolled back): the hit
    keeps its message index, its snippet is null (API.md section 6), and the search's
    transaction still answers."""
    w = word()
    tid = await put(
        client,
        me,
        conversation={"messages": [{"role": "user", "content": f"{w} body"}]},
    )
    thread = ThreadId.parse(tid).uuid
    async with app.state.sessionmaker() as locker, app.state.sessionmaker() as session:
        # the head cannot be read while another transaction holds the table: a sure timeout
        await locker.execute(text("LOCK TABLE thread_messages IN ACCESS EXCLUSIVE MODE"))
        found = await snippets(session, parse(w), [(thread, None, 0)], budget_ms=300)
        assert found == {thread: (0, None)}
        assert (await session.execute(text("SELECT 1"))).scalar() == 1
