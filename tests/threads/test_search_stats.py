"""Corpus statistics are read again soon while a table has none (newcomer, issue 14): the first
searches after a first import ranked with uniform IDFs for five minutes, unlike the local search."""

from __future__ import annotations

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from app.database import migrate_async
from app.threads import searchstats
from tests.database import create_database, drop_database

ROWS = [
    """INSERT INTO threads (id, owner_id, org_id, version, visibility, created_at, updated_at,
                           last_activity_at, document, search_vector, title)
       SELECT gen_random_uuid(), 'u', 'o', 1, 'private', now(), now(), now(), '{}'::json,
              ''::tsvector, 't' FROM generate_series(1, 20)""",
    """INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)
       SELECT t.id, s, 'user', '{"role": "user", "content": "x"}'::json, '\\x00'::bytea,
              CAST('common word' AS tsvector) FROM threads AS t, generate_series(0, 49) AS s""",
]


async def test_a_snapshot_without_statistics_is_read_again_once_analysed(
    pg_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = await create_database(pg_server)
    engine = create_async_engine(url)
    try:
        await migrate_async(url)
        searchstats.forget()
        async with AsyncSession(engine) as session:
            assert (await searchstats.current(session)).freqs == {}
            for statement in ROWS:
                await session.execute(text(statement))
            await session.commit()
            await session.execute(text("ANALYZE thread_messages"))
            assert (await searchstats.current(session)).freqs == {}  # still cached
            monkeypatch.setattr(searchstats, "UNANALYSED_TTL_SECONDS", 0.0)
            fresh = await searchstats.current(session)
            assert fresh.freqs.get("common") == pytest.approx(1.0)
            monkeypatch.setattr(searchstats, "UNANALYSED_TTL_SECONDS", 10.0)
            await session.execute(text("DELETE FROM thread_messages"))
            assert (await searchstats.current(session)) is fresh  # with statistics: kept
    finally:
        searchstats.forget()
        await engine.dispose()
        await drop_database(pg_server, url)
