"""``loomsync mcp`` (issue 17 item 3) run as an MCP client runs it: a subprocess with a fresh
HOME, driven over stdio by the ``mcp`` SDK's own client (``stdio_client`` + ``ClientSession``).

The tool list and its schemas; a real Codex rollout imported with ``loomsync import`` and found
by one of its phrases, then read by a message range and a short id; a range longer than the
budget, cut with the call that reads on; malformed arguments refused as MCP tool errors while
the server goes on answering; credentials of an older client's file redacted in every answer;
and, against a real running server, hits from the server, and a refused token said in the
answer.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types import CallToolResult, TextContent

from loomsync import Thread
from tests.client.conftest import LOOMSYNC, LiveServer, Person, login
from tests.client.test_redaction import AWS_MARK, GH_MARK, holds_no_secret
from tests.client.test_secrets_cli import THREAD, write_raw

TRANSCRIPTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "transcripts"
#: A Codex rollout of 7 messages; message 6 quotes a README with "Multi-Provider Support".
ROLLOUT = (
    TRANSCRIPTS
    / "codex-rollout"
    / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
)

#: What list_threads answers when no thread is listed.
EMPTY = {"threads": [], "more": False, "truncated": None, "warnings": []}

Scenario = Callable[[ClientSession], Awaitable[None]]


@asynccontextmanager
async def connected(person: Person, errlog: TextIO) -> AsyncIterator[ClientSession]:
    """A session with ``loomsync mcp`` started in ``person``'s HOME (its stderr to ``errlog``)."""
    params = StdioServerParameters(
        command=str(LOOMSYNC), args=["mcp"], env=person.env, cwd=person.home
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=60) as session:
            await session.initialize()
            yield session


def drive(person: Person, scenario: Scenario) -> str:
    """Run ``scenario`` against a fresh ``loomsync mcp``; its stderr, which must hold no
    traceback."""
    log = person.home / "mcp-stderr.log"

    async def run() -> None:
        with log.open("w") as errlog:
            async with connected(person, errlog) as session:
                await scenario(session)

    anyio.run(run)
    err = log.read_text()
    assert "Traceback" not in err, err
    return err


def text_of(result: CallToolResult) -> str:
    """The text of a tool result's one content block."""
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def call(session: ClientSession, tool: str, **arguments: Any) -> CallToolResult:
    """A tool call that must succeed."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert not result.is_error, text_of(result)
    return result


async def refused(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """A tool call that must come back as an MCP tool error; its text."""
    result = await session.call_tool(tool, arguments)
    assert isinstance(result, CallToolResult)
    assert result.is_error, (tool, arguments, result)
    return text_of(result)


def imported(person: Person, source: Path) -> str:
    """Import ``source`` (a Codex rollout) as a person would; the new thread's id."""
    folder = person.home / "sessions"
    folder.mkdir(exist_ok=True)
    shutil.copy(source, folder)
    result = person("import", "codex", str(folder), "--json")
    assert result.code == 0, result.err
    [created] = json.loads(result.out)["created"]
    return str(created)


def note(title: str, *contents: str, **fields: object) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return Thread.model_validate(
        {"metadata": {"title": title}, "conversation": {"messages": messages}, **fields}
    )


def test_the_tools_are_listed_with_schemas_a_model_can_follow(person: Person) -> None:
    async def scenario(session: ClientSession) -> None:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert set(tools) == {"search_threads", "read_thread", "list_threads"}
        for tool in tools.values():
            assert len(tool.description or "") > 80, tool.name
            assert tool.input_schema["type"] == "object"
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description") or name == "syntax", (tool.name, name)
        search = tools["search_threads"].input_schema
        assert search["required"] == ["query"]
        assert (
            search["properties"]["limit"]["minimum"],
            search["properties"]["limit"]["maximum"],
        ) == (1, 100)
        assert search["properties"]["scope"]["enum"] == ["mine", "visible"]
        read = tools["read_thread"].input_schema
        assert read["required"] == ["id"]
        assert set(read["properties"]) == {"id", "from", "to", "max_chars"}
        assert read["properties"]["from"]["minimum"] == 0
        listing = tools["list_threads"].input_schema
        assert set(listing["properties"]) == {"limit", "workspace", "repo"}
        assert "required" not in listing
        assert tools["search_threads"].output_schema is not None  # hits come back structured

    drive(person, scenario)


def test_an_imported_rollout_is_found_by_its_phrase_and_read_by_range(person: Person) -> None:
    thread_id = imported(person, ROLLOUT)

    async def scenario(session: ClientSession) -> None:
        found = await call(session, "search_threads", query="multi-provider support bedrock")
        answer = found.structured_content
        assert answer is not None
        assert (answer["source"], answer["note"]) == ("local", "not logged in to a server")
        [hit] = answer["hits"]
        assert (hit["thread_id"], hit["message_index"], hit["origin"]) == (thread_id, 6, "local")
        assert "«Multi-Provider» «Support»" in hit["snippet"]
        assert "«Bedrock»" in hit["snippet"]
        assert "<b>" not in hit["snippet"]
        assert hit["branch"] == "codex"
        assert hit["workspace"].endswith("codemie-code")
        assert json.loads(text_of(found)) == answer  # the same answer as text for any client

        short = thread_id[2:10]  # T-dd0c9acd-… → dd0c9acd
        read = text_of(await call(session, "read_thread", id=short, **{"from": 1, "to": 4}))
        assert f"Thread: {thread_id}" in read
        assert "Messages: 7" in read
        shown = [int(i) for i in re.findall(r"^\[(\d+)\] ", read, re.MULTILINE)]
        assert shown == [1, 2, 3, 4]
        assert "[1] assistant" in read
        assert "[2] tool (shell)" in read
        assert '→ tool call: shell {"command":["bash","-lc","ls"]' in read
        assert "not shown" not in read  # the whole range fitted

        listed = (await call(session, "list_threads")).structured_content
        assert listed is not None
        assert [(t["thread_id"], t["message_count"]) for t in listed["threads"]] == [(thread_id, 7)]
        assert listed["more"] is False
        of_repo = await call(session, "list_threads", repo="codemie-ai/codemie-code")
        assert of_repo.structured_content == listed
        other = await call(session, "list_threads", repo="acme/elsewhere")
        assert other.structured_content == EMPTY

    drive(person, scenario)


def test_a_range_longer_than_the_budget_is_cut_and_says_how_to_read_on(person: Person) -> None:
    contents = [f"step {i}: " + "the wombat dug another tunnel " * 40 for i in range(12)]
    saved = person.agent().save(note("Tunnels", *contents))
    tid = str(saved.id)

    async def scenario(session: ClientSession) -> None:
        first = text_of(await call(session, "read_thread", id=tid, max_chars=5000))
        assert len(first) <= 5000
        shown = [int(i) for i in re.findall(r"^\[(\d+)\] ", first, re.MULTILINE)]
        assert shown == list(range(len(shown)))
        assert 1 <= len(shown) < 12
        following = shown[-1] + 1
        assert f'read on with read_thread(id="{tid}", from={following})' in first
        rest = text_of(
            await call(session, "read_thread", id=tid, max_chars=100_000, **{"from": following})
        )
        assert re.findall(r"^\[(\d+)\] ", rest, re.MULTILINE) == [
            str(i) for i in range(following, 12)
        ]
        assert "not shown" not in rest

        one = text_of(
            await call(session, "read_thread", id=tid, max_chars=1000, **{"from": 3, "to": 3})
        )
        assert len(one) <= 1000
        assert "more characters of message 3 not shown" in one
        assert f'read it alone with read_thread(id="{tid}", from=3, to=3, max_chars=100000)' in one
        past = text_of(await call(session, "read_thread", id=tid, **{"from": 40}))
        assert "This thread has 12 messages (0 to 11); from=40 is past the end." in past

    drive(person, scenario)


def test_malformed_arguments_are_mcp_errors_and_the_server_goes_on(person: Person) -> None:
    saved = person.agent().save(note("Kept", "a quokka smiled"))

    async def scenario(session: ClientSession) -> None:
        bad: list[tuple[str, dict[str, Any], str]] = [
            ("search_threads", {}, "query"),
            ("search_threads", {"query": 5}, "query"),
            ("search_threads", {"query": ["a"]}, "query"),
            ("search_threads", {"query": "quokka", "limit": 0}, "limit"),
            ("search_threads", {"query": "quokka", "limit": 10**6}, "limit"),
            ("search_threads", {"query": "quokka", "limit": "ten"}, "limit"),
            ("search_threads", {"query": "quokka", "scope": "everyone"}, "scope"),
            ("read_thread", {}, "id"),
            ("read_thread", {"id": 7}, "id"),
            ("read_thread", {"id": str(saved.id), "from": -1}, "from"),
            ("read_thread", {"id": str(saved.id), "max_chars": 10**9}, "max_chars"),
            ("list_threads", {"limit": 0}, "limit"),
            ("list_threads", {"limit": 10**6}, "limit"),
        ]
        for tool, arguments, field in bad:
            said = await refused(session, tool, arguments)
            assert field in said, (tool, arguments, said)
        backwards = await refused(session, "read_thread", {"id": str(saved.id), "from": 3, "to": 1})
        assert "to=1 is before from=3" in backwards
        unknown = await refused(
            session, "read_thread", {"id": "T-0000aaaa-0000-4000-8000-000000000000"}
        )
        assert "no thread T-0000aaaa-0000-4000-8000-000000000000 on this machine" in unknown
        assert "call list_threads or search_threads" in unknown
        for ref in ("beef", "not an id"):
            said = await refused(session, "read_thread", {"id": ref})
            assert "call list_threads or search_threads" in said, said
        assert "nothing to search for" in text_of(
            await call(session, "search_threads", query="the and of")
        )
        found = await call(session, "search_threads", query="quokka")  # still answering
        assert found.structured_content is not None
        assert [h["thread_id"] for h in found.structured_content["hits"]] == [str(saved.id)]

    drive(person, scenario)


def test_a_call_whose_params_break_the_protocol_is_a_json_rpc_error(person: Person) -> None:
    """Below the SDK's client, which would not send it: ``arguments`` that is not an object gets
    JSON-RPC's invalid params (-32602), an unknown tool a tool error, and the next call works."""
    server = subprocess.Popen(
        [str(LOOMSYNC), "mcp"],
        env=person.env,
        cwd=person.home,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None
    assert server.stdout is not None

    def ask(message: dict[str, Any]) -> dict[str, Any]:
        assert server.stdin is not None
        assert server.stdout is not None
        server.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        server.stdin.flush()
        if "id" not in message:
            return {}
        answer: dict[str, Any] = json.loads(server.stdout.readline())
        assert answer["id"] == message["id"]
        return answer

    try:
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        assert (
            ask({"id": 1, "method": "initialize", "params": hello})["result"]["serverInfo"]["name"]
            == "loomsync"
        )
        ask({"method": "notifications/initialized"})
        broken = {"name": "search_threads", "arguments": "quokka"}
        assert ask({"id": 2, "method": "tools/call", "params": broken})["error"]["code"] == -32602
        unknown = ask(
            {"id": 3, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}
        )
        assert unknown["result"]["isError"] is True
        listed = ask(
            {"id": 4, "method": "tools/call", "params": {"name": "list_threads", "arguments": {}}}
        )
        assert listed["result"]["structuredContent"] == EMPTY
    finally:
        server.stdin.close()
        err = server.stderr.read() if server.stderr else ""
        assert server.wait(timeout=30) == 0
    assert "Traceback" not in err, err


def test_an_older_clients_credentials_are_redacted_in_every_answer(person: Person) -> None:
    write_raw(person)  # a file written unredacted, as an older client did

    async def scenario(session: ClientSession) -> None:
        answers = [
            text_of(await call(session, "read_thread", id=THREAD)),
            text_of(await call(session, "search_threads", query="deploy")),
            text_of(await call(session, "search_threads", query="key")),
            text_of(await call(session, "list_threads")),
        ]
        for answer in answers:
            assert holds_no_secret(answer), answer
        assert AWS_MARK in answers[0]
        assert GH_MARK in answers[0]
        assert THREAD in answers[1]
        assert THREAD in answers[3]

    drive(person, scenario)


def test_online_the_search_returns_the_servers_hits(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert login(person, live_server, account).code == 0
    agent = person.agent()
    here = agent.save(note("Here", "the pangolin rolled into a ball", workspace_root="/w/here"))
    there = agent.save(note("There", "a pangolin walked by", workspace_root="/w/there"))
    assert person("sync").code == 0
    before = len(live_server.requests())

    async def scenario(session: ClientSession) -> None:
        answer = (await call(session, "search_threads", query="pangolin")).structured_content
        assert answer is not None
        assert (answer["source"], answer["note"]) == ("server", None)
        assert {h["thread_id"]: h["origin"] for h in answer["hits"]} == {
            str(here.id): "server",
            str(there.id): "server",
        }
        scoped = await call(session, "search_threads", query="pangolin", workspace="/w/there")
        assert scoped.structured_content is not None
        assert [h["thread_id"] for h in scoped.structured_content["hits"]] == [str(there.id)]
        visible = await call(session, "search_threads", query="pangolin", scope="visible")
        assert visible.structured_content is not None
        assert visible.structured_content["source"] == "server"

    drive(person, scenario)
    searches = [r for r in live_server.requests()[before:] if "/api/threads/search" in r]
    assert len(searches) == 3


def test_a_refused_token_is_said_in_the_answer_and_this_machine_searched(
    person: Person, live_server: LiveServer
) -> None:
    result = person("login", "--server", live_server.url, "--token", "not-a-token", "--no-verify")
    assert result.code == 0, result.err
    kept = person.agent().save(note("Kept", "the axolotl regrew a leg"))

    async def scenario(session: ClientSession) -> None:
        answer = (await call(session, "search_threads", query="axolotl")).structured_content
        assert answer is not None
        assert answer["source"] == "local"
        assert answer["note"] == (
            "the server refused the token (The bearer token is malformed): "
            f"run `loomsync login --server {live_server.url} --token TOKEN` with a new token"
        ), answer["note"]
        assert [h["thread_id"] for h in answer["hits"]] == [str(kept.id)]

    drive(person, scenario)
