"""PUT, POST, PATCH, append, fork and DELETE semantics (API.md sections 5 and 6)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.documents import create_thread, thread_doc


@pytest.mark.parametrize(
    ("if_match", "status"),
    [
        ('"1"', 200),
        ("1", 200),
        ('"0", "1"', 200),
        ("*", 200),
        ('W/"1"', 409),
        ('"2"', 409),
        ('"0"', 409),
    ],
)
async def test_if_match_forms_on_put(
    client: httpx.AsyncClient, owner: dict[str, str], if_match: str, status: int
) -> None:
    url = await create_thread(client, owner, "a")
    response = await client.put(
        url, json=thread_doc(None, "b"), headers={**owner, "If-Match": if_match}
    )
    assert response.status_code == status, response.text


@pytest.mark.parametrize("if_match", ["abc", '"1', "W/", '"-1"', '"1";', ""])
async def test_unparsable_if_match_is_400(
    client: httpx.AsyncClient, owner: dict[str, str], if_match: str
) -> None:
    url = await create_thread(client, owner, "a")
    response = await client.put(
        url, json=thread_doc(None, "b"), headers={**owner, "If-Match": if_match}
    )
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "invalid_request"


async def test_body_version_is_the_base_without_if_match(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    stale = await client.put(url, json=thread_doc(None, "b", version=0), headers=owner)
    assert stale.status_code == 409
    fresh = await client.put(url, json=thread_doc(None, "b", version=1), headers=owner)
    assert fresh.status_code == 200
    assert fresh.json()["version"] == 2


async def test_stale_if_match_returns_409_with_current_thread(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "first")
    await client.put(url, json=thread_doc(None, "second"), headers={**owner, "If-Match": '"1"'})
    response = await client.put(
        url, json=thread_doc(None, "third"), headers={**owner, "If-Match": '"1"'}
    )
    assert response.status_code == 409
    problem = response.json()
    assert problem["title"] == "Version conflict"
    assert problem["status"] == 409
    assert (problem["server_version"], problem["client_version"]) == (2, 1)
    assert problem["current"]["conversation"]["messages"] == [{"role": "user", "content": "second"}]


async def test_put_with_nonzero_base_on_missing_thread_is_409(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", json=thread_doc(tid, "a"), headers={**owner, "If-Match": '"3"'}
    )
    assert response.status_code == 409
    assert response.json()["server_version"] == 0
    assert (await client.get(f"/api/threads/{tid}", headers=owner)).status_code == 404


async def test_post_without_id_makes_uuidv7_id(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    response = await client.post("/api/threads", json=thread_doc(None, "hello"), headers=owner)
    assert response.status_code == 201
    body = response.json()
    tid = ThreadId.parse(body["id"])
    assert tid.uuid.version == 7
    assert response.headers["location"] == f"/api/threads/{tid}"
    assert body["owner_id"]
    assert body["version"] == 1


async def test_post_with_existing_id_is_409(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    tid = url.rsplit("/", 1)[1]
    response = await client.post(
        "/api/threads", json=thread_doc(ThreadId.parse(tid), "b"), headers=owner
    )
    assert response.status_code == 409


async def test_server_fields_on_input_are_ignored(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(
        client,
        owner,
        "a",
        owner_id="mallory",
        org_id="evil",
        message_count=99,
        archived_at="2020-01-01T00:00:00Z",
    )
    body = (await client.get(url, headers=owner)).json()
    assert body["owner_id"] != "mallory"
    assert body["org_id"] != "evil"
    assert body["message_count"] == 1
    assert body["archived_at"] is None


async def test_append_adds_messages_and_state_without_resending(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "one", git_commits=["aaaaaaa1"])
    body = {
        "messages": [{"role": "assistant", "content": "two"}, {"role": "user", "content": "three"}],
        "agent_state": {"kind": "calling_llm", "retries": 1},
        "last_activity_at": "2030-01-01T00:00:00+01:00",
        "git_branch": "feature/x",
        "git_commits": ["aaaaaaa1", "bbbbbbb2"],
    }
    response = await client.post(f"{url}/messages", json=body, headers={**owner, "If-Match": '"1"'})
    assert response.status_code == 200, response.text
    assert response.json() == {"id": url.rsplit("/", 1)[1], "version": 2, "message_count": 3}
    assert response.headers["etag"] == '"2"'
    thread = (await client.get(url, headers=owner)).json()
    assert [m["content"] for m in thread["conversation"]["messages"]] == ["one", "two", "three"]
    assert thread["agent_state"]["kind"] == "calling_llm"
    assert thread["git_branch"] == "feature/x"
    assert thread["git_commits"] == ["aaaaaaa1", "bbbbbbb2"]
    assert thread["last_activity_at"] == "2029-12-31T23:00:00Z"


async def test_append_without_if_match_is_428(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "one")
    response = await client.post(f"{url}/messages", json={"messages": []}, headers=owner)
    assert response.status_code == 428
    assert response.json()["code"] == "precondition_required"


async def test_append_with_unknown_field_is_422_and_changes_nothing(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "one")
    body = {"messages": [{"role": "user", "content": "x"}], "surprise": 1}
    response = await client.post(f"{url}/messages", json=body, headers={**owner, "If-Match": '"1"'})
    assert response.status_code == 422
    thread = (await client.get(url, headers=owner)).json()
    assert thread["version"] == 1
    assert thread["message_count"] == 1


async def test_patch_merges_metadata_and_sets_visibility(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(
        client,
        owner,
        "a",
        metadata={"title": "old", "tags": ["x"], "extra": {"keep": 1, "drop": 2}},
    )
    patch = {
        "metadata": {"title": "new", "extra": {"drop": None, "add": [1]}},
        "visibility": "public",
    }
    response = await client.patch(
        url, json=patch, headers={**owner, "content-type": "application/merge-patch+json"}
    )
    assert response.status_code == 200, response.text
    thread = response.json()
    assert thread["metadata"]["title"] == "new"
    assert thread["metadata"]["tags"] == ["x"]
    assert thread["metadata"]["extra"] == {"keep": 1, "add": [1]}
    assert thread["visibility"] == "public"
    assert thread["version"] == 2
    assert response.headers["etag"] == '"2"'


async def test_patch_archived_hides_from_default_list(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    archived = await client.patch(url, json={"archived": True}, headers=owner)
    assert archived.json()["archived_at"] is not None
    listing = (await client.get("/api/threads", headers=owner)).json()
    assert url.rsplit("/", 1)[1] not in [t["id"] for t in listing["threads"]]
    listing = (await client.get("/api/threads", params={"archived": "true"}, headers=owner)).json()
    assert url.rsplit("/", 1)[1] in [t["id"] for t in listing["threads"]]
    # still readable and writable
    assert (await client.get(url, headers=owner)).status_code == 200
    unarchived = await client.patch(
        url, json={"archived": False}, headers={**owner, "If-Match": '"2"'}
    )
    assert unarchived.json()["archived_at"] is None


@pytest.mark.parametrize(
    "patch",
    [
        {"visibility": "secret"},
        {"visibility": None},
        {"title": "x"},
        {"metadata": {"tags": "notalist"}},
        {"archived": "yes"},
    ],
)
async def test_invalid_patch_is_422_and_changes_nothing(
    client: httpx.AsyncClient, owner: dict[str, str], patch: dict[str, Any]
) -> None:
    url = await create_thread(client, owner, "a")
    response = await client.patch(url, json=patch, headers=owner)
    assert response.status_code == 422, response.text
    assert (await client.get(url, headers=owner)).json()["version"] == 1


async def test_patch_with_stale_if_match_is_409(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    await client.patch(url, json={"visibility": "public"}, headers=owner)
    response = await client.patch(
        url, json={"visibility": "private"}, headers={**owner, "If-Match": '"1"'}
    )
    assert response.status_code == 409


async def test_fork_copies_prefix_into_private_thread(
    client: httpx.AsyncClient, owner: dict[str, str], auth: TokenFactory, new_user
) -> None:
    url = await create_thread(
        client, owner, "a", "b", "c", visibility="public", git_commits=["abcdef12"]
    )
    forker = auth(new_user("forker"), org="elsewhere")
    response = await client.post(f"{url}/fork", json={"up_to": 2}, headers=forker)
    assert response.status_code == 201, response.text
    fork = response.json()
    assert fork["id"] != url.rsplit("/", 1)[1]
    assert response.headers["location"] == f"/api/threads/{fork['id']}"
    assert [m["content"] for m in fork["conversation"]["messages"]] == ["a", "b"]
    assert fork["message_count"] == 2
    assert fork["visibility"] == "private"
    assert fork["owner_id"].startswith("forker-")
    assert fork["metadata"]["extra"]["forked_from"] == {"id": url.rsplit("/", 1)[1], "version": 1}
    assert fork["git_commits"] == ["abcdef12"]
    whole = await client.post(f"{url}/fork", headers=forker)
    assert whole.status_code == 201
    assert whole.json()["message_count"] == 3


async def test_fork_past_the_end_is_422(client: httpx.AsyncClient, owner: dict[str, str]) -> None:
    url = await create_thread(client, owner, "a")
    assert (await client.post(f"{url}/fork", json={"up_to": 5}, headers=owner)).status_code == 422
    assert (await client.post(f"{url}/fork", json={"up_to": -1}, headers=owner)).status_code == 422


async def test_delete_is_soft_then_410_everywhere(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    assert (await client.delete(url, headers=owner)).status_code == 204
    assert (await client.get(url, headers=owner)).status_code == 410
    assert (
        await client.put(url, json=thread_doc(None, "b"), headers={**owner, "If-Match": '"2"'})
    ).status_code == 410
    assert (await client.put(url, json=thread_doc(None, "b"), headers=owner)).status_code == 410
    assert (
        await client.patch(url, json={"visibility": "public"}, headers=owner)
    ).status_code == 410
    append = await client.post(
        f"{url}/messages", json={"messages": []}, headers={**owner, "If-Match": "*"}
    )
    assert append.status_code == 410
    assert (await client.post(f"{url}/fork", headers=owner)).status_code == 410
    assert (await client.delete(url, headers=owner)).status_code == 410
    listing = (await client.get("/api/threads", params={"archived": "any"}, headers=owner)).json()
    assert url.rsplit("/", 1)[1] not in [t["id"] for t in listing["threads"]]
    tid = ThreadId.parse(url.rsplit("/", 1)[1])
    assert (
        await client.post("/api/threads", json=thread_doc(tid, "again"), headers=owner)
    ).status_code == 409


async def test_delete_with_stale_if_match_is_409(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    assert (await client.delete(url, headers={**owner, "If-Match": '"7"'})).status_code == 409
    assert (await client.get(url, headers=owner)).status_code == 200


async def test_missing_thread_is_404_problem(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    response = await client.get(f"/api/threads/{ThreadId.new()}", headers=owner)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("method", ["patch", "delete", "append"])
async def test_writes_to_missing_thread_are_404(
    client: httpx.AsyncClient, owner: dict[str, str], method: str
) -> None:
    url = f"/api/threads/{ThreadId.new()}"
    if method == "patch":
        response = await client.patch(url, json={"visibility": "public"}, headers=owner)
    elif method == "delete":
        response = await client.delete(url, headers=owner)
    else:
        response = await client.post(
            f"{url}/messages", json={"messages": []}, headers={**owner, "If-Match": '"1"'}
        )
    assert response.status_code == 404
