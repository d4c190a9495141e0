"""Inputs a demanding user tried against a fresh clone; each once answered 500 or misbehaved."""

from __future__ import annotations

import random
import secrets
import string
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory


@pytest.fixture
def me(auth: TokenFactory, new_user) -> dict[str, str]:
    return auth(new_user("hostile"), org="acme")


async def _create(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    tid = ThreadId.new()
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return f"/api/threads/{tid}"


async def test_body_version_past_32_bits_is_422(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", json={"id": tid, "version": 2**31}, headers=me
    )
    assert response.status_code == 422


@pytest.mark.parametrize("tag", ['"2147483648"', '"9223372036854775807"', '"' + "9" * 5000 + '"'])
@pytest.mark.parametrize("method", ["put", "patch", "delete", "append"])
async def test_if_match_past_32_bits_is_409(
    client: httpx.AsyncClient, me: dict[str, str], method: str, tag: str
) -> None:
    """A well-formed tag of a version no thread has, however long: 409, never 400 or 500."""
    url = await _create(client, me)
    headers = {**me, "If-Match": tag}
    if method == "put":
        response = await client.put(url, json={}, headers=headers)
    elif method == "patch":
        response = await client.patch(url, json={"visibility": "public"}, headers=headers)
    elif method == "delete":
        response = await client.delete(url, headers=headers)
    else:
        response = await client.post(f"{url}/messages", json={"messages": []}, headers=headers)
    assert response.status_code == 409
    assert "None" not in response.json()["detail"]


async def test_append_with_null_git_commits_changes_nothing(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    url = await _create(client, me, git_commits=["abc1234"])
    body = {"messages": [], "git_commits": None, "git_start_dirty": True}
    response = await client.post(f"{url}/messages", json=body, headers={**me, "If-Match": '"1"'})
    assert response.status_code == 200, response.text
    thread = (await client.get(url, headers=me)).json()
    assert thread["git_commits"] == ["abc1234"]
    assert thread["git_start_dirty"] is True


@pytest.mark.parametrize("depth", [600, 950, 5000])
async def test_deeply_nested_patch_never_500s(
    client: httpx.AsyncClient, me: dict[str, str], depth: int
) -> None:
    url = await _create(client, me)
    body = '{"metadata": {"extra": {"d": ' + "[" * depth + "]" * depth + "}}}"
    response = await client.patch(
        url, content=body, headers={**me, "content-type": "application/merge-patch+json"}
    )
    assert response.status_code in (200, 400), response.text


async def test_megabyte_title_of_distinct_words_stores_and_is_found(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    rng = random.Random(1)
    first = "zq" + "".join(rng.choices(string.ascii_lowercase, k=10))
    title = (
        first
        + " "
        + " ".join("".join(rng.choices(string.ascii_lowercase, k=10)) for _ in range(100_000))
    )
    url = await _create(client, me, metadata={"title": title}, git_branch=title[:200_000])
    assert (await client.get(url, headers=me)).json()["metadata"]["title"] == title
    hits = (await client.get("/api/threads/search", params={"q": first}, headers=me)).json()["hits"]
    assert [h["thread"]["id"] for h in hits] == [url.rsplit("/", 1)[1]]


async def test_long_non_sha_commit_strings_are_kept_but_not_indexed(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    sha = secrets.token_hex(20)
    junk = secrets.token_urlsafe(6000)
    url = await _create(client, me, git_commits=[junk, sha], git_current_commit_sha=junk)
    thread = (await client.get(url, headers=me)).json()
    assert thread["git_commits"] == [junk, sha]
    hits = (await client.get("/api/threads/search", params={"q": sha[:10]}, headers=me)).json()[
        "hits"
    ]
    assert [h["thread"]["id"] for h in hits] == [url.rsplit("/", 1)[1]]


async def test_many_commits_in_one_put(client: httpx.AsyncClient, me: dict[str, str]) -> None:
    commits = [secrets.token_hex(20) for _ in range(20_000)]
    url = await _create(client, me, git_commits=commits)
    assert (await client.get(url, headers=me)).json()["git_commits"] == commits


@pytest.mark.parametrize(
    ("path", "query"), [("/api/threads", {}), ("/api/threads/search", {"q": "x"})]
)
async def test_nul_in_workspace_filter_is_not_a_500(
    client: httpx.AsyncClient, me: dict[str, str], path: str, query: dict[str, str]
) -> None:
    response = await client.get(path, params={**query, "workspace": "a\x00b"}, headers=me)
    assert response.status_code == 200


@pytest.mark.parametrize(
    "fields",
    [
        {"agent_state": {"retries": "3"}},
        {"agent_state": {"retries": True}},
        {"metadata": {"is_pinned": "yes"}},
        {"git_start_dirty": "false"},
        {"is_shared_with_support": "true"},
        {"created_at": 1700000000},
        {"version": True},
    ],
)
async def test_known_fields_are_not_coerced(
    client: httpx.AsyncClient, me: dict[str, str], fields: dict[str, Any]
) -> None:
    tid = ThreadId.new()
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=me)
    assert response.status_code == 422, response.text


async def test_words_inside_html_in_tool_output_are_found(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    word = "zq" + secrets.token_hex(5).translate(str.maketrans("0123456789", "ghijklmnop"))
    conversation = {
        "messages": [{"role": "tool", "content": f"<html><script>alert({word})</script></html>"}]
    }
    url = await _create(client, me, conversation=conversation)
    hits = (await client.get("/api/threads/search", params={"q": word}, headers=me)).json()["hits"]
    assert [h["thread"]["id"] for h in hits] == [url.rsplit("/", 1)[1]]
    assert f"<b>{word}</b>" in hits[0]["snippet"]


async def test_if_match_header_lines_are_one_list(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    url = await _create(client, me)
    headers = httpx.Headers([*me.items(), ("If-Match", '"7"'), ("If-Match", '"1"')])
    response = await client.put(url, json={}, headers=headers)
    assert response.status_code == 200


@pytest.mark.parametrize("base", [{"json_version": 3}, {"if_match": '"5"'}])
async def test_post_with_nonzero_base_is_409(
    client: httpx.AsyncClient, me: dict[str, str], base: dict[str, Any]
) -> None:
    tid = ThreadId.new()
    body: dict[str, Any] = {"id": tid}
    headers = dict(me)
    if "json_version" in base:
        body["version"] = base["json_version"]
    else:
        headers["If-Match"] = base["if_match"]
    response = await client.post("/api/threads", json=body, headers=headers)
    assert response.status_code == 409
    assert response.json()["server_version"] == 0
    assert (await client.get(f"/api/threads/{tid}", headers=me)).status_code == 404


async def test_weak_if_match_conflict_explains_itself(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    url = await _create(client, me)
    response = await client.put(url, json={}, headers={**me, "If-Match": 'W/"1"'})
    assert response.status_code == 409
    assert "weak" in response.json()["detail"]


async def test_a_patched_metadata_error_names_metadata(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """A bad member of a patched ``metadata`` is 422 at ``body.metadata.<member>`` (it was
    reported at ``body.<member>``, as if the member sat at the top of the patch)."""
    url = await _create(client, me)
    response = await client.patch(url, json={"metadata": {"is_pinned": "x"}}, headers=me)
    assert response.status_code == 422, response.text
    assert [e["loc"] for e in response.json()["errors"]] == [["body", "metadata", "is_pinned"]]
