"""Whole-thread reads (app/threads/reads.py): messages read as bytes in runs of seqs, spliced into
exactly the bytes a write returns, all from one snapshot of the thread."""

from __future__ import annotations

import json

import httpx
from fastapi import FastAPI

from app.threads.reads import RUN_MESSAGES, begin_snapshot, load_row, message_runs, render_row
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory

TEXTS = ["plain", "emoji 😀👩‍💻", "nul \x00 inside", "lone \ud800 surrogate", "CJK 漢字", ""]


def _messages(count: int, first: int = 0) -> list[dict[str, object]]:
    return [
        {"role": "user", "content": f"{n}: {TEXTS[n % len(TEXTS)]}"}
        for n in range(first, first + count)
    ]


async def _send(
    client: httpx.AsyncClient, method: str, url: str, value: object, headers: dict[str, str]
) -> httpx.Response:
    """Send ``value`` as ASCII-escaped JSON text (lone surrogates as ``\\udXXX`` escapes)."""
    body = json.dumps(value).encode("ascii")
    headers = {**headers, "Content-Type": "application/json"}
    return await client.request(method, url, content=body, headers=headers)


async def test_thread_of_several_runs_reads_back_whole_in_order(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("reader"))
    tid = ThreadId.new()
    messages = _messages(2 * RUN_MESSAGES + 3)
    doc = {"id": tid, "conversation": {"messages": messages, "x_kept": [1]}}
    put = await _send(client, "PUT", f"/api/threads/{tid}", doc, headers)
    assert put.status_code == 201, put.text

    got = await client.get(f"/api/threads/{tid}", headers=headers)

    assert got.status_code == 200
    assert got.headers["content-length"] == str(len(got.content))
    assert got.headers["content-type"] == "application/json"
    assert got.headers["etag"] == '"1"'
    assert got.content == put.content
    body = got.json()
    assert body["conversation"]["messages"] == messages
    assert body["conversation"]["x_kept"] == [1]
    assert body["message_count"] == len(messages)


async def test_thread_without_messages_reads_back_empty_list(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("reader"))
    tid = ThreadId.new()
    put = await _send(client, "PUT", f"/api/threads/{tid}", {"id": tid}, headers)
    assert put.status_code == 201, put.text

    got = await client.get(f"/api/threads/{tid}", headers=headers)

    assert got.headers["content-length"] == str(len(got.content))
    assert got.content == put.content
    assert got.json()["conversation"]["messages"] == []


async def test_appends_across_a_run_boundary_read_back_in_order(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("reader"))
    tid = ThreadId.new()
    first = _messages(RUN_MESSAGES - 1)
    doc = {"id": tid, "conversation": {"messages": first}}
    assert (await _send(client, "PUT", f"/api/threads/{tid}", doc, headers)).status_code == 201
    more = _messages(3, first=len(first))
    append = await _send(
        client,
        "POST",
        f"/api/threads/{tid}/messages",
        {"messages": more},
        {**headers, "If-Match": '"1"'},
    )
    assert append.status_code == 200, append.text

    got = (await client.get(f"/api/threads/{tid}", headers=headers)).json()

    assert got["conversation"]["messages"] == first + more


async def test_read_sees_one_snapshot_while_a_write_commits_between_its_statements(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("reader"))
    tid = ThreadId.new()
    first = _messages(RUN_MESSAGES + 1)
    doc = {"id": tid, "conversation": {"messages": first}}
    assert (await _send(client, "PUT", f"/api/threads/{tid}", doc, headers)).status_code == 201

    async with app.state.sessionmaker() as session:
        await begin_snapshot(session)
        row = await load_row(session, tid.uuid)
        assert row is not None
        append = await _send(  # commits while the read is between its statements
            client,
            "POST",
            f"/api/threads/{tid}/messages",
            {"messages": _messages(RUN_MESSAGES)},
            {**headers, "If-Match": '"1"'},
        )
        assert append.status_code == 200, append.text
        runs = await message_runs(session, tid.uuid, 2 * RUN_MESSAGES + 1)
        old = await render_row(session, row)

    assert b",".join(runs).count(b'"role":"user"') == len(first)
    assert (await client.get(f"/api/threads/{tid}", headers=headers)).json()["version"] == 2
    read = json.loads(old)
    assert read["version"] == 1
    assert read["conversation"]["messages"] == first


async def test_a_replace_answers_exactly_what_a_get_then_reads(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("replacer"))
    tid = ThreadId.new()
    first = {"id": tid, "metadata": {"title": "t"}, "conversation": {"messages": _messages(5)}}
    assert (await _send(client, "PUT", f"/api/threads/{tid}", first, headers)).status_code == 201
    archive = {**headers, "If-Match": '"1"'}
    assert (
        await _send(client, "PATCH", f"/api/threads/{tid}", {"archived": True}, archive)
    ).status_code == 200
    kept = _messages(3)
    kept[1] = {"role": "assistant", "content": "changed 😀 \x00", "tool_calls": None}
    second = {"id": tid, "metadata": {"title": "u"}, "conversation": {"messages": kept}}

    put = await _send(client, "PUT", f"/api/threads/{tid}", second, {**headers, "If-Match": '"2"'})
    got = await client.get(f"/api/threads/{tid}", headers=headers)

    assert put.status_code == 200, put.text
    assert got.content == put.content
    assert got.json()["archived_at"] is not None
    assert got.json()["conversation"]["messages"] == kept
