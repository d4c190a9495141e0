"""``/s/{secret}`` over HTTP (in-process): a live link opens its thread to anyone, whatever the
thread's visibility; revoked, expired or deleted answer 410 and an unknown secret 404; the page
is one use of the link (its fragments are not); ``Accept: application/json`` gives the JSON."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.web.reading import PAGE
from app.web.shared import wants_json
from tests.web.documents import conversation, document
from tests.web.rows import connect, insert_share_link


async def _private_thread(client: httpx.AsyncClient, owner: dict[str, str], count: int) -> str:
    doc = document(conversation(count), title="Shared secretly")
    response = await client.put(f"/api/threads/{doc['id']}", json=doc, headers=owner)
    assert response.status_code == 201, response.text
    return str(doc["id"])


async def _use_count(database_url: str, thread_id: str) -> int:
    async with connect(database_url) as connection:
        count: int = await connection.fetchval(
            "SELECT sum(use_count) FROM share_links WHERE thread_id = $1",
            uuid.UUID(thread_id[2:]),
        )
    return count


async def test_live_link_opens_a_private_thread_to_anyone_and_counts_each_read(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, PAGE + 5)
    secret = await insert_share_link(database_url, thread_id, "someone")
    response = await client.get(f"/s/{secret}")
    assert response.status_code == 200
    assert "Shared secretly" in response.text
    assert 'id="m-0"' in response.text
    assert f'data-fragment="/s/{secret}/messages?from={PAGE}"' in response.text
    assert response.headers["x-robots-tag"] == "noindex, nofollow"
    assert response.headers["referrer-policy"] == "no-referrer"
    fragment = await client.get(f"/s/{secret}/messages?from={PAGE}")
    assert fragment.status_code == 200
    assert f'id="m-{PAGE + 4}"' in fragment.text
    assert (await client.get(f"/s/{secret}/m/3/body")).status_code == 200
    assert (await client.get(f"/s/{secret}/m/3")).status_code == 200
    assert await _use_count(database_url, thread_id) == 4  # the page and 3 pieces (G3)
    assert (await client.get(f"/t/{thread_id}")).status_code == 404  # the thread stays private


async def test_accept_json_gives_the_thread_document(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, 3)
    secret = await insert_share_link(database_url, thread_id, "someone")
    response = await client.get(f"/s/{secret}", headers={"Accept": "application/json"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["id"] == thread_id
    assert len(response.json()["conversation"]["messages"]) == 3
    assert "Accept" in response.headers["vary"]
    browser = "text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8"
    page = await client.get(f"/s/{secret}", headers={"Accept": browser})
    assert page.headers["content-type"].startswith("text/html")


async def test_revoked_and_expired_links_are_410_unknown_is_404(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, 3)
    revoked = await insert_share_link(database_url, thread_id, "someone", revoked=True)
    past = datetime.now(UTC) - timedelta(seconds=1)
    expired = await insert_share_link(database_url, thread_id, "someone", expires_at=past)
    for secret in (revoked, expired):
        for path in (f"/s/{secret}", f"/s/{secret}/messages", f"/s/{secret}/m/0"):
            assert (await client.get(path)).status_code == 410, path
        json = await client.get(f"/s/{secret}", headers={"Accept": "application/json"})
        assert json.status_code == 410
    unknown = "A" * 43
    for path in (f"/s/{unknown}", "/s/short", f"/s/{unknown}/m/0", f"/s/{'x' * 300}"):
        assert (await client.get(path)).status_code == 404, path


async def test_deleting_the_thread_kills_its_link_page(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, 3)
    secret = await insert_share_link(database_url, thread_id, "someone")
    assert (await client.get(f"/s/{secret}")).status_code == 200
    assert (await client.delete(f"/api/threads/{thread_id}", headers=owner)).status_code == 204
    assert (await client.get(f"/s/{secret}")).status_code == 410
    assert (await client.get(f"/s/{secret}/messages")).status_code == 410


async def _uses_via(database_url: str, thread_id: str) -> list[str]:
    async with connect(database_url) as connection:
        rows = await connection.fetch(
            "SELECT details->>'via' AS via FROM audit_events WHERE thread_id = $1"
            " AND action = 'share_link.use' ORDER BY occurred_at, id",
            uuid.UUID(thread_id[2:]),
        )
    return [row["via"] for row in rows]


async def test_every_fragment_read_is_a_counted_audited_use(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, PAGE * 2 + 20)
    secret = await insert_share_link(database_url, thread_id, "someone")
    for start in (0, PAGE, PAGE * 2):
        assert (await client.get(f"/s/{secret}/messages?from={start}")).status_code == 200
    for piece in ("m/0", "m/0/body", "m/0/raw"):
        assert (await client.get(f"/s/{secret}/{piece}")).status_code == 200
    assert await _use_count(database_url, thread_id) == 6
    assert await _uses_via(database_url, thread_id) == ["fragment"] * 6


async def test_a_request_that_fails_is_not_a_use(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, PAGE + 5)
    secret = await insert_share_link(database_url, thread_id, "someone")
    for path in ("?from=999", f"?from={PAGE + 5}", "/messages?from=999", "/m/999", "/m/999/raw"):
        assert (await client.get(f"/s/{secret}{path}")).status_code == 404, path
    assert await _use_count(database_url, thread_id) == 0
    assert await _uses_via(database_url, thread_id) == []


@pytest.mark.parametrize(
    ("accept", "json"),
    [
        ("application/json", True),
        ("text/html;q=0.1, application/json", True),
        ("application/json;q=0", False),
        ("application/json;q=0, */*", False),
        ("application/json, text/plain, */*", True),
        ("text/html, application/json", False),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),
        ("application/json;q=0.5, text/*;q=0.4", True),
        ("application/json;q=0.5, text/*;q=0.6", False),
        ("application/json;q=nonsense", False),
        ("*/*", False),
        ("", False),
    ],
)
def test_accept_q_values_choose_json_or_the_page(accept: str, json: bool) -> None:
    assert wants_json(accept) is json


async def test_head_answers_as_get_and_counts_as_get(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    thread_id = await _private_thread(client, owner, 3)
    secret = await insert_share_link(database_url, thread_id, "someone")
    for path in ("", "/messages?from=0", "/m/0", "/m/0/body", "/m/0/raw"):
        head = await client.head(f"/s/{secret}{path}")
        assert head.status_code == 200, path
        assert head.content == b""
    assert await _use_count(database_url, thread_id) == 5  # a HEAD is read as a GET is
    assert (await client.head("/s/nosuchsecret")).status_code == 404
    public = document(conversation(2), visibility="public")
    assert (
        await client.put(f"/api/threads/{public['id']}", json=public, headers=owner)
    ).status_code == 201
    for path in ("", "/messages", "/m/1", "/m/1/body", "/m/1/raw"):
        assert (await client.head(f"/t/{public['id']}{path}")).status_code == 200, path
