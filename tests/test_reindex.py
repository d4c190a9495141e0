"""The online rebuild of search vectors (issue 14; migration 0007; app/threads/reindex.py), on a
real database holding rows written by the old code: vectors made by PostgreSQL's
``to_tsvector('english')`` before migration 0007 existed."""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

import asyncpg
import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from app.auth import create_token
from app.config import Settings
from app.database import alembic_config, migrate
from app.threads.documents import (
    derived_columns,
    dump_json,
    parse_json,
    prepare_messages,
    storable_document,
)
from app.threads.indexing import message_vector, thread_vector
from app.threads.reindex import LOCK_KEY, due, rebuild
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from loomsync.core.textsearch.vectors import VERSION
from tests.apps import serving
from tests.database import _asyncpg_dsn, create_database, drop_database
from tests.documents import thread_doc

THREADS = 12
MESSAGES = 5
# What the code before migration 0007 stored (app/threads/indexing.py at 0006).
OLD_THREAD_SQL = (
    "INSERT INTO threads (id, owner_id, org_id, version, visibility, created_at, updated_at,"
    " last_activity_at, title, message_count, document, search_vector)"
    " VALUES ($1, $2, $3, 1, 'private', now(), now(), now(), $4, $5, CAST($6 AS json),"
    " setweight(to_tsvector('english', $4), 'A'))"
)
OLD_MESSAGE_SQL = (
    "INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)"
    " VALUES ($1, $2, $3, CAST($4 AS json), $5,"
    " setweight(to_tsvector('english', CAST($4 AS json)->>'content'), 'C'))"
)


def _doc(n: int) -> dict[str, Any]:
    texts = [f"message {i} of thread {n}: call exportEnvVars before the build" for i in range(5)]
    return thread_doc(ThreadId.new(), *texts, metadata={"title": f"thread {n} loadConfigFile"})


async def _write_old_rows(url: str, owner: str, org: str) -> list[dict[str, Any]]:
    """Store threads as the old code did; their documents (with ids)."""
    conn = await asyncpg.connect(_asyncpg_dsn(url))
    docs = [_doc(n) for n in range(THREADS)]
    try:
        for doc in docs:
            thread = Thread.model_validate(doc)
            stored = storable_document(thread)
            messages = prepare_messages(doc["conversation"]["messages"])
            await conn.execute(
                OLD_THREAD_SQL,
                ThreadId(doc["id"]).uuid,
                owner,
                org,
                derived_columns(stored)["title"],
                len(messages),
                dump_json(stored),
            )
            for m in messages:
                await conn.execute(
                    OLD_MESSAGE_SQL, ThreadId(doc["id"]).uuid, m.seq, m.role, m.body, m.content_hash
                )
    finally:
        await conn.close()
    return docs


@pytest.fixture
async def old_database(pg_server: str) -> AsyncIterator[tuple[str, list[dict[str, Any]], str]]:
    """A database at revision 0006 with rows written the old way, then migrated to head:
    ``(url, documents, owner)``."""
    url = await create_database(pg_server)
    owner, org = f"owner-{uuid.uuid4().hex[:8]}", "acme"
    try:
        await asyncio.to_thread(command.upgrade, alembic_config(url), "0006")
        docs = await _write_old_rows(url, owner, org)
        await asyncio.to_thread(migrate, url)
        yield url, docs, owner
    finally:
        await drop_database(pg_server, url)


async def _rows(engine: AsyncEngine) -> tuple[list[Any], list[Any]]:
    async with engine.connect() as conn:
        threads = list(
            await conn.execute(
                text(
                    "SELECT id, document::text AS source, search_vector::text AS vector,"
                    " search_version FROM threads"
                )
            )
        )
        messages = list(
            await conn.execute(
                text(
                    "SELECT thread_id, seq, body::text AS source, search_vector::text AS vector,"
                    " search_version FROM thread_messages"
                )
            )
        )
    return threads, messages


async def _assert_all_current(engine: AsyncEngine, threads_stored: int = THREADS) -> None:
    """Every row holds exactly the vector the write path makes today from what is stored."""
    threads, messages = await _rows(engine)
    assert len(threads) == threads_stored
    assert len(messages) >= THREADS * MESSAGES
    async with engine.connect() as conn:

        async def same(stored: str, made: str) -> bool:
            return bool(
                await conn.scalar(
                    text("SELECT CAST(:stored AS tsvector) = CAST(:made AS tsvector)"),
                    {"stored": stored, "made": made},
                )
            )

        for t in threads:
            assert t.search_version == VERSION
            assert await same(t.vector, thread_vector(parse_json(t.source))), t.id
        for m in messages:
            assert m.search_version == VERSION
            assert await same(m.vector, message_vector(parse_json(m.source))), (m.thread_id, m.seq)


OLD_SERVER_UPDATE = (
    "UPDATE thread_messages SET body = CAST($3 AS json), content_hash = $4,"
    " search_vector = setweight(to_tsvector('english', CAST($3 AS json)->>'content'), 'C')"
    " WHERE thread_id = $1 AND seq = $2"
)


async def _old_server_rewrites(url: str, key: tuple[uuid.UUID, int]) -> None:
    """A server still on the old code replaces a message (it knows no ``search_version``)."""
    (message,) = prepare_messages([{"role": "user", "content": "an old server wrote wombats"}])
    conn = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        await conn.execute(OLD_SERVER_UPDATE, *key, message.body, message.content_hash)
    finally:
        await conn.close()


def _settings(url: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        database_url=url, jwt_secret=secrets.token_urlsafe(48), rate_limit="off", _env_file=None
    )


async def test_every_old_row_is_rebuilt_and_writes_made_meanwhile_are_kept(
    old_database: tuple[str, list[dict[str, Any]], str],
) -> None:
    url, docs, owner = old_database
    settings = _settings(url)
    headers = {"Authorization": f"Bearer {create_token(settings, owner, org='acme')}"}
    engine = create_async_engine(url)
    written: dict[str, ThreadId] = {}
    try:
        _, messages = await _rows(engine)
        assert {m.search_version for m in messages} == {0}
        assert await due(engine)
        async with serving(settings) as client:

            async def write_meanwhile(target: str, keys: Sequence[tuple[uuid.UUID, int]]) -> None:
                # between reading a batch and writing it, replace one of its threads over HTTP
                if target in written:
                    return
                tid = ThreadId.from_uuid(keys[-1][0])
                word = "quokkafied" if target == "threads" else "zebracorn"
                current = (await client.get(f"/api/threads/{tid}", headers=headers)).json()
                new = thread_doc(
                    tid,
                    *[f"{word} message {i}" for i in range(MESSAGES)],
                    metadata={"title": f"a {word} title"},
                )
                response = await client.put(
                    f"/api/threads/{tid}",
                    json=new,
                    headers={**headers, "If-Match": f'"{current["version"]}"'},
                )
                assert response.status_code == 200, response.text
                written[target] = tid
                if target == "thread_messages":
                    await _old_server_rewrites(url, keys[0])

            # a fork copies its source's vectors, and their version: still 0, rebuilt too
            source = ThreadId(docs[0]["id"])
            fork = await client.post(f"/api/threads/{source}/fork", json={}, headers=headers)
            assert fork.status_code == 201, fork.text
            _, messages = await _rows(engine)
            assert {m.search_version for m in messages} == {0}
            # what the new code writes is current already: the rebuild has nothing to do there
            fresh = ThreadId.new()
            created = await client.put(
                f"/api/threads/{fresh}", json=thread_doc(fresh, "new words"), headers=headers
            )
            assert created.status_code == 201, created.text
            threads, messages = await _rows(engine)
            assert {t.search_version for t in threads if t.id == fresh.uuid} == {VERSION}
            assert {m.search_version for m in messages if m.thread_id == fresh.uuid} == {VERSION}
            outcome = await rebuild(engine, batch_rows=7, pause=write_meanwhile)
        assert outcome.ran
        assert outcome.finished
        assert set(written) == {"threads", "thread_messages"}
        assert all(t.skipped >= 1 for t in outcome.tallies)  # the rows written meanwhile
        await _assert_all_current(engine, THREADS + 2)  # and the fork and the new thread
        async with engine.connect() as conn:
            for target, word in (("threads", "quokkafi"), ("thread_messages", "zebracorn")):
                tid = written[target].uuid
                assert await conn.scalar(
                    text("SELECT search_vector @@ CAST(:q AS tsquery) FROM threads WHERE id = :id")
                    if target == "threads"
                    else text(
                        "SELECT bool_and(search_vector @@ CAST(:q AS tsquery))"
                        " FROM thread_messages WHERE thread_id = :id"
                    ),
                    {"q": word, "id": tid},
                )
            # the old server's write was not overwritten from what the batch had read: the
            # sweep rebuilt it from what that server stored
            assert await conn.scalar(
                text("SELECT count(*) FROM thread_messages WHERE search_vector @@ 'wombat'")
            )
            # the new analyzer's camelCase parts, which the old vectors lacked
            found = await conn.scalar(
                text("SELECT count(*) FROM thread_messages WHERE search_vector @@ 'export & env'")
            )
            assert found == (THREADS - 2 + 1) * MESSAGES - 1
        assert not await due(engine)
    finally:
        await engine.dispose()


async def test_a_row_locked_throughout_is_left_for_the_next_run_which_resumes(
    old_database: tuple[str, list[dict[str, Any]], str],
) -> None:
    url, docs, _ = old_database
    engine = create_async_engine(url)
    holder = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        locked = ThreadId(docs[3]["id"]).uuid
        tx = holder.transaction()
        await tx.start()
        await holder.execute(
            "SELECT 1 FROM thread_messages WHERE thread_id = $1 AND seq = 2 FOR UPDATE", locked
        )
        await holder.execute("SELECT 1 FROM threads WHERE id = $1 FOR UPDATE", locked)
        first = await rebuild(engine, batch_rows=7)
        await tx.rollback()
        assert first.ran
        assert not first.finished
        by_target = {t.target: t for t in first.tallies}
        assert by_target["thread_messages"].left == 1
        assert by_target["thread_messages"].rebuilt == THREADS * MESSAGES - 1
        assert by_target["threads"].left == 1
        assert await due(engine)

        second = await rebuild(engine, batch_rows=7)
        assert second.finished
        # resumed: only the row left behind is written again
        assert [(t.target, t.rebuilt) for t in second.tallies] == [
            ("threads", 1),
            ("thread_messages", 1),
        ]
        await _assert_all_current(engine)
        assert not await due(engine)
    finally:
        await holder.close()
        await engine.dispose()


async def test_a_second_rebuild_leaves_the_work_to_the_first(
    old_database: tuple[str, list[dict[str, Any]], str],
) -> None:
    url, _, _ = old_database
    engine = create_async_engine(url)
    holder = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        await holder.execute("SELECT pg_advisory_lock($1)", LOCK_KEY)
        outcome = await rebuild(engine)
        assert not outcome.ran
        _, messages = await _rows(engine)
        assert {m.search_version for m in messages} == {0}
    finally:
        await holder.close()
        await engine.dispose()


async def test_serve_starts_a_rebuild_that_runs_to_the_end(
    old_database: tuple[str, list[dict[str, Any]], str],
) -> None:
    """What ``serve`` does when vectors are stale: :func:`app.cli.start_reindex` runs
    ``python -m app.cli reindex --nice`` in a child process (it once answered "No such command
    'reindex'": the command is registered on app.cli as imported, not on the __main__ copy)."""
    from app.cli import start_reindex

    url, _docs, _owner = old_database
    child = await asyncio.to_thread(start_reindex, url, _settings(url))
    assert child is not None
    deadline = time.monotonic() + 120
    while child.returncode is None and time.monotonic() < deadline:  # set by its reaper thread
        await asyncio.sleep(0.1)
    assert child.returncode == 0, "the finished rebuild was not reaped (a <defunct> child)"
    engine = create_async_engine(url)
    try:
        assert not await due(engine)
        await _assert_all_current(engine)
    finally:
        await engine.dispose()
