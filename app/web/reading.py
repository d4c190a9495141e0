"""What the viewer pages read: a thread's row (with the access rules of API.md section 4) and
a range of its messages, in one REPEATABLE READ snapshot so a page never mixes two versions.

A page reads at most :data:`PAGE` messages by primary-key range, so the cost of a page does not
grow with the thread (bench/viewer.py); and of each message larger than
:data:`app.web.clipped.WHOLE_BYTES` only its digest (app/web/clipped.py: the fields shown, each
cut in SQL), so it does not grow with the messages' sizes either. A read with ``whole`` (one
message in full: ``/m/{seq}``, ``/m/{seq}/body``, ``/m/{seq}/raw``) reads the body whole.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Subquery, Text, case, func, literal_column, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Gone, NotFound
from app.threads.reads import begin_snapshot, load_readable, load_row
from app.threads.tables import thread_messages
from app.web.clipped import (
    CLIP_CHARS,
    WHOLE_BYTES,
    Clipped,
    calls_sql,
    digest_sql,
    restore,
)
from loomsync.core.document import jsontext

#: Messages on one page (the first paint, and each page loaded on scroll).
PAGE = 50


@dataclass(frozen=True, slots=True)
class Loaded:
    """A thread's row and the decoded messages ``start …`` of one read."""

    row: Any
    document: dict[str, Any]
    start: int
    messages: list[tuple[int, Any]]


def page_start(seq: int) -> int:
    """The first message of the page holding message ``seq``."""
    return seq - seq % PAGE


async def read_for(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    start: int,
    count: int,
    whole: bool = False,
) -> Loaded:
    """Messages ``[start, start + count)`` of a thread ``principal`` may read (large ones as
    digests unless ``whole``).

    Raises:
        NotFound: no such thread, the caller may not read it, or ``start`` is past its end
            (``start`` 0 of an empty thread is a page).
        Gone: the thread was deleted.
    """
    await begin_snapshot(session)
    row = await load_readable(session, principal, thread_id)
    return await _messages(session, row, start, count, whole)


async def read_shared(
    session: AsyncSession, thread_id: uuid.UUID, start: int, count: int, whole: bool = False
) -> Loaded:
    """As :func:`read_for`, for a thread a live share link names (no access check: the link is
    the permission).

    Raises:
        Gone: the thread was deleted (its links died with it).
        NotFound: ``start`` is past the end.
    """
    await begin_snapshot(session)
    row = await load_row(session, thread_id)
    if row is None or row.deleted_at is not None:
        raise Gone()
    return await _messages(session, row, start, count, whole)


async def _messages(session: AsyncSession, row: Any, start: int, count: int, whole: bool) -> Loaded:
    if start > 0 and start >= row.message_count:
        raise NotFound(f"The thread has {row.message_count} messages.")
    text = thread_messages.c.body.cast(Text)
    small = func.octet_length(text) <= WHOLE_BYTES
    result = await session.execute(
        select(thread_messages.c.seq, text if whole else case((small, text)))
        .where(
            thread_messages.c.thread_id == row.id,
            thread_messages.c.seq >= start,
            thread_messages.c.seq < start + count,
        )
        .order_by(thread_messages.c.seq)
    )
    messages = [
        (seq, _decode(body) if body is not None else await _digest(session, row.id, seq))
        for seq, body in result.all()
    ]
    document = _decode(row.document_text)
    return Loaded(row, document if isinstance(document, dict) else {}, start, messages)


async def _digest(session: AsyncSession, thread_id: uuid.UUID, seq: int) -> Any:
    """The digest of a large message (app/web/clipped.py). When PostgreSQL's JSON operators
    refuse the body (a ``\\u0000`` or a lone surrogate escape in it cannot be converted to
    text; tried in a savepoint so the page's snapshot survives), the message is shown by its
    role and the start of its JSON text as a clipped ``content`` ("show all" renders it)."""
    key = (thread_messages.c.thread_id == thread_id) & (thread_messages.c.seq == seq)
    try:
        async with session.begin_nested():
            parsed = jsonb_of(key, "j")
            fields, has_calls = (
                await session.execute(
                    select(
                        digest_sql("parsed.j"), literal_column("parsed.j ? 'tool_calls'")
                    ).select_from(parsed)
                )
            ).one()
            digest = restore(_decode(fields or "{}"))
            if has_calls and isinstance(digest, dict):
                parsed = jsonb_of(key, "j", "tool_calls")
                calls = await session.scalar(select(calls_sql("parsed.j")).select_from(parsed))
                digest["tool_calls"] = restore(_decode(calls or "null"))
        return digest
    except DBAPIError:
        text = thread_messages.c.body.cast(Text)
        found = (
            await session.execute(
                select(
                    thread_messages.c.role, func.left(text, CLIP_CHARS), func.octet_length(text)
                ).where(key)
            )
        ).one()
        return {"role": found[0], "content": Clipped(found[1], found[2])}


def jsonb_of(key: ColumnElement[bool], name: str, field: str | None = None) -> Subquery:
    """``SELECT body::jsonb [-> field] AS name … OFFSET 0`` of the message ``key`` selects, as
    the subquery ``parsed`` (``OFFSET 0``: computed once, not inlined into every use)."""
    value: ColumnElement[Any] = thread_messages.c.body.cast(JSONB)
    if field is not None:
        value = value.op("->")(field)
    return select(value.label(name)).where(key).offset(0).subquery("parsed")


def _decode(text: str) -> Any:
    try:
        return jsontext.loads(text)
    except (ValueError, RecursionError):
        return {"role": "other", "content": text}
