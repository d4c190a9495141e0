"""A deleted thread disappears from every read (API.md section 1), replays included: the stored
answer of the create or fork that made it becomes the 410 a read gives (app/idempotency/keys.py,
``forget_answers``), so a retry neither gets the deleted text nor writes again."""

from __future__ import annotations

import uuid

import asyncpg
import httpx
from sqlalchemy.engine import make_url

from tests.documents import create_thread

SECRET_WORD = "zebracorn"


def _key() -> str:
    return str(uuid.uuid4())


async def _stored_bodies(database_url: str, thread_url: str) -> list[bytes]:
    """The stored answers that hold the thread at ``thread_url``, read by SQL."""
    url = make_url(database_url).set(drivername="postgresql").render_as_string(False)
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT body FROM idempotency_keys WHERE thread_id = $1",
            uuid.UUID(thread_url.rsplit("/", 1)[-1].removeprefix("T-")),
        )
    finally:
        await conn.close()
    return [bytes(row["body"]) for row in rows]


async def test_a_replayed_create_of_a_deleted_thread_is_410(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    headers = {**owner, "Idempotency-Key": _key()}
    body = {"conversation": {"messages": [{"role": "user", "content": f"say {SECRET_WORD}"}]}}
    made = await client.post("/api/threads", json=body, headers=headers)
    assert made.status_code == 201, made.text
    url = made.headers["location"]
    assert (await client.delete(url, headers=owner)).status_code == 204

    again = await client.post("/api/threads", json=body, headers=headers)
    assert again.status_code == 410, again.text
    assert again.headers["content-type"] == "application/problem+json"
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json()["code"] == "gone"
    assert "etag" not in again.headers
    assert "location" not in again.headers
    assert SECRET_WORD not in again.text
    listed = await client.get("/api/threads", headers=owner)
    assert listed.json()["threads"] == []  # the retry wrote nothing
    assert all(SECRET_WORD.encode() not in b for b in await _stored_bodies(database_url, url))

    other = await client.post("/api/threads", json={"title": "other"}, headers=headers)
    assert other.status_code == 422, other.text  # the key still names the first request
    assert other.json()["code"] == "idempotency_key_reused"


async def test_a_replayed_fork_of_a_deleted_fork_is_410_and_its_source_replays_on(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, f"a {SECRET_WORD}", "b")
    headers = {**owner, "Idempotency-Key": _key()}
    fork = await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    assert fork.status_code == 201, fork.text
    assert (await client.delete(fork.headers["location"], headers=owner)).status_code == 204

    again = await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    assert again.status_code == 410, again.text
    assert again.headers["idempotent-replayed"] == "true"
    assert SECRET_WORD not in again.text
    assert (await client.get(source, headers=owner)).status_code == 200  # the source stays
