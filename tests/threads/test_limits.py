"""Malformed input and limits (API.md sections 7 and 8): every refusal is a 4xx problem, never a
500; 422s list at most 20 errors and never echo the input; big threads store, read back and
accept appends."""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from app.main import create_app
from loomsync.core.document.ids import ThreadId

Auth = Callable[..., dict[str, str]]
NewUser = Callable[[str], str]

SECRET = "SECRET-XYZ-123"
JSON_HEADERS = {"Content-Type": "application/json"}
SMALL_BODY_LIMIT = 1000
SMALL_MESSAGE_LIMIT = 3


@pytest.fixture(scope="module")
async def limited_app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The app with a 1000-byte body limit and at most 3 messages a thread."""
    limits = {"max_body_bytes": SMALL_BODY_LIMIT, "max_messages": SMALL_MESSAGE_LIMIT}
    application = create_app(settings.model_copy(update=limits))
    yield application
    await application.state.engine.dispose()


@pytest.fixture
async def limited_client(limited_app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=limited_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


def assert_problem(response: httpx.Response, status: int | None = None) -> dict[str, Any]:
    """``response`` is an RFC 9457 problem (4xx unless ``status`` says which)."""
    if status is None:
        assert 400 <= response.status_code < 500, response.text
    else:
        assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: dict[str, Any] = response.json()
    assert {"type", "title", "status", "detail", "code"} <= body.keys()
    assert body["status"] == response.status_code
    return body


async def put_text(
    client: httpx.AsyncClient, headers: dict[str, str], tid: str, text: str | bytes
) -> httpx.Response:
    content = text.encode() if isinstance(text, str) else text
    return await client.put(
        f"/api/threads/{tid}", content=content, headers={**headers, **JSON_HEADERS}
    )


def user(content: str) -> dict[str, Any]:
    return {"role": "user", "content": content}


# Malformed JSON and bodies of the wrong shape.


@pytest.mark.parametrize(
    "text", [b'{"id": ', b"{'a': 1}", b'{"a": 1,}', b'{"a": "\xff\xfe"}', b"", b"{}{}"]
)
async def test_invalid_json_is_400_problem(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, text: bytes
) -> None:
    response = await put_text(client, auth(new_user("alice")), ThreadId.new(), text)
    body = assert_problem(response, 400)
    assert body["code"] == "invalid_request"


@pytest.mark.parametrize("text", ["[]", '[{"role": "user"}]', '"a thread"', "42", "null"])
async def test_body_that_is_not_an_object_is_4xx_problem(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, text: str
) -> None:
    response = await put_text(client, auth(new_user("alice")), ThreadId.new(), text)
    assert_problem(response)


# 1e400 is valid JSON (RFC 8259 sets no range) and is kept as written: tests/threads/test_numbers.py
@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
async def test_non_finite_numbers_are_400(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, token: str
) -> None:
    tid = ThreadId.new()
    text = f'{{"id": "{tid}", "metadata": {{"extra": {{"n": {token}}}}}}}'
    response = await put_text(client, auth(new_user("alice")), tid, text)
    assert_problem(response, 400)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("git_commits", "abc"),
        ("visibility", "secret"),
        ("version", -1),
        ("conversation", {"messages": [{"role": "robot", "content": "hi"}]}),
        ("conversation", {"messages": [{"role": "user", "content": 5}]}),
        ("metadata", {"tags": "not-a-list"}),
        ("is_private", True),
    ],
)
async def test_wrong_types_are_422_with_errors(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, field: str, value: Any
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", json={"id": tid, field: value}, headers=headers
    )
    body = assert_problem(response, 422)
    assert body["code"] == "validation_error"
    assert body["errors"], body
    for error in body["errors"]:
        assert set(error) == {"loc", "msg"}
        assert isinstance(error["loc"], list)
        assert isinstance(error["msg"], str)
    assert (await client.get(f"/api/threads/{tid}", headers=headers)).status_code == 404


async def test_many_invalid_messages_list_at_most_20_errors(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    tid = ThreadId.new()
    messages = [{"role": "robot", "content": i} for i in range(500)]
    doc = {"id": tid, "conversation": {"messages": messages}}
    response = await client.put(f"/api/threads/{tid}", json=doc, headers=auth(new_user("alice")))
    body = assert_problem(response, 422)
    assert 1 <= len(body["errors"]) <= 20


@pytest.mark.parametrize(
    "fields",
    [
        {"visibility": SECRET},
        {"git_commits": SECRET},
        {"version": SECRET},
        {"created_at": SECRET},
        {"conversation": {"messages": [{"role": SECRET, "content": SECRET}]}},
        {"conversation": {"messages": [{"role": "user", "content": {"k": SECRET}}]}},
        {"metadata": {"tags": [{"k": SECRET}], "extra": SECRET}},
        {"id": f"T-{SECRET}"},
    ],
)
async def test_422_never_echoes_the_input(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, fields: dict[str, Any]
) -> None:
    tid = ThreadId.new()
    doc = {"id": tid, **fields}
    response = await client.put(f"/api/threads/{tid}", json=doc, headers=auth(new_user("alice")))
    assert_problem(response, 422)
    assert SECRET not in response.text


async def test_append_422_never_echoes_the_input(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    assert (await client.put(f"/api/threads/{tid}", json={}, headers=headers)).status_code == 201
    body = {"messages": [{"role": SECRET, "content": [SECRET]}], "git_commits": SECRET}
    response = await client.post(
        f"/api/threads/{tid}/messages", json=body, headers={**headers, "If-Match": '"1"'}
    )
    assert_problem(response, 422)
    assert SECRET not in response.text


# Ids in the URL and in the body.


@pytest.mark.parametrize(
    "bad_id",
    [
        "T-notauuid",
        "T-" + "019B7F94-51B4-7593-922E-BA12B5B73B52",
        "019b7f94-51b4-7593-922e-ba12b5b73b52",
        "T-019b7f9451b47593922eba12b5b73b52",
        "t-019b7f94-51b4-7593-922e-ba12b5b73b52",
    ],
)
async def test_bad_thread_id_in_url_is_4xx_problem(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, bad_id: str
) -> None:
    headers = auth(new_user("alice"))
    assert_problem(await client.get(f"/api/threads/{bad_id}", headers=headers))
    assert_problem(await client.put(f"/api/threads/{bad_id}", json={}, headers=headers))


async def test_id_in_body_different_from_url_is_422(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    url_id, body_id = ThreadId.new(), ThreadId.new()
    response = await client.put(f"/api/threads/{url_id}", json={"id": body_id}, headers=headers)
    body = assert_problem(response, 422)
    assert body["errors"][0]["loc"] == ["body", "id"]
    assert (await client.get(f"/api/threads/{url_id}", headers=headers)).status_code == 404
    assert (await client.get(f"/api/threads/{body_id}", headers=headers)).status_code == 404


# Deep nesting.


@pytest.mark.parametrize("depth", [2_000, 100_000])
async def test_deeply_nested_json_is_never_a_500(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser, depth: int
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    deep = "[" * depth + "]" * depth
    text = f'{{"id": "{tid}", "metadata": {{"extra": {{"deep": {deep}}}}}}}'
    response = await put_text(client, headers, tid, text)
    if response.status_code == 201:
        got = await client.get(f"/api/threads/{tid}", headers=headers)
        assert got.status_code == 200
        assert json.dumps(got.json()["metadata"]["extra"]["deep"]) == deep
    else:
        assert_problem(response)


@pytest.mark.parametrize(
    ("scan", "depths"),
    [
        ("off", range(850, 1001, 3)),  # the parser's and serialiser's limits
        ("redact", range(300, 1001, 7)),  # the detector's walk gives up first (400 as well)
    ],
)
async def test_nesting_near_the_parser_limit_is_never_a_500(
    settings: Settings, auth: Auth, new_user: NewUser, scan: str, depths: range
) -> None:
    """Around the depth where parsing stops working, a body may parse and yet be too deep to
    serialise again: that must be a 4xx as well. With the secret scan on (the default), the
    depth the detector can walk comes first: a 400 too."""
    headers = auth(new_user("alice"))
    outcomes = set()
    app = create_app(settings.model_copy(update={"secret_scan": scan}))
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            for depth in depths:
                deep = "[" * depth + "]" * depth
                for text in (
                    f'{{"metadata": {{"extra": {{"deep": {deep}}}}}}}',
                    f'{{"conversation": {{"messages": [{{"role": "user", "x": {deep}}}]}}}}',
                ):
                    response = await put_text(client, headers, ThreadId.new(), text)
                    if response.status_code != 201:
                        assert_problem(response, 400)
                    outcomes.add(response.status_code)
    finally:
        await app.state.engine.dispose()
    assert outcomes == {201, 400}


# Body size and message count.


async def test_body_over_limit_is_413_problem(
    limited_client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    tid = ThreadId.new()
    doc = {"id": tid, "conversation": {"messages": [user("x" * SMALL_BODY_LIMIT)]}}
    response = await limited_client.put(
        f"/api/threads/{tid}", json=doc, headers=auth(new_user("alice"))
    )
    body = assert_problem(response, 413)
    assert body["code"] == "payload_too_large"


async def test_chunked_body_over_limit_is_413_problem(
    limited_client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    sent = 0

    async def chunks() -> AsyncIterator[bytes]:
        nonlocal sent
        yield b'{"conversation": {"messages": [{"role": "user", "content": "'
        for _ in range(1_000):
            sent += 1
            yield b"x" * 100
        yield b'"}]}}'

    response = await limited_client.put(
        f"/api/threads/{tid}", content=chunks(), headers={**headers, **JSON_HEADERS}
    )
    assert "content-length" not in response.request.headers
    assert_problem(response, 413)
    assert sent < 1_000, "the whole body was read before answering 413"
    assert (await limited_client.get(f"/api/threads/{tid}", headers=headers)).status_code == 404


async def test_body_under_limit_is_stored_by_limited_app(
    limited_client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    response = await limited_client.put(
        f"/api/threads/{tid}", json={"conversation": {"messages": [user("hi")]}}, headers=headers
    )
    assert response.status_code == 201, response.text


async def test_too_many_messages_is_413_and_stores_nothing(
    limited_client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    messages = [user(str(i)) for i in range(SMALL_MESSAGE_LIMIT + 1)]
    response = await limited_client.put(
        f"/api/threads/{tid}", json={"conversation": {"messages": messages}}, headers=headers
    )
    assert_problem(response, 413)
    assert (await limited_client.get(f"/api/threads/{tid}", headers=headers)).status_code == 404


async def test_append_past_message_limit_is_413_and_stores_nothing(
    limited_client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    stored = [user(str(i)) for i in range(SMALL_MESSAGE_LIMIT)]
    doc = {"conversation": {"messages": stored}}
    assert (await limited_client.put(f"/api/threads/{tid}", json=doc, headers=headers)).is_success
    response = await limited_client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [user("one too many")]},
        headers={**headers, "If-Match": '"1"'},
    )
    assert_problem(response, 413)
    got = (await limited_client.get(f"/api/threads/{tid}", headers=headers)).json()
    assert (got["version"], got["message_count"]) == (1, SMALL_MESSAGE_LIMIT)
    assert got["conversation"]["messages"] == stored


# Big threads and appends.


async def assert_stores_reads_back_and_appends(
    client: httpx.AsyncClient, headers: dict[str, str], messages: list[dict[str, Any]]
) -> None:
    """PUT a thread of ``messages`` (201), read it back exactly, append one message (200)."""
    tid = ThreadId.new()
    put = await client.put(
        f"/api/threads/{tid}", json={"conversation": {"messages": messages}}, headers=headers
    )
    assert put.status_code == 201, put.text[:500]
    got = (await client.get(f"/api/threads/{tid}", headers=headers)).json()
    assert got["message_count"] == len(messages)
    assert got["conversation"]["messages"] == messages
    last = user(f"appended {secrets.token_hex(8)}")
    appended = await client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [last]},
        headers={**headers, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    assert appended.json() == {"id": tid, "version": 2, "message_count": len(messages) + 1}
    after = (await client.get(f"/api/threads/{tid}", headers=headers)).json()
    assert after["message_count"] == len(messages) + 1
    assert after["conversation"]["messages"][-1] == last
    assert after["conversation"]["messages"][:-1] == messages


async def test_thread_of_5000_messages_stores_reads_back_and_appends(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    roles = ["user", "assistant", "tool", "system"]
    messages = [
        {"role": roles[i % 4], "content": f"message {i} {secrets.token_hex(8)}"}
        for i in range(5_000)
    ]
    await assert_stores_reads_back_and_appends(client, auth(new_user("alice")), messages)


def megabyte_of_tokens() -> str:
    """About 1 MB of distinct random words."""
    raw = secrets.token_hex(500_000)
    return " ".join(raw[i : i + 16] for i in range(0, len(raw), 16))


async def test_thread_of_30_megabytes_stores_reads_back_and_appends(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    messages = [
        {"role": "tool", "tool_call_id": f"call-{i}", "content": megabyte_of_tokens()}
        for i in range(30)
    ]
    assert sum(len(m["content"]) for m in messages) > 30_000_000
    await assert_stores_reads_back_and_appends(client, auth(new_user("alice")), messages)


async def test_append_without_if_match_is_428(
    client: httpx.AsyncClient, auth: Auth, new_user: NewUser
) -> None:
    headers = auth(new_user("alice"))
    tid = ThreadId.new()
    assert (await client.put(f"/api/threads/{tid}", json={}, headers=headers)).status_code == 201
    response = await client.post(
        f"/api/threads/{tid}/messages", json={"messages": [user("hi")]}, headers=headers
    )
    body = assert_problem(response, 428)
    assert body["code"] == "precondition_required"
    got = (await client.get(f"/api/threads/{tid}", headers=headers)).json()
    assert (got["version"], got["message_count"]) == (1, 0)
