"""EXPLAIN of the search statement uses the GIN and prefix indexes (asserts on the plan, never on time).

The plans are taken on a database of their own, filled with 2,000 threads and 20,000 messages and
ANALYZEd, so the planner weighs the indexes as it would on a real corpus.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, create_async_engine

from app.auth import Principal
from app.database import migrate_async
from app.threads import searchstats
from app.threads.ranking import SearchFilters, plan_ranking, scored_hits
from loomsync.core.textsearch.commits import commit_prefix
from loomsync.core.textsearch.query import parse
from tests.database import create_database, drop_database

FILL = [
    """INSERT INTO threads (id, owner_id, org_id, version, visibility, created_at, updated_at,
                           last_activity_at, document, search_vector, title)
       SELECT gen_random_uuid(), 'user' || (i % 50), 'org' || (i % 5), 1,
              (ARRAY['private', 'organization', 'public'])[1 + i % 3], now(), now(),
              now() - i * interval '1 minute', '{}'::json,
              to_tsvector('english', 'thread title number ' || i), 'thread title number ' || i
       FROM generate_series(1, 2000) AS i""",
    """INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)
       SELECT t.id, s, 'user', '{"role": "user", "content": "x"}'::json, '\\x00'::bytea,
              to_tsvector('english', 'common words in message ' || md5(s::text || t.id::text))
       FROM threads AS t, generate_series(0, 9) AS s""",
    """INSERT INTO thread_commits (thread_id, sha)
       SELECT id, md5(id::text) || 'abcdefgh' FROM threads""",
    "ANALYZE",
]


@pytest.fixture(scope="module")
async def filled(pg_server: str) -> AsyncIterator[AsyncEngine]:
    url = await create_database(pg_server)
    await migrate_async(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        for statement in FILL:
            await conn.execute(text(statement))
    async with engine.connect() as conn:
        autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.execute(text("VACUUM ANALYZE"))  # statistics, and GIN pending lists merged
    yield engine
    await engine.dispose()
    await drop_database(pg_server, url)


async def _plan(engine: AsyncEngine, q: str, scope: str) -> str:
    principal = Principal(user_id="user7", org_id="org2", roles=frozenset())
    query = parse(q)
    async with AsyncSession(engine) as session:
        ranking = plan_ranking(query, await searchstats.read(session))
    statement = scored_hits(
        principal, query, ranking, SearchFilters(scope=scope), None, 20, commit_prefix(q)
    )
    sql = str(
        statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    )
    async with engine.connect() as conn:
        rows = await conn.execute(text("EXPLAIN " + sql))
        return "\n".join(r[0] for r in rows)


@pytest.mark.parametrize("scope", ["mine", "visible"])
async def test_word_search_uses_the_message_gin_index(filled: AsyncEngine, scope: str) -> None:
    plan = await _plan(filled, "zebra parser", scope)
    assert "thread_messages_search" in plan, plan


async def test_visible_scope_word_search_uses_the_thread_gin_index(filled: AsyncEngine) -> None:
    plan = await _plan(filled, "zebra parser", "visible")
    assert "threads_search" in plan, plan


async def test_commit_prefix_search_uses_the_prefix_index(filled: AsyncEngine) -> None:
    plan = await _plan(filled, "abcdef1", "visible")
    assert "thread_commits_sha_prefix" in plan, plan
