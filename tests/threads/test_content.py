"""Content round-trips exactly (API.md section 2, "Round-trip guarantee").

Bodies are sent as raw JSON text built with ``json.dumps(..., ensure_ascii=True)``, so lone
surrogates travel as ``\\udXXX`` escapes, exactly as a real client writes them. Documents are
compared as canonical JSON (sorted keys, ASCII escapes), which tells ``-0.0`` from ``0.0``,
``1`` from ``1.0`` and ``True`` from ``1``: values must come back unchanged, not merely equal.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomsync.core.document.ids import ThreadId

#: Set by the server on every write, or added on output (API.md section 2).
SERVER_SET = ("version", "updated_at", "owner_id", "org_id", "archived_at", "message_count")
#: Thread timestamps, normalised to UTC ``Z`` on output.
THREAD_TIMESTAMPS = ("created_at", "last_activity_at")

TRICKY_TEXTS = [
    "nul \x00 in the middle, \x00\x00 twice, and at the end \x00",
    "lone high \ud800, lone low \udfff, reversed pair \udc00\ud800",
    "emoji 😀👩‍💻🏳️‍🌈 and a flag 🇫🇷",
    "CJK 漢字かなカナ 한국어 中文",
    "Arabic مرحبا بالعالم and Hebrew שלום עולם mixed RTL\u200f",
    "combining: e\u0301 a\u0308 n\u0303 Z\u0351\u0354\u036b",
]


def full_thread(messages: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A document naming every field of API.md section 2, so no server default is filled in."""
    doc: dict[str, Any] = {
        "id": ThreadId.new(),
        "version": 0,
        "created_at": "2026-01-02T16:39:45.349Z",
        "last_activity_at": "2026-01-02T16:40:00Z",
        "workspace_root": "/home/dev/project",
        "cwd": "/home/dev/project/src",
        "loom_version": "0.1.0",
        "git_branch": "main",
        "git_remote_url": "git@github.com:dev/project.git",
        "git_initial_branch": "main",
        "git_initial_commit_sha": "02942347cadda24d3080fbfbc2d13295bb3a496d",
        "git_current_commit_sha": "02942347cadda24d3080fbfbc2d13295bb3a496d",
        "git_commits": ["02942347cadda24d3080fbfbc2d13295bb3a496d"],
        "git_start_dirty": False,
        "git_end_dirty": None,
        "provider": "anthropic",
        "model": "claude",
        "conversation": {"messages": messages},
        "agent_state": {
            "kind": "waiting_for_user_input",
            "retries": 0,
            "last_error": None,
            "pending_tool_calls": [],
        },
        "metadata": {"title": "round trip", "tags": ["test"], "is_pinned": False, "extra": {}},
        "is_private": False,
        "visibility": "private",
        "is_shared_with_support": False,
    }
    doc.update(fields)
    return doc


def canonical(value: Any) -> str:
    """JSON text that differs whenever two JSON values differ (key order aside)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=True)


def instant(text: str) -> datetime:
    """The instant an RFC 3339 string names; no offset means UTC (API.md section 2)."""
    value = datetime.fromisoformat(text)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without server-set fields, thread timestamps as UTC instants."""
    doc = copy.deepcopy(doc)
    for key in SERVER_SET:
        doc.pop(key, None)
    for key in THREAD_TIMESTAMPS:
        if doc.get(key) is not None:
            doc[key] = instant(doc[key]).isoformat()
    return doc


def assert_round_trip(sent: dict[str, Any], got: dict[str, Any]) -> None:
    """GET returned ``sent`` with only the changes API.md section 2 allows."""
    for key in THREAD_TIMESTAMPS:
        if sent.get(key) is not None:
            assert got[key].endswith("Z"), got[key]
    assert canonical(comparable(got)) == canonical(comparable(sent))


async def put_raw(
    client: httpx.AsyncClient, headers: dict[str, str], doc: dict[str, Any]
) -> httpx.Response:
    """PUT ``doc`` as ASCII-escaped JSON text (lone surrogates as ``\\udXXX``)."""
    body = json.dumps(doc, ensure_ascii=True).encode("ascii")
    return await client.put(
        f"/api/threads/{doc['id']}",
        content=body,
        headers={**headers, "Content-Type": "application/json"},
    )


async def store_and_read(
    client: httpx.AsyncClient, headers: dict[str, str], doc: dict[str, Any]
) -> dict[str, Any]:
    """PUT a new thread, then GET it back."""
    put = await put_raw(client, headers, doc)
    assert put.status_code == 201, put.text
    got = await client.get(f"/api/threads/{doc['id']}", headers=headers)
    assert got.status_code == 200, got.text
    result: dict[str, Any] = got.json()
    return result


def user_message(content: str, **fields: Any) -> dict[str, Any]:
    return {"role": "user", "content": content, **fields}


async def test_nul_characters_in_content_round_trip(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    doc = full_thread([user_message("\x00"), user_message("a\x00b\x00\x00c" * 1000)])
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert got["conversation"]["messages"][1]["content"] == "a\x00b\x00\x00c" * 1000
    assert_round_trip(doc, got)


async def test_lone_surrogate_escapes_in_content_round_trip(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    content = r"high \ud800 low \udfff reversed \udc00\ud800 pair \ud83d\ude00"
    message = f'{{"role": "tool", "content": "{content}"}}'
    raw = f'{{"id": "{tid}", "conversation": {{"messages": [{message}]}}}}'
    put = await client.put(
        f"/api/threads/{tid}",
        content=raw.encode("ascii"),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert put.status_code == 201, put.text
    got = await client.get(f"/api/threads/{tid}", headers=headers)
    assert got.status_code == 200, got.text
    content = got.json()["conversation"]["messages"][0]["content"]
    assert content == "high \ud800 low \udfff reversed \udc00\ud800 pair 😀"


async def test_every_language_and_emoji_round_trip(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    doc = full_thread([user_message(text) for text in TRICKY_TEXTS])
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert [m["content"] for m in got["conversation"]["messages"]] == TRICKY_TEXTS
    assert_round_trip(doc, got)


async def test_tricky_text_outside_messages_round_trips(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    doc = full_thread([user_message("hi")], future_field=TRICKY_TEXTS)
    doc["metadata"]["title"] = TRICKY_TEXTS[0] + TRICKY_TEXTS[1]
    doc["metadata"]["tags"] = TRICKY_TEXTS
    doc["metadata"]["extra"] = {text: text for text in TRICKY_TEXTS}
    doc["agent_state"]["last_error"] = TRICKY_TEXTS[1]
    doc["cwd"] = "/tmp/\x00/\ud800/שלום"
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert_round_trip(doc, got)


async def test_unknown_fields_at_every_level_are_kept(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    message = {
        "role": "assistant",
        "content": "calling a tool",
        "tool_calls": [
            {
                "id": "call-1",
                "tool_name": "bash",
                "arguments_json": {"cmd": "ls", "nested": {"deep": [1, {"x": None}]}},
                "x_call_field": {"kept": True},
            }
        ],
        "x_message_field": ["kept", 1, None],
        "thinking": {"signature": "abc", "blocks": [{"type": "text", "text": "hm"}]},
    }
    doc = full_thread([message, user_message("ok", x_other=0)], x_top_field={"a": [1, 2]})
    doc["conversation"]["x_conversation_field"] = "kept"
    doc["metadata"]["x_metadata_field"] = {"k": "v"}
    doc["metadata"]["extra"] = {"anything": {"goes": ["here", 1.5, False]}, "empty": {}}
    doc["agent_state"]["x_state_field"] = [None]
    doc["agent_state"]["kind"] = "some_future_kind"
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert got["x_top_field"] == {"a": [1, 2]}
    assert got["conversation"]["x_conversation_field"] == "kept"
    assert got["conversation"]["messages"][0]["tool_calls"][0]["x_call_field"] == {"kept": True}
    assert got["agent_state"]["kind"] == "some_future_kind"
    assert_round_trip(doc, got)


async def test_json_number_values_are_unchanged(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    numbers = [2**70, -(2**70), 0.1, 1e-7, -0.0, 1.5e300, 5e-324, 1.0, 0, -1, 2**53 + 1]
    message = {
        "role": "assistant",
        "content": "numbers",
        "usage": numbers,
        "tool_calls": [{"id": "c", "tool_name": "t", "arguments_json": {"n": numbers}}],
    }
    doc = full_thread([message], x_numbers=numbers)
    doc["metadata"]["extra"] = {"numbers": numbers, "big": 2**70, "neg_zero": -0.0}
    doc["agent_state"]["x_numbers"] = numbers
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert canonical(got["metadata"]["extra"]["numbers"]) == canonical(numbers)
    assert canonical(got["conversation"]["messages"][0]["usage"]) == canonical(numbers)
    assert_round_trip(doc, got)


async def test_thread_timestamps_are_normalised_to_utc_z(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    doc = full_thread(
        [user_message("hi")],
        created_at="2026-01-02T18:39:45.349+02:00",
        last_activity_at="2026-01-02T10:00:00-05:30",
    )
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert got["created_at"] == "2026-01-02T16:39:45.349Z"
    assert got["last_activity_at"] == "2026-01-02T15:30:00Z"
    assert got["updated_at"].endswith("Z")


async def test_thread_timestamp_without_offset_is_read_as_utc(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    doc = full_thread([user_message("hi")], created_at="2026-01-02T18:39:45.349")
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert got["created_at"] == "2026-01-02T18:39:45.349Z"


async def test_message_timestamps_are_kept_as_sent(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    stamps = ["2026-01-02T18:39:45.349+02:00", "2026-01-02T16:39:45Z", "2026-01-02T16:39:45.1"]
    doc = full_thread([user_message(str(i), created_at=s) for i, s in enumerate(stamps)])
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert [m["created_at"] for m in got["conversation"]["messages"]] == stamps


async def test_replacing_tricky_messages_reads_back_the_new_ones(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("alice"))
    doc = full_thread([user_message(text) for text in TRICKY_TEXTS])
    assert (await put_raw(client, headers, doc)).status_code == 201
    messages = doc["conversation"]["messages"]
    messages[2] = user_message("changed \x00 \udfff")
    messages.append(user_message("appended \ud800"))
    doc["version"] = 1
    replaced = await put_raw(client, headers, doc)
    assert replaced.status_code == 200, replaced.text
    got = await client.get(f"/api/threads/{doc['id']}", headers=headers)
    assert got.json()["version"] == 2
    assert_round_trip(doc, got.json())


async def test_append_keeps_tricky_messages_and_agent_state(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("alice"))
    doc = full_thread([user_message("first")])
    assert (await put_raw(client, headers, doc)).status_code == 201
    state = {"kind": "executing_tools", "retries": 2**70, "x_new": {"\udc00k": ["\x00", -0.0]}}
    appended = [user_message(text) for text in TRICKY_TEXTS]
    body = json.dumps({"messages": appended, "agent_state": state}, ensure_ascii=True)
    r = await client.post(
        f"/api/threads/{doc['id']}/messages",
        content=body.encode("ascii"),
        headers={**headers, "Content-Type": "application/json", "If-Match": '"1"'},
    )
    assert r.status_code == 200, r.text
    got = (await client.get(f"/api/threads/{doc['id']}", headers=headers)).json()
    assert canonical(got["conversation"]["messages"][1:]) == canonical(appended)
    assert canonical({k: got["agent_state"][k] for k in state}) == canonical(state)


async def test_patch_keeps_tricky_metadata_extra(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("alice"))
    doc = full_thread([user_message("first")])
    assert (await put_raw(client, headers, doc)).status_code == 201
    extra = {"\ud800": {"\udc00k": "\x00v", "n": [2**70, 1e-7, -0.0]}, "t": TRICKY_TEXTS}
    body = json.dumps({"metadata": {"extra": extra}}, ensure_ascii=True)
    r = await client.patch(
        f"/api/threads/{doc['id']}",
        content=body.encode("ascii"),
        headers={**headers, "Content-Type": "application/merge-patch+json"},
    )
    assert r.status_code == 200, r.text
    got = (await client.get(f"/api/threads/{doc['id']}", headers=headers)).json()
    assert canonical(got["metadata"]["extra"]) == canonical(extra)


async def test_conflict_returns_tricky_content_exactly(
    client: httpx.AsyncClient, auth: Callable[..., dict[str, str]], new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("alice"))
    doc = full_thread([user_message(text) for text in TRICKY_TEXTS])
    doc["metadata"]["extra"] = {"\udc00": "\ud800\x00"}
    assert (await put_raw(client, headers, doc)).status_code == 201
    conflict = await put_raw(client, headers, doc)
    assert conflict.status_code == 409, conflict.text
    assert conflict.json()["server_version"] == 1
    assert_round_trip(doc, conflict.json()["current"])


# Property: any message text and any JSON in metadata.extra round-trip exactly.

_CHARS = st.one_of(
    st.characters(exclude_categories=()),
    st.characters(categories=["Cs"]),
    st.just("\x00"),
)
_TEXT = st.text(_CHARS, max_size=200)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(_TEXT, children, max_size=5),
    max_leaves=25,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(texts=st.lists(_TEXT, min_size=1, max_size=5), extra=st.dictionaries(_TEXT, _JSON))
async def test_any_message_text_and_extra_json_round_trip(
    client: httpx.AsyncClient,
    auth: Callable[..., dict[str, str]],
    new_user: Callable[[str], str],
    texts: list[str],
    extra: dict[str, Any],
) -> None:
    doc = full_thread([user_message(text) for text in texts])
    doc["metadata"]["extra"] = extra
    got = await store_and_read(client, auth(new_user("alice")), doc)
    assert [m["content"] for m in got["conversation"]["messages"]] == texts
    assert canonical(got["metadata"]["extra"]) == canonical(extra)
    assert_round_trip(doc, got)
