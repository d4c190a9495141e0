"""The message and commit rows of a thread (``thread_messages``, ``thread_commits``).

Messages are written in one statement per batch (``unnest`` of parallel arrays), each with its
exact JSON text, SHA-256 and search vector; a replace rewrites only the rows whose hash changed.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from app.threads import hotsql
from app.threads.documents import PreparedMessage, changed_indexes, commit_shas
from app.threads.indexing import MESSAGE_VECTOR_SQL
from app.threads.tables import thread_commits, thread_messages
from loomsync.core.textsearch.vectors import VERSION as SEARCH_VERSION

_UNNEST = (
    "unnest(CAST(:seqs AS integer[]), CAST(:roles AS text[]), CAST(:bodies AS text[]),"
    " CAST(:hashes AS bytea[]), CAST(:vectors AS text[]))"
    " AS u(seq, role, body, content_hash, vector)"
)
#: The insert of a batch, driver SQL (:func:`app.threads.hotsql.execute`): ``$1`` the thread,
#: ``$2``-``$6`` the parallel arrays of :func:`_message_params`, in its order.
_INSERT_MESSAGES = (
    "INSERT INTO thread_messages"
    " (thread_id, seq, role, body, content_hash, search_vector, search_version)"
    f" SELECT CAST($1 AS uuid), u.seq, u.role, CAST(u.body AS json), u.content_hash,"
    f" {MESSAGE_VECTOR_SQL}, {SEARCH_VERSION}"
    " FROM unnest(CAST($2 AS integer[]), CAST($3 AS text[]), CAST($4 AS text[]),"
    " CAST($5 AS bytea[]), CAST($6 AS text[])) AS u(seq, role, body, content_hash, vector)"
)
_UPDATE_MESSAGES = text(
    "UPDATE thread_messages AS m SET role = u.role, body = CAST(u.body AS json),"
    f" content_hash = u.content_hash, search_vector = {MESSAGE_VECTOR_SQL},"
    f" search_version = {SEARCH_VERSION}"
    f" FROM {_UNNEST} WHERE m.thread_id = CAST(:thread_id AS uuid) AND m.seq = u.seq"
)


def _message_params(thread_id: uuid.UUID, messages: Sequence[PreparedMessage]) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "seqs": [m.seq for m in messages],
        "roles": [m.role for m in messages],
        "bodies": [m.body for m in messages],
        "hashes": [m.content_hash for m in messages],
        "vectors": [m.vector for m in messages],
    }


async def write_commits(
    session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any], *, replace: bool
) -> None:
    """Index the document's commit SHAs (``replace``: drop those indexed before)."""
    if replace:
        await session.execute(delete(thread_commits).where(thread_commits.c.thread_id == thread_id))
    shas = commit_shas(doc)
    if shas:
        stmt = text(
            "INSERT INTO thread_commits (thread_id, sha)"
            " SELECT CAST(:thread_id AS uuid), s FROM unnest(CAST(:shas AS text[])) AS s"
            " ON CONFLICT DO NOTHING"
        )
        await session.execute(stmt, {"thread_id": thread_id, "shas": shas})


async def insert_messages(
    session: AsyncSession, thread_id: uuid.UUID, messages: Sequence[PreparedMessage]
) -> None:
    """Insert ``messages`` (their ``seq`` numbers are set already), as driver SQL in the
    session's transaction (app/threads/hotsql.py: one of the hot statements of the writes)."""
    if messages:
        params = _message_params(thread_id, messages)
        await hotsql.execute(session, _INSERT_MESSAGES, tuple(params.values()))


async def replace_messages(
    session: AsyncSession, thread_id: uuid.UUID, messages: Sequence[PreparedMessage]
) -> None:
    """Make the stored messages equal ``messages``, rewriting only rows whose hash changed."""
    result = await session.execute(
        select(thread_messages.c.content_hash)
        .where(thread_messages.c.thread_id == thread_id)
        .order_by(thread_messages.c.seq)
    )
    old_hashes = [bytes(h) for h in result.scalars()]
    changed = [messages[i] for i in changed_indexes(old_hashes, messages)]
    if changed:
        await session.execute(_UPDATE_MESSAGES, _message_params(thread_id, changed))
    if len(old_hashes) > len(messages):
        await session.execute(
            delete(thread_messages).where(
                thread_messages.c.thread_id == thread_id, thread_messages.c.seq >= len(messages)
            )
        )
    await insert_messages(session, thread_id, messages[len(old_hashes) :])


async def copy_messages(
    session: AsyncSession, source_id: uuid.UUID, target_id: uuid.UUID, up_to: int
) -> None:
    """Copy the source's messages ``[0, up_to)`` to the target (a fork), inside PostgreSQL;
    each copy keeps its source's ``search_version``, so a copy of a vector not rebuilt yet is
    rebuilt too (app/threads/reindex.py)."""
    await session.execute(
        text(
            "INSERT INTO thread_messages"
            " (thread_id, seq, role, body, content_hash, search_vector, search_version)"
            " SELECT CAST(:new_id AS uuid), seq, role, body, content_hash, search_vector,"
            " search_version"
            " FROM thread_messages WHERE thread_id = CAST(:source_id AS uuid) AND seq < :up_to"
        ),
        {"new_id": target_id, "source_id": source_id, "up_to": up_to},
    )
