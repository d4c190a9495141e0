"""What schema fuzzing (tests/test_schema_fuzz.py) found, kept as regular tests: each was a 500,
an answer the OpenAPI document did not describe, or a request the document allowed and the
server refused (or the reverse)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.openapi import IF_MATCH_PATTERN, NON_BLANK_PATTERN
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory


@pytest.fixture
def me(auth: TokenFactory, new_user: Any) -> dict[str, str]:
    return auth(new_user("fuzzy"))


async def create(client: httpx.AsyncClient, me: dict[str, str], **doc: Any) -> dict[str, Any]:
    response = await client.post("/api/threads", json=doc, headers=me)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.parametrize("timestamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00"])
@pytest.mark.parametrize("where", ["created_at", "message", "append"])
async def test_timestamp_past_the_calendar_in_utc_is_422_not_500(
    client: httpx.AsyncClient, me: dict[str, str], timestamp: str, where: str
) -> None:
    if where == "append":
        thread = await create(client, me)
        response = await client.post(
            f"/api/threads/{thread['id']}/messages",
            json={"messages": [], "last_activity_at": timestamp},
            headers={**me, "If-Match": '"1"'},
        )
    else:
        doc: dict[str, Any] = (
            {"created_at": timestamp}
            if where == "created_at"
            else {"conversation": {"messages": [{"role": "user", "created_at": timestamp}]}}
        )
        response = await client.post("/api/threads", json=doc, headers=me)
    assert response.status_code == 422, response.text
    assert response.json()["code"] == "validation_error"


async def test_year_before_1000_is_written_with_four_digits(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    thread = await create(client, me, created_at="0001-01-01T00:00:00Z")
    assert thread["created_at"] == "0001-01-01T00:00:00Z"
    listed = await client.get("/api/threads", headers=me)
    assert listed.json()["threads"][0]["created_at"] == "0001-01-01T00:00:00Z"


async def test_405_allows_every_method_of_the_path(client: httpx.AsyncClient) -> None:
    response = await client.options(f"/api/threads/{ThreadId.new()}")
    assert response.status_code == 405
    assert response.headers["allow"] == "DELETE, GET, HEAD, PATCH, PUT"
    assert response.headers["content-type"] == "application/problem+json"


async def test_put_on_search_is_405_not_an_attempt_to_store_a_thread(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    response = await client.put("/api/threads/search?q=x", headers=me)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize("segment", ["fuzz", "T-NOT-A-UUID", f"{ThreadId.new()}".upper()])
async def test_malformed_thread_id_in_path_is_404_problem(
    client: httpx.AsyncClient, me: dict[str, str], segment: str
) -> None:
    response = await client.get(f"/api/threads/{segment}", headers=me)
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


async def test_integral_floats_are_integers(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    tid = ThreadId.new()
    doc = {
        "version": 0.0,
        "agent_state": {"kind": "error", "retries": 2.0},
        "conversation": {"messages": [{"role": "user", "content": "a"}]},
    }
    stored = await client.put(f"/api/threads/{tid}", json=doc, headers=me)
    assert stored.status_code == 201, stored.text
    assert stored.json()["agent_state"]["retries"] == 2
    fork = await client.post(f"/api/threads/{tid}/fork", json={"up_to": 1.0}, headers=me)
    assert fork.status_code == 201, fork.text
    assert fork.json()["message_count"] == 1
    half = await client.post(f"/api/threads/{tid}/fork", json={"up_to": 0.5}, headers=me)
    assert half.status_code == 422


async def test_fork_without_a_body_copies_everything(
    client: httpx.AsyncClient, me: dict[str, str], app: FastAPI
) -> None:
    thread = await create(client, me, conversation={"messages": [{"role": "user"}]})
    response = await client.post(f"/api/threads/{thread['id']}/fork", headers=me)
    assert response.status_code == 201, response.text
    assert response.json()["message_count"] == 1
    body = app.openapi()["paths"]["/api/threads/{thread_id}/fork"]["post"]["requestBody"]
    assert body["required"] is False


@pytest.mark.parametrize("field", ["metadata", "visibility", "is_shared_with_support", "archived"])
async def test_patch_null_is_refused_and_documented_as_not_allowed(
    client: httpx.AsyncClient, me: dict[str, str], app: FastAPI, field: str
) -> None:
    thread = await create(client, me)
    response = await client.patch(f"/api/threads/{thread['id']}", json={field: None}, headers=me)
    assert response.status_code == 422
    schema = app.openapi()["components"]["schemas"]["ThreadPatch"]["properties"][field]
    assert "anyOf" not in schema
    assert schema["type"] != "null"


@pytest.mark.parametrize(
    ("if_match", "accepted"),
    [
        ('"1"', True),
        ("1", True),
        ('\t"1" ,  W/"2"', True),
        ("*", True),
        ("null", False),
        ("\xa01", False),  # a no-break space is not HTTP whitespace
        ('"1",', False),
        ("", False),
    ],
)
async def test_if_match_grammar_is_the_documented_one(
    client: httpx.AsyncClient, me: dict[str, str], if_match: str, accepted: bool
) -> None:
    thread = await create(client, me)
    response = await client.patch(
        f"/api/threads/{thread['id']}",
        json={"metadata": {"title": "t"}},
        headers={**me, "If-Match": if_match.encode("latin-1")},
    )
    assert (response.status_code != 400) is accepted, response.text
    assert (re.search(IF_MATCH_PATTERN, if_match) is not None) is accepted


@pytest.mark.parametrize("q", ["\x1c", "\u3000 \t", "\x85", "a", " a ", "\u200bx"])
async def test_blank_query_is_what_the_document_calls_blank(
    client: httpx.AsyncClient, me: dict[str, str], q: str
) -> None:
    response = await client.get("/api/threads/search", params={"q": q}, headers=me)
    documented_valid = re.search(NON_BLANK_PATTERN, q) is not None
    assert (response.status_code == 200) is documented_valid, response.text
    if not documented_valid:
        assert response.status_code == 400


async def test_blank_commit_sha_is_documented_as_refused(
    client: httpx.AsyncClient, me: dict[str, str], app: FastAPI
) -> None:
    response = await client.post("/api/threads", json={"git_commits": ["\u2003"]}, headers=me)
    assert response.status_code == 422
    items = app.openapi()["components"]["schemas"]["Thread"]["properties"]["git_commits"]["items"]
    assert re.search(items["pattern"], "\u2003") is None
    assert re.search(items["pattern"], "abc1234") is not None


async def test_private_thread_is_documented_as_refused(
    client: httpx.AsyncClient, me: dict[str, str], app: FastAPI
) -> None:
    response = await client.post("/api/threads", json={"is_private": True}, headers=me)
    assert response.status_code == 422
    schema = app.openapi()["components"]["schemas"]["Thread"]["properties"]["is_private"]
    assert schema["enum"] == [False]


def test_message_timestamps_are_documented_as_date_times(app: FastAPI) -> None:
    message = app.openapi()["components"]["schemas"]["Message"]["properties"]["created_at"]
    assert {"type": "string", "format": "date-time"} in message["anyOf"]


def test_every_api_operation_documents_the_answers_of_the_shared_layers(app: FastAPI) -> None:
    document = app.openapi()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            where = f"{method.upper()} {path}"
            if path.startswith("/api/"):
                assert {"401", "429", "503"} <= set(responses), where
                assert "Retry-After" in responses["429"]["headers"], where
                assert "Retry-After" in responses["503"]["headers"], where
            if "requestBody" in operation:
                assert "413" in responses, where
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    media = response["content"]["application/problem+json"]["schema"]["$ref"]
                    assert media.endswith(("/Problem", "/ConflictProblem")), where


async def test_token_whose_claims_postgres_cannot_store_is_401(
    client: httpx.AsyncClient, settings: Any
) -> None:
    from app.auth import create_token

    for sub in ["nul\x00user", "surrogate\ud800user"]:
        token = create_token(settings, sub)
        response = await client.post(
            "/api/threads", json={}, headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 401, response.text
