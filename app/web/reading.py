"""What the viewer pages read: a thread's row (with the access rules of API.md section 4) and
a range of its messages, in one REPEATABLE READ snapshot so a page never mixes two versions.

A page reads at most :data:`PAGE` messages by primary-key range, so the cost of a page does not
grow with the thread (bench/viewer.py).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Gone, NotFound
from app.threads.reads import begin_snapshot, load_readable, load_row
from app.threads.tables import thread_messages
from loomsync import jsontext

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
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID, start: int, count: int
) -> Loaded:
    """Messages ``[start, start + count)`` of a thread ``principal`` may read.

    Raises:
        NotFound: no such thread, the caller may not read it, or ``start`` is past its end
            (``start`` 0 of an empty thread is a page).
        Gone: the thread was deleted.
    """
    await begin_snapshot(session)
    row = await load_readable(session, principal, thread_id)
    return await _messages(session, row, start, count)


async def read_shared(
    session: AsyncSession, thread_id: uuid.UUID, start: int, count: int
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
        raise Gone("The thread was deleted.")
    return await _messages(session, row, start, count)


async def _messages(session: AsyncSession, row: Any, start: int, count: int) -> Loaded:
    if start > 0 and start >= row.message_count:
        raise NotFound(f"The thread has {row.message_count} messages.")
    result = await session.execute(
        select(thread_messages.c.seq, thread_messages.c.body.cast(Text))
        .where(
            thread_messages.c.thread_id == row.id,
            thread_messages.c.seq >= start,
            thread_messages.c.seq < start + count,
        )
        .order_by(thread_messages.c.seq)
    )
    messages = [(seq, _decode(body)) for seq, body in result.all()]
    document = _decode(row.document_text)
    return Loaded(row, document if isinstance(document, dict) else {}, start, messages)


def _decode(text: str) -> Any:
    try:
        return jsontext.loads(text)
    except (ValueError, RecursionError):
        return {"role": "other", "content": text}
