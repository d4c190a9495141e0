"""Search cannot be turned into a denial of service (issue 11 item 4; API.md section 6).

No timed assertions: the work a query may cause is asserted by its shape (terms kept, window
size), and hostile queries against huge messages must answer 200 with a marked snippet. The
HTTP client's timeout (the snippet budget plus a wide margin) only guards against a hang; the
latencies are in bench/search_dos.py.
"""

from __future__ import annotations

import re
import secrets
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.errors import RateLimited
from app.threads.search import MAX_SEARCHES_PER_USER, search_slot
from loomsync.core.document.ids import ThreadId
from loomsync.core.textsearch.highlight import WINDOW_CHARS, snippet
from loomsync.core.textsearch.query import MAX_TERMS, parse
from tests.conftest import TokenFactory

HANG_GUARD_SECONDS = 30


def word() -> str:
    """A unique, searchable, unstemmable word (letters only)."""
    return "zq" + "".join(secrets.choice("bcdfghjklmnpqrstvwxz") for _ in range(10))


@pytest.fixture
async def guarded(app: FastAPI) -> Any:
    """A client whose timeout fails a request that hangs instead of answering."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", timeout=HANG_GUARD_SECONDS
    ) as c:
        yield c


@pytest.fixture
def me(auth: TokenFactory, new_user, new_org) -> dict[str, str]:
    return auth(new_user("hostile"), org=new_org("dos"))


async def put(client: httpx.AsyncClient, headers: dict[str, str], **fields: Any) -> str:
    tid = ThreadId.new()
    response = await client.put(f"/api/threads/{tid}", json={"id": tid, **fields}, headers=headers)
    assert response.status_code == 201, response.text
    return str(tid)


def one_message(content: str) -> dict[str, Any]:
    return {"messages": [{"role": "tool", "content": content}]}


@pytest.mark.parametrize(
    ("q", "syntax", "kept"),
    [
        (" ".join(["x"] * 499), "plain", ["( 'x' )"]),
        (" ".join(["X", "x"] * 200), "plain", ["( 'x' )"]),
        (" or ".join(["x"] * 200), "web", ["( 'x' )"]),
        ('"a b" "A B" "a b" or "a b"', "web", ["( 'b' )"]),  # "a" is a stop word
        ('"x y" "X Y" "x y" or "x y"', "web", ["( 'x' <-> 'y' )"]),
    ],
)
def test_repeated_units_are_kept_once(q: str, syntax: str, kept: list[str]) -> None:
    assert [u.tsquery() for u in parse(q, syntax).units] == kept


@pytest.mark.parametrize(
    ("q", "syntax"),
    [
        (" ".join(f"w{i}" for i in range(300)), "plain"),
        (" or ".join(f"w{i}" for i in range(300)), "web"),
        ('"' + " ".join(f"w{i}" for i in range(300)) + '"', "web"),
        (" ".join(f"-w{i}" for i in range(300)) + " w", "web"),
        (" ".join(f"a{i}-b{i}" for i in range(300)), "plain"),
        ('"' + " ".join(["x"] * 497) + '"', "web"),
    ],
)
def test_lexemes_and_units_are_capped(q: str, syntax: str) -> None:
    """The ranking statement's work grows with the units (one ts_rank each per candidate) and
    their lexemes: both stay within MAX_TERMS whatever the query."""
    query = parse(q, syntax)
    assert 0 < len(query.units) <= MAX_TERMS
    assert sum(u.size for u in query.units) <= MAX_TERMS
    assert len(query.excluded) <= MAX_TERMS
    assert query.any_tsquery().count("'") // 2 <= MAX_TERMS


def test_snippet_window_is_bounded_and_holds_the_match() -> None:
    needle = word()
    text = ("x " * 40_000) + needle + (" y" * 40_000)
    found = snippet(text, parse(needle))
    assert found is not None
    assert f"<b>{needle}</b>" in found
    assert len(found) <= WINDOW_CHARS + len("… <b></b> …")


@pytest.mark.parametrize(
    ("q", "syntax"),
    [
        (" ".join(["x"] * 49), "plain"),  # the query: under 100 characters
        (" ".join(["x"] * 499), "plain"),
        ('"' + " ".join(["x"] * 497) + '"', "web"),
        (" or ".join(["x"] * 200), "web"),
    ],
)
async def test_hostile_query_over_80_kb_message_answers_with_a_marked_window(
    guarded: httpx.AsyncClient, me: dict[str, str], q: str, syntax: str
) -> None:
    tid = await put(guarded, me, conversation=one_message("x " * 40_000))
    response = await guarded.get(
        "/api/threads/search", params={"q": q, "syntax": syntax}, headers=me
    )
    assert response.status_code == 200, response.text
    hit = next(h for h in response.json()["hits"] if h["thread"]["id"] == tid)
    assert hit["message_index"] == 0
    snippet = hit["snippet"]
    # A phrase's overlapping matches (x x x …) are one mark; it never widens the window.
    assert re.search(r"<b>x( x)*</b>", snippet)
    assert len(snippet.replace("<b>", "").replace("</b>", "")) <= WINDOW_CHARS + len("…  …")


async def test_hostile_title_of_80_kb_answers_with_a_marked_window(
    guarded: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    tid = await put(guarded, me, metadata={"title": f"{w} " * 6_000})
    response = await guarded.get(
        "/api/threads/search", params={"q": " ".join([w] * 60)}, headers=me
    )
    assert response.status_code == 200, response.text
    hits = response.json()["hits"]
    assert [h["thread"]["id"] for h in hits] == [tid]
    assert f"<b>{w}</b>" in hits[0]["snippet"]
    assert len(hits[0]["snippet"]) <= WINDOW_CHARS + 7 * 200


async def test_match_deep_in_a_huge_message_is_marked(
    guarded: httpx.AsyncClient, me: dict[str, str]
) -> None:
    needle = word()
    content = ("filler " * 12_000) + f"the {needle} is here " + ("tail " * 2_000)
    await put(guarded, me, conversation=one_message(content))
    response = await guarded.get("/api/threads/search", params={"q": needle}, headers=me)
    assert response.status_code == 200, response.text
    assert f"<b>{needle}</b>" in response.json()["hits"][0]["snippet"]


@pytest.mark.parametrize("q", ["-x", "-x -y", "-x or -y", "the -x"])
async def test_negation_only_query_matches_nothing_without_scanning(
    guarded: httpx.AsyncClient, me: dict[str, str], q: str
) -> None:
    await put(guarded, me, conversation=one_message("no such words"))
    response = await guarded.get(
        "/api/threads/search", params={"q": q, "syntax": "web"}, headers=me
    )
    assert response.status_code == 200, response.text
    assert response.json()["hits"] == []


def test_one_user_runs_at_most_a_few_searches_at_once() -> None:
    """Beyond MAX_SEARCHES_PER_USER running searches a user gets 429 (Retry-After), while
    other users still get a slot; slots come back when a search ends."""
    user, other = f"u-{secrets.token_hex(4)}", f"o-{secrets.token_hex(4)}"
    with ExitStack() as held:
        for _ in range(MAX_SEARCHES_PER_USER):
            held.enter_context(search_slot(user))
        with pytest.raises(RateLimited) as refused:
            held.enter_context(search_slot(user))
        assert refused.value.status == 429
        assert refused.value.headers() == {"Retry-After": "1"}
        held.enter_context(search_slot(other))
    with search_slot(user):
        pass
