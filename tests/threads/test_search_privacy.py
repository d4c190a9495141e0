"""What one organisation's search tells about another's private threads (issue 14 review).

The IDFs come from ``pg_stats``, shared by every organisation of the database, and a score or a
search cursor (base64 JSON + HMAC) shows them. The repro: alice's 200 private threads hold a
codename; carol, of another organisation, must get the same scores and cursor for it as for a
control word. The database is one of its own, with 400,000 background messages (SQL), so that
200 threads are a small tenant: under 0.1% of all messages (loomsync.core.textsearch.frequency).
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.config import Settings
from app.database import migrate_async
from app.threads import searchstats
from app.threads.cursors import TAG_BYTES
from tests.apps import serving
from tests.conftest import TokenFactory
from tests.database import create_database, drop_database
from tests.threads.test_search import messages, put, word

BACKGROUND = [
    """INSERT INTO threads (id, owner_id, org_id, version, visibility, created_at, updated_at,
                           last_activity_at, document, search_vector, title)
       SELECT gen_random_uuid(), 'background', 'background', 1, 'private', now(), now(),
              now() - i * interval '1 minute', '{}'::json, ''::tsvector, 'background'
       FROM generate_series(1, 400) AS i""",
    """INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)
       SELECT t.id, s, 'user', '{"role": "user", "content": "x"}'::json, '\\x00'::bytea,
              CAST('background filler' AS tsvector)
       FROM threads AS t, generate_series(0, 999) AS s""",
]


@pytest.fixture(scope="module")
async def shared_db(pg_server: str, settings: Settings) -> AsyncIterator[Settings]:
    url = await create_database(pg_server)
    await migrate_async(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        for statement in BACKGROUND:
            await conn.execute(text(statement))
    await engine.dispose()
    yield settings.model_copy(update={"database_url": url})
    searchstats.forget()
    await drop_database(pg_server, url)


async def _analyze(url: str) -> list[str]:
    """ANALYZE the messages; the lexemes ``pg_stats`` then lists."""
    engine = create_async_engine(url)
    try:
        async with engine.connect() as conn:
            autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(text("VACUUM ANALYZE thread_messages"))
            elems = await autocommit.execute(
                text(
                    "SELECT most_common_elems::text FROM pg_stats WHERE tablename ="
                    " 'thread_messages' AND attname = 'search_vector'"
                )
            )
            listed = elems.scalar()
    finally:
        await engine.dispose()
    searchstats.forget()
    return str(listed or "").strip("{}").split(",")


async def _page(client: httpx.AsyncClient, headers: dict[str, str], q: str) -> dict[str, Any]:
    response = await client.get(
        "/api/threads/search", params={"q": q, "limit": 1, "scope": "visible"}, headers=headers
    )
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def _payload(cursor: str) -> bytes:
    """A cursor without its tag: the JSON it carries (sort key, averages, candidates, IDFs)."""
    return base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))[TAG_BYTES:]


async def test_another_orgs_private_codename_scores_like_an_unknown_word(
    shared_db: Settings, auth: TokenFactory, new_user: Any, new_org: Any
) -> None:
    codename, control = word(), word()
    alice = auth(new_user("alice"), org=new_org("acme"))
    carol = auth(new_user("carol"), org=new_org("other"))
    async with serving(shared_db) as client:
        for i in range(200):
            await put(client, alice, conversation=messages(f"status of {codename} number {i}"))
        mine = [await put(client, carol, conversation=messages(f"{codename} {control}"))]
        mine.append(await put(client, carol, conversation=messages(f"{codename} {control}")))
        listed = await _analyze(str(shared_db.database_url))
        assert codename in listed
        assert control not in listed
        leaked, unknown = await _page(client, carol, codename), await _page(client, carol, control)
        assert [h["thread"]["id"] for h in leaked["hits"]] == [
            h["thread"]["id"] for h in unknown["hits"]
        ]
        assert leaked["hits"][0]["thread"]["id"] in mine
        assert [h["score"] for h in leaked["hits"]] == [h["score"] for h in unknown["hits"]]
        assert _payload(leaked["next_cursor"]) == _payload(unknown["next_cursor"])
        second = await client.get(
            "/api/threads/search",
            params={"q": codename, "limit": 1, "scope": "visible", "cursor": leaked["next_cursor"]},
            headers=carol,
        )
        assert second.status_code == 200, second.text
        assert [h["thread"]["id"] for h in second.json()["hits"]] != [
            h["thread"]["id"] for h in leaked["hits"]
        ]


@pytest.mark.parametrize(
    "change",
    [
        {"q": "note"},
        {"syntax": "web"},
        {"scope": "visible"},
        {"archived": "any"},
        {"workspace": "/elsewhere"},
    ],
)
async def test_a_cursor_answers_only_the_query_and_filters_it_was_issued_for(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Any, new_org: Any, change: Any
) -> None:
    me = auth(new_user("pager"), org=new_org("acme"))
    k = word()
    for _ in range(3):
        await put(client, me, conversation=messages(f"{k} note"))
    params = {"q": k, "limit": 1}
    first = await client.get("/api/threads/search", params=params, headers=me)
    cursor = first.json()["next_cursor"]
    same = await client.get(
        "/api/threads/search", params={**params, "q": f"  {k} ", "cursor": cursor}, headers=me
    )
    assert same.status_code == 200, same.text  # the same query, white space aside
    other = await client.get(
        "/api/threads/search", params={**params, **change, "cursor": cursor}, headers=me
    )
    assert other.status_code == 400, other.text
    assert other.headers["content-type"].startswith("application/problem+json")
