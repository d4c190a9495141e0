"""Optimistic locking under concurrency (API.md section 5): exactly one writer wins."""

from __future__ import annotations

import asyncio
from collections import Counter

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory

WRITERS = 32


def _doc(tid: ThreadId, text: str) -> dict[str, object]:
    return {"id": tid, "conversation": {"messages": [{"role": "user", "content": text}]}}


async def test_concurrent_puts_with_same_if_match_one_wins_rest_409(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("owner"))
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, json=_doc(tid, "start"), headers=headers)).status_code == 201

    async def write(n: int) -> httpx.Response:
        return await client.put(
            url, json=_doc(tid, f"writer {n}"), headers={**headers, "If-Match": '"1"'}
        )

    responses = await asyncio.gather(*(write(n) for n in range(WRITERS)))
    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: WRITERS - 1}

    winner = next(r for r in responses if r.status_code == 200).json()
    final = (await client.get(url, headers=headers)).json()
    assert final["version"] == 2
    assert final["conversation"]["messages"] == winner["conversation"]["messages"]
    for loser in (r for r in responses if r.status_code == 409):
        problem = loser.json()
        assert problem["code"] == "version_conflict"
        assert problem["server_version"] == 2
        assert problem["client_version"] == 1
        assert problem["current"]["conversation"] == final["conversation"]


@pytest.mark.parametrize("method", ["PUT", "POST"])
async def test_concurrent_creates_of_one_id_one_201_rest_409(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, method: str
) -> None:
    headers = auth(new_user("owner"))
    tid = ThreadId.new()
    url = f"/api/threads/{tid}" if method == "PUT" else "/api/threads"

    async def create(n: int) -> httpx.Response:
        return await client.request(method, url, json=_doc(tid, f"creator {n}"), headers=headers)

    responses = await asyncio.gather(*(create(n) for n in range(WRITERS)))
    assert Counter(r.status_code for r in responses) == {201: 1, 409: WRITERS - 1}


async def test_concurrent_appends_with_same_base_lose_nothing(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    headers = auth(new_user("owner"))
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    await client.put(url, json=_doc(tid, "start"), headers=headers)

    async def append(n: int) -> httpx.Response:
        body = {"messages": [{"role": "assistant", "content": f"reply {n}"}]}
        return await client.post(
            f"{url}/messages", json=body, headers={**headers, "If-Match": '"1"'}
        )

    responses = await asyncio.gather(*(append(n) for n in range(WRITERS)))
    assert Counter(r.status_code for r in responses) == {200: 1, 409: WRITERS - 1}
    final = (await client.get(url, headers=headers)).json()
    assert final["message_count"] == 2
    assert len(final["conversation"]["messages"]) == 2


async def test_retrying_writers_all_land_in_order_of_versions(
    client: httpx.AsyncClient, auth: TokenFactory, new_user
) -> None:
    """Writers that re-read on 409 and retry all get through: no update is lost."""
    headers = auth(new_user("owner"))
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    await client.put(url, json=_doc(tid, "start"), headers=headers)

    async def append_until_accepted(n: int) -> None:
        version = 1
        while True:
            body = {"messages": [{"role": "user", "content": f"turn {n}"}]}
            response = await client.post(
                f"{url}/messages", json=body, headers={**headers, "If-Match": f'"{version}"'}
            )
            if response.status_code == 200:
                return
            assert response.status_code == 409, response.text
            version = response.json()["server_version"]

    await asyncio.gather(*(append_until_accepted(n) for n in range(8)))
    final = (await client.get(url, headers=headers)).json()
    contents = sorted(m["content"] for m in final["conversation"]["messages"][1:])
    assert contents == sorted(f"turn {n}" for n in range(8))
    assert final["version"] == 9
