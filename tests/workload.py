"""A mixed API workload over real HTTP, for tests that put something between the server and its
database (PgBouncer: tests/test_pgbouncer.py): each client, as its own user, creates, appends to,
replaces, lists, searches, forks and deletes threads, concurrently with the others."""

from __future__ import annotations

import asyncio
import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from tests.documents import thread_doc


def unique_word() -> str:
    """Twelve random lowercase letters: a word no other thread holds (searchable, not hex)."""
    return "".join(random.choices(string.ascii_lowercase, k=12))


@dataclass
class Outcome:
    """What a workload did: ``requests`` sent, and one line per answer that was not the expected
    status or content (``step: status body``)."""

    requests: int = 0
    failures: list[str] = field(default_factory=list)


async def _one_round(client: httpx.AsyncClient, headers: dict[str, str], out: Outcome) -> None:
    word = unique_word()

    async def call(step: str, expected: int, method: str, url: str, **kw: object) -> httpx.Response:
        out.requests += 1
        response = await client.request(method, url, **kw)  # type: ignore[arg-type]
        if response.status_code != expected:
            out.failures.append(f"{step}: {response.status_code} {response.text[:300]}")
        return response

    created = await call(
        "create",
        201,
        "POST",
        "/api/threads",
        json=thread_doc(None, f"hello {word}"),
        headers=headers,
    )
    if created.status_code != 201:
        return
    tid, version = created.json()["id"], created.json()["version"]
    for i in range(3):
        appended = await call(
            "append",
            200,
            "POST",
            f"/api/threads/{tid}/messages",
            json={"messages": [{"role": "assistant", "content": f"reply {i} {word}"}]},
            headers={**headers, "If-Match": f'"{version}"'},
        )
        if appended.status_code != 200:
            return
        version = appended.json()["version"]
    replaced = await call(
        "put",
        200,
        "PUT",
        f"/api/threads/{tid}",
        json=thread_doc(tid, f"replaced {word}", f"again {word}"),
        headers={**headers, "If-Match": f'"{version}"'},
    )
    listed = await call("list", 200, "GET", "/api/threads", headers=headers)
    if listed.status_code == 200 and tid not in {t["id"] for t in listed.json()["threads"]}:
        out.failures.append(f"list: {tid} missing")
    found = await call(
        "search", 200, "GET", "/api/threads/search", params={"q": word}, headers=headers
    )
    if found.status_code == 200 and [h["thread"]["id"] for h in found.json()["hits"]] != [tid]:
        out.failures.append(f"search: {word} did not find just {tid}: {found.text[:300]}")
    fork = await call("fork", 201, "POST", f"/api/threads/{tid}/fork", json={}, headers=headers)
    if fork.status_code == 201:
        if replaced.status_code == 200 and fork.json()["message_count"] != 2:
            out.failures.append(f"fork: {fork.json()['message_count']} messages, not 2")
        await call(
            "delete fork", 204, "DELETE", f"/api/threads/{fork.json()['id']}", headers=headers
        )
    await call("delete", 204, "DELETE", f"/api/threads/{tid}", headers=headers)


async def run_workload(
    base_url: str, headers_of: Callable[[int], dict[str, str]], clients: int, rounds: int
) -> Outcome:
    """``clients`` concurrent clients (client ``i`` sends ``headers_of(i)``: its own user), each
    running ``rounds`` rounds of create, 3 appends, PUT, list, search, fork and 2 deletes (10
    requests a round). A transport error counts as a failure."""
    out = Outcome()

    async def client_task(i: int) -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
            for _ in range(rounds):
                try:
                    await _one_round(client, headers_of(i), out)
                except httpx.TransportError as exc:
                    out.failures.append(f"transport: {type(exc).__name__} {exc}")

    await asyncio.gather(*(client_task(i) for i in range(clients)))
    return out
