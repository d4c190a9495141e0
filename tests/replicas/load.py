"""Clients that write and at once read back through the other instance, each checking that the
read shows its write (read-your-writes across instances), with every failed request kept. Used
by tests/replicas and bench/replicas.py: a :class:`Pair` is two instances' base URLs and a way
to sign a user's token."""

from __future__ import annotations

import asyncio
import random
import string
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from loomsync.core.document.ids import ThreadId
from tests.documents import thread_doc


@dataclass(frozen=True)
class Pair:
    """Two server instances (``urls``: base URLs) of one database, and ``headers(user)``: the
    Authorization headers of a fresh token of that user."""

    urls: tuple[str, str]
    headers: Callable[[str], dict[str, str]]


def rare_word() -> str:
    """A word no other thread holds (letters only, so the analyzer keeps it one word)."""
    return "".join(random.choices(string.ascii_lowercase, k=14))


@dataclass
class Tally:
    """What the clients saw: requests answered, reads that missed the caller's own write
    (``stale``), requests that failed (``failed``: status or transport error, with why), and
    each GET's wall time in milliseconds (``read_ms``)."""

    requests: int = 0
    writes: int = 0
    reads: int = 0
    read_ms: list[float] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def ok(self) -> bool:
        """Every read saw its write and no request failed."""
        return not self.stale and not self.failed


async def request(
    tally: Tally, client: httpx.AsyncClient, method: str, url: str, **kwargs: object
) -> httpx.Response | None:
    """The response, or None when it failed (transport error or status >= 300: kept in
    ``tally.failed``); every call counts in ``tally.requests``."""
    tally.requests += 1
    started = time.perf_counter()
    try:
        response = await client.request(method, url, **kwargs)  # type: ignore[arg-type]
    except httpx.HTTPError as exc:
        tally.failed.append(f"{method} {url}: {exc!r}")
        return None
    if method == "GET":
        tally.read_ms.append((time.perf_counter() - started) * 1000)
    if response.status_code >= 300:
        tally.failed.append(f"{method} {url}: {response.status_code} {response.text[:200]}")
        return None
    return response


async def writer(pair: Pair, tally: Tally, index: int, rounds: int, search: bool) -> None:
    """One user: a new thread, then ``rounds`` - 1 appends, each through instance a or b in
    turn; after each write a list (and with ``search`` a search for the word just written)
    through the other instance must show it: the write's version, the hit."""
    headers = pair.headers(f"ryw-{uuid.uuid4().hex[:8]}-{index}")
    clients = [httpx.AsyncClient(base_url=u, headers=headers, timeout=60) for u in pair.urls]
    try:
        tid = ThreadId.new()
        for k in range(rounds):
            to, back = clients[(index + k) % 2], clients[(index + k + 1) % 2]
            word = rare_word()
            if k == 0:
                body = thread_doc(tid, f"first {word}")
                wrote = await request(tally, to, "PUT", f"/api/threads/{tid}", json=body)
            else:
                message = {"messages": [{"role": "user", "content": f"then {word}"}]}
                wrote = await request(tally, to, "POST", f"/api/threads/{tid}/messages",
                                       json=message, headers={"If-Match": f'"{k}"'})  # fmt: skip
            if wrote is None:
                return
            tally.writes += 1
            version = k + 1
            listed = await request(tally, back, "GET", "/api/threads", params={"limit": 5})
            if listed is not None:
                tally.reads += 1
                versions = {t["id"]: t["version"] for t in listed.json()["threads"]}
                if versions.get(str(tid)) != version:
                    tally.stale.append(f"list after v{version} of {tid}: {versions}")
            if not search:
                continue
            found = await request(tally, back, "GET", "/api/threads/search", params={"q": word})
            if found is not None:
                tally.reads += 1
                hits = [h["thread"]["id"] for h in found.json()["hits"]]
                if hits != [str(tid)]:
                    tally.stale.append(f"search {word!r} after v{version} of {tid}: {hits}")
    finally:
        for client in clients:
            await client.aclose()


async def run_writers(
    pair: Pair, clients: int, rounds: int, *, search: bool = True, tally: Tally | None = None
) -> Tally:
    """``clients`` :func:`writer` users at once; their :class:`Tally`."""
    tally = tally or Tally()
    await asyncio.gather(*(writer(pair, tally, i, rounds, search) for i in range(clients)))
    return tally


async def keep_writing(pair: Pair, tally: Tally, stop: asyncio.Event, clients: int = 4) -> None:
    """:func:`run_writers` batches (``clients`` users, 3 rounds each) until ``stop`` is set."""
    while not stop.is_set():
        await run_writers(pair, clients, 3, tally=tally)
