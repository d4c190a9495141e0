"""How search ranks (issue 14 item 2): words spread over messages, most words before some,
length-normalised scores, the best message, identifiers as phrases, strict web queries, and
scores that stay the same across the pages of one search."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text

from app.threads import searchstats
from tests.conftest import TokenFactory
from tests.threads.test_search import ids, messages, put, search, word


@pytest.fixture
def me(auth: TokenFactory, new_user, new_org) -> dict[str, str]:
    return auth(new_user("ranker"), org=new_org("rank"))


async def test_words_spread_over_two_messages_find_their_thread(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b = word(), word()
    spread = await put(client, me, conversation=messages(f"about {a}", f"and then {b}"))
    hits = await search(client, me, f"{a} {b}")
    assert ids(hits) == [spread]


async def test_more_of_the_words_ranks_first_and_a_missing_word_still_finds(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b, c, absent = word(), word(), word(), word()
    one = await put(client, me, conversation=messages(f"{a} only"))
    three = await put(
        client, me, conversation=messages(f"{a} {b} {c}"), last_activity_at="2020-01-01T00:00:00Z"
    )
    two = await put(client, me, conversation=messages(f"{a} {b}"))
    assert ids(await search(client, me, f"{a} {b} {c} {absent}")) == [three, two, one]


async def test_a_short_answer_outranks_a_huge_tool_dump_of_the_same_words(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    w = word()
    filler = " ".join(f"filler{i}word" for i in range(3_000))
    dump = await put(
        client,
        me,
        conversation=messages(f"{filler} {w} {filler}", role="tool"),
        last_activity_at="2030-01-01T00:00:00Z",
    )
    answer = await put(
        client,
        me,
        conversation=messages(f"the fix for {w}"),
        last_activity_at="2020-01-01T00:00:00Z",
    )
    assert ids(await search(client, me, w)) == [answer, dump]


async def test_the_best_message_is_the_users_words_not_a_tool_dump(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b = word(), word()
    filler = " ".join(f"filler{i}word" for i in range(2_000))
    conversation = {
        "messages": [
            {"role": "tool", "content": f"{filler} {a} {b} {filler}"},
            {"role": "user", "content": f"why does {a} break {b}?"},
            {"role": "assistant", "content": "no idea"},
        ]
    }
    await put(client, me, conversation=conversation)
    hits = await search(client, me, f"{a} {b}")
    assert hits[0]["message_index"] == 1


async def test_an_identifier_matches_as_a_phrase_not_as_scattered_parts(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b, c = word(), word(), word()
    whole = await put(client, me, conversation=messages(f"call {a}_{b}_{c}() here"))
    camel = await put(client, me, conversation=messages(f"or {a}{b.title()}{c.title()} there"))
    await put(client, me, conversation=messages(f"{c} then {b} and {a}"))
    assert set(ids(await search(client, me, f"{a}_{b}_{c}"))) == {whole, camel}


async def test_web_syntax_every_term_somewhere_in_the_thread_none_excluded(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b, x = word(), word(), word()
    spread = await put(client, me, conversation=messages(f"first {a}", f"later {b}"))
    await put(client, me, conversation=messages(f"only {a}"))
    excluded = await put(client, me, conversation=messages(f"{a} {b}", f"but also {x}"))
    titled = await put(client, me, metadata={"title": b}, conversation=messages(a))
    hits = await search(client, me, f"{a} {b}", syntax="web")
    assert set(ids(hits)) == {spread, excluded, titled}
    hits = await search(client, me, f"{a} {b} -{x}", syntax="web")
    assert set(ids(hits)) == {spread, titled}
    hits = await search(client, me, f'"{b} {a}"', syntax="web")
    assert ids(hits) == []


async def test_later_pages_score_with_the_statistics_of_the_first(
    app: FastAPI, client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """The cursor carries the IDFs: after the statistics change, page 2 still gives each
    thread the score it had when the search began, so pages neither repeat nor skip."""
    a, b = word(), word()
    for i in range(3):
        await put(client, me, conversation=messages(" ".join([a] * (i + 1)) + f" {b}"))
    before = {h["thread"]["id"]: h["score"] for h in await search(client, me, f"{a} {b}")}
    first = (
        await client.get("/api/threads/search", params={"q": f"{a} {b}", "limit": 1}, headers=me)
    ).json()
    for _ in range(30):  # b becomes common: its IDF falls
        await put(client, me, conversation=messages(b))
    async with app.state.engine.connect() as conn:
        autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.execute(text("ANALYZE thread_messages"))
    searchstats.forget()
    seen = ids(first["hits"])
    cursor = first["next_cursor"]
    while cursor:
        params = {"q": f"{a} {b}", "limit": 1, "cursor": cursor}
        page = (await client.get("/api/threads/search", params=params, headers=me)).json()
        for hit in page["hits"]:
            if hit["thread"]["id"] in before:
                assert hit["score"] == before[hit["thread"]["id"]]
        seen += ids(page["hits"])
        cursor = page["next_cursor"]
    assert len(seen) == len(set(seen))
    assert set(before) <= set(seen)
    fresh = {h["thread"]["id"]: h["score"] for h in await search(client, me, f"{a} {b}")}
    assert any(fresh[t] != before[t] for t in before)


async def test_a_cursor_of_another_query_shape_is_400(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    a, b = word(), word()
    for _ in range(2):
        await put(client, me, conversation=messages(f"{a} {b}"))
    page = (
        await client.get("/api/threads/search", params={"q": f"{a} {b}", "limit": 1}, headers=me)
    ).json()
    response = await client.get(
        "/api/threads/search", params={"q": a, "cursor": page["next_cursor"]}, headers=me
    )
    assert response.status_code == 400


@pytest.fixture
def real_lengths(monkeypatch: pytest.MonkeyPatch) -> searchstats.Stats:
    """Statistics with the average lengths of a real corpus instead of this database's.

    The test database holds thousands of two- and three-word messages from other tests, so
    after an ``ANALYZE`` its average message vector is about as short as the shortest test
    text, and length normalisation (:func:`loomsync.core.textsearch.scoring.bm25`) then
    penalises an ordinary sentence as if it were a tool dump: what ranks first would depend on
    which tests ran before. Real threads' messages are sentences and tool output, far longer
    than that, and the ranking rules were tuned on such a corpus (bench/search_judged).
    """
    stats = searchstats.Stats(messages=0.0, message_length=20.0, thread_length=200.0)

    async def pinned(session: object, ttl: float = searchstats.TTL_SECONDS) -> searchstats.Stats:
        return stats

    monkeypatch.setattr(searchstats, "current", pinned)
    return stats


@pytest.mark.usefixtures("real_lengths")
async def test_the_words_as_written_outrank_the_same_words_scattered(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    """The phrase bonus (issue 14 review): a plain query of several words scores them in order
    as one more phrase, so an answer that says them together outranks a shorter message that
    scatters them; quoted, they are one phrase unit (ranked: nothing else is required). The
    corpus statistics are pinned (:func:`real_lengths`): with this database's own, the order
    depended on the tests that ran before (CI, stop 22)."""
    a, b, c = word(), word(), word()
    exact = await put(
        client,
        me,
        conversation=messages(
            f"Looking at the logs I saw the {a} {b} {c} error right after the deploy, so the "
            "workers were starved.",
            role="assistant",
        ),
    )
    scattered = await put(client, me, conversation=messages(f"{b}? {a}? {c}!"))
    assert ids(await search(client, me, f"{a} {b} {c}")) == [exact, scattered]
    assert ids(await search(client, me, f'"{a} {b} {c}"')) == [exact]
    assert ids(await search(client, me, f'"{a} {b} {c}" {word()}')) == [exact]
    assert set(ids(await search(client, me, f'"{b} {a}" {c}'))) == {exact, scattered}
