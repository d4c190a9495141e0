"""``Idempotency-Key`` on every POST of /api/threads (app/idempotency/keys.py), over HTTP: a retry
with the same key and request gets the first answer and writes nothing; another request with the
key is 422; concurrent duplicates write once; keys are per user; failures are not stored; expired
keys stop replaying and are purged."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from app.config import Settings
from app.main import create_app
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.documents import create_thread

DUPLICATES = 8
DEADLINE = 20.0  # seconds to wait for requests to block on a lock


def _key() -> str:
    return str(uuid.uuid4())


async def _owned(client: httpx.AsyncClient, headers: dict[str, str]) -> list[str]:
    response = await client.get("/api/threads", params={"limit": 200}, headers=headers)
    assert response.status_code == 200, response.text
    return sorted(t["id"] for t in response.json()["threads"])


def _same_answer(first: httpx.Response, again: httpx.Response) -> None:
    assert again.status_code == first.status_code
    assert again.content == first.content
    for name in ("content-type", "etag", "location"):
        assert again.headers.get(name) == first.headers.get(name), name
    assert "idempotent-replayed" not in first.headers
    assert again.headers["idempotent-replayed"] == "true"


def _plain_url(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(False)


@pytest.fixture
async def db(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection of the test's own, beside the server's pool (to hold locks, read rows)."""
    conn = await asyncpg.connect(_plain_url(database_url))
    yield conn
    await conn.close()


# -- one write per key ------------------------------------------------------------------------


async def test_fork_twice_with_one_key_forks_once_and_answers_the_same(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, "a", "b")
    headers = {**owner, "Idempotency-Key": _key()}
    first = await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    assert first.status_code == 201, first.text
    again = await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    _same_answer(first, again)
    fork_id = first.json()["id"]
    assert await _owned(client, owner) == sorted([source.rsplit("/", 1)[1], fork_id])


async def test_append_twice_with_one_key_appends_once(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    headers = {**owner, "If-Match": '"1"', "Idempotency-Key": _key()}
    body = {"messages": [{"role": "assistant", "content": "b"}]}
    first = await client.post(f"{url}/messages", json=body, headers=headers)
    assert first.status_code == 200, first.text
    again = await client.post(f"{url}/messages", json=body, headers=headers)
    _same_answer(first, again)
    thread = (await client.get(url, headers=owner)).json()
    assert (thread["version"], thread["message_count"]) == (2, 2)


async def test_create_twice_with_one_key_creates_one_thread(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    headers = {**owner, "Idempotency-Key": _key()}
    body = {"conversation": {"messages": [{"role": "user", "content": "hello"}]}}
    first = await client.post("/api/threads", json=body, headers=headers)
    assert first.status_code == 201, first.text
    again = await client.post("/api/threads", json=body, headers=headers)
    _same_answer(first, again)
    assert await _owned(client, owner) == [first.json()["id"]]


async def test_quoted_and_bare_forms_are_one_key(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, "a")
    key = _key()
    first = await client.post(f"{source}/fork", headers={**owner, "Idempotency-Key": f'"{key}"'})
    assert first.status_code == 201, first.text
    again = await client.post(f"{source}/fork", headers={**owner, "Idempotency-Key": key})
    _same_answer(first, again)


async def test_without_a_key_every_post_writes(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, "a")
    ids = {(await client.post(f"{source}/fork", headers=owner)).json()["id"] for _ in range(2)}
    assert len(ids) == 2


# -- another request with the key, malformed keys ---------------------------------------------


async def test_one_key_for_another_request_is_422(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, "a", "b")
    other = await create_thread(client, owner, "c")
    key = _key()
    headers = {**owner, "Idempotency-Key": key}
    assert (
        await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    ).status_code == 201
    for path, body, extra in [
        (f"{source}/fork", {"up_to": 2}, {}),  # another body
        (f"{other}/fork", {"up_to": 1}, {}),  # another path
        (f"{source}/messages", {"messages": []}, {"If-Match": '"1"'}),  # another route
    ]:
        response = await client.post(path, json=body, headers={**headers, **extra})
        assert response.status_code == 422, response.text
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["code"] == "idempotency_key_reused"
    assert len(await _owned(client, owner)) == 3  # the two threads and one fork


async def test_one_key_with_another_if_match_is_422(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    headers = {**owner, "Idempotency-Key": _key()}
    body = {"messages": [{"role": "assistant", "content": "b"}]}
    ok = await client.post(f"{url}/messages", json=body, headers={**headers, "If-Match": '"1"'})
    assert ok.status_code == 200, ok.text
    other = await client.post(f"{url}/messages", json=body, headers={**headers, "If-Match": '"2"'})
    assert other.status_code == 422, other.text
    assert other.json()["code"] == "idempotency_key_reused"


@pytest.mark.parametrize(
    "value",
    [b"", b"   ", b'""', b"x" * 256, b'"' + b"x" * 256 + b'"', b"a b", b'"a', b"caf\xe9", b"\x01"],
)
async def test_malformed_keys_are_400(
    client: httpx.AsyncClient, owner: dict[str, str], value: bytes
) -> None:
    source = await create_thread(client, owner, "a")
    headers = [*owner.items(), ("Idempotency-Key", value)]
    response = await client.post(f"{source}/fork", headers=headers)
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    assert await _owned(client, owner) == [source.rsplit("/", 1)[1]]


async def test_two_key_lines_are_400_and_255_characters_are_fine(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    source = await create_thread(client, owner, "a")
    two = [*owner.items(), ("Idempotency-Key", "a"), ("Idempotency-Key", "b")]
    assert (await client.post(f"{source}/fork", headers=two)).status_code == 400
    longest = {**owner, "Idempotency-Key": "k" * 255}
    assert (await client.post(f"{source}/fork", headers=longest)).status_code == 201


async def test_anonymous_post_with_a_key_is_401(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/threads", json={}, headers={"Idempotency-Key": "k"})
    assert response.status_code == 401


# -- per user ---------------------------------------------------------------------------------


async def test_users_with_one_key_are_independent(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, new_org
) -> None:
    org = new_org("acme")
    alice, bob = auth(new_user("alice"), org=org), auth(new_user("bob"), org=org)
    shared = await create_thread(client, alice, "a", visibility="organization")
    key = _key()
    forks = []
    for headers in (alice, bob):
        response = await client.post(
            f"{shared}/fork", json={"up_to": 1}, headers={**headers, "Idempotency-Key": key}
        )
        assert response.status_code == 201, response.text
        assert "idempotent-replayed" not in response.headers
        forks.append(response.json())
    assert forks[0]["id"] != forks[1]["id"]
    assert forks[1]["owner_id"] != forks[0]["owner_id"]
    own = await create_thread(client, bob, "b")  # bob's key is his: another request of his is 422
    response = await client.post(f"{own}/fork", headers={**bob, "Idempotency-Key": key})
    assert response.status_code == 422


# -- failures are not stored ------------------------------------------------------------------


async def test_a_refused_request_is_not_stored_so_its_retry_can_succeed(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    url = await create_thread(client, owner, "a")
    headers = {**owner, "If-Match": '"2"', "Idempotency-Key": _key()}
    body = {"messages": [{"role": "assistant", "content": "b"}]}
    refused = await client.post(f"{url}/messages", json=body, headers=headers)
    assert refused.status_code == 409, refused.text
    patched = await client.patch(url, json={"metadata": {"k": "v"}}, headers=owner)
    assert patched.json()["version"] == 2
    first = await client.post(f"{url}/messages", json=body, headers=headers)
    assert first.status_code == 200, first.text
    again = await client.post(f"{url}/messages", json=body, headers=headers)
    _same_answer(first, again)
    assert (await client.get(url, headers=owner)).json()["message_count"] == 2


# -- concurrent duplicates --------------------------------------------------------------------


async def _wait_until_blocked(db: asyncpg.Connection, count: int) -> None:
    """Poll until ``count`` server connections wait on a lock (bounded). ``db`` may be in a
    transaction, where statistics views keep their first snapshot: each poll clears it."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        await db.execute("SELECT pg_stat_clear_snapshot()")
        waiting = await db.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = 'loomsync' AND wait_event_type = 'Lock'"
        )
        if waiting >= count:
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"fewer than {count} requests blocked on a lock within {DEADLINE} s")


async def _duplicates_while_blocked(
    db: asyncpg.Connection, block: str, send: Callable[[], Awaitable[httpx.Response]]
) -> list[httpx.Response]:
    """Hold a lock (statement ``block``) that the first request's write waits on; send
    DUPLICATES identical requests; release once all of them are waiting (the first on the
    lock, the others on its key); their answers."""
    transaction = db.transaction()
    await transaction.start()
    try:
        await db.execute(block)
        requests = [asyncio.ensure_future(send()) for _ in range(DUPLICATES)]
        await _wait_until_blocked(db, DUPLICATES)
    finally:
        await transaction.rollback()
    return list(await asyncio.gather(*requests))


async def test_concurrent_duplicate_forks_fork_once(
    client: httpx.AsyncClient, owner: dict[str, str], db: asyncpg.Connection
) -> None:
    source = await create_thread(client, owner, "a")
    headers = {**owner, "Idempotency-Key": _key()}
    responses = await _duplicates_while_blocked(
        db,
        "LOCK TABLE audit_events IN SHARE ROW EXCLUSIVE MODE",  # a fork's audit event waits
        lambda: client.post(f"{source}/fork", json={}, headers=headers),
    )
    assert {r.status_code for r in responses} == {201}, [r.text for r in responses]
    assert len({r.content for r in responses}) == 1
    assert sum("idempotent-replayed" not in r.headers for r in responses) == 1
    assert len(await _owned(client, owner)) == 2


async def test_concurrent_duplicate_appends_append_once(
    client: httpx.AsyncClient, owner: dict[str, str], db: asyncpg.Connection
) -> None:
    url = await create_thread(client, owner, "a")
    thread_uuid = ThreadId.parse(url.rsplit("/", 1)[1]).uuid
    headers = {**owner, "If-Match": '"1"', "Idempotency-Key": _key()}
    body = {"messages": [{"role": "assistant", "content": "b"}]}
    responses = await _duplicates_while_blocked(
        db,
        f"SELECT 1 FROM threads WHERE id = '{thread_uuid}' FOR UPDATE",  # the claim waits
        lambda: client.post(f"{url}/messages", json=body, headers=headers),
    )
    assert {r.status_code for r in responses} == {200}, [r.text for r in responses]
    assert len({r.content for r in responses}) == 1
    thread = (await client.get(url, headers=owner)).json()
    assert (thread["version"], thread["message_count"]) == (2, 2)


# -- expiry -----------------------------------------------------------------------------------


@pytest.fixture
async def purging_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app that purges expired keys on every keyed request."""
    app: FastAPI = create_app(settings.model_copy(update={"idempotency_purge_interval": 0.0}))
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver", timeout=60
    ) as c:
        yield c
    await app.state.engine.dispose()


async def _age(db: asyncpg.Connection, key: str, hours: float) -> None:
    aged = await db.execute(
        "UPDATE idempotency_keys SET created_at = created_at - make_interval(secs => $2)"
        " WHERE key = $1",
        key,
        hours * 3600,
    )
    assert aged == "UPDATE 1"


async def test_an_expired_key_no_longer_replays(
    client: httpx.AsyncClient, owner: dict[str, str], db: asyncpg.Connection
) -> None:
    source = await create_thread(client, owner, "a", "b")
    key = _key()
    headers = {**owner, "Idempotency-Key": key}
    assert (await client.post(f"{source}/fork", headers=headers)).status_code == 201
    await _age(db, key, 23.9)
    assert (await client.post(f"{source}/fork", headers=headers)).headers["idempotent-replayed"]
    await _age(db, key, 0.2)  # now just over 24 h old
    again = await client.post(f"{source}/fork", json={"up_to": 1}, headers=headers)
    assert again.status_code == 201, again.text  # another body, yet no 422: a new use
    assert "idempotent-replayed" not in again.headers
    assert len(await _owned(client, owner)) == 3


async def test_expired_keys_are_purged(
    purging_client: httpx.AsyncClient, owner: dict[str, str], db: asyncpg.Connection
) -> None:
    source = await create_thread(purging_client, owner, "a")
    old, fresh = _key(), _key()
    for key in (old, fresh):
        headers = {**owner, "Idempotency-Key": key}
        assert (await purging_client.post(f"{source}/fork", headers=headers)).status_code == 201
    await _age(db, old, 25)
    trigger = {**owner, "Idempotency-Key": _key()}
    assert (await purging_client.post(f"{source}/fork", headers=trigger)).status_code == 201
    deadline = time.monotonic() + DEADLINE
    while await db.fetchval("SELECT count(*) FROM idempotency_keys WHERE key = $1", old):
        assert time.monotonic() < deadline, "the expired key was not purged"
        await asyncio.sleep(0.01)
    assert await db.fetchval("SELECT count(*) FROM idempotency_keys WHERE key = $1", fresh) == 1


async def test_an_empty_if_match_is_another_request_than_none(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    """Found by schemathesis: the fingerprint once joined If-Match lines, so none and one empty
    line were the same request, and the 400 of the empty one was answered with a replayed 201."""
    headers = {**owner, "Idempotency-Key": _key()}
    body = {"conversation": {"messages": []}}
    assert (await client.post("/api/threads", json=body, headers=headers)).status_code == 201
    empty = await client.post("/api/threads", json=body, headers={**headers, "If-Match": ""})
    assert empty.status_code == 422, empty.text
    assert empty.json()["code"] == "idempotency_key_reused"
