"""Reading threads: one thread as output JSON, or its row, for the caller who may read it."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Row, Text, func, literal, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Gone, NotFound
from app.threads.access import AccessFacts, can_read
from app.threads.documents import render_thread
from app.threads.tables import thread_messages, threads

_MESSAGES_TEXT = (
    select(
        func.string_agg(
            thread_messages.c.body.cast(Text),
            aggregate_order_by(literal(","), thread_messages.c.seq),
        )
    )
    .where(thread_messages.c.thread_id == threads.c.id)
    .scalar_subquery()
)


def facts(row: Any) -> AccessFacts:
    """The access-deciding columns of a ``threads`` row."""
    return AccessFacts(row.owner_id, row.org_id, row.visibility, row.is_shared_with_support)


async def load_row(
    session: AsyncSession, thread_id: uuid.UUID, *, with_messages: bool
) -> Row[Any] | None:
    """The row of a thread (deleted or not) with its document text and, optionally, its
    messages' JSON texts joined by commas; None when there is no such thread."""
    columns: list[Any] = [threads, threads.c.document.cast(Text).label("document_text")]
    if with_messages:
        columns.append(_MESSAGES_TEXT.label("messages_text"))
    result = await session.execute(select(*columns).where(threads.c.id == thread_id))
    return result.first()


def render_row(row: Any) -> bytes:
    """The output JSON of a row from :func:`load_row`."""
    return render_thread(row, row.document_text, getattr(row, "messages_text", None))


async def read_thread(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> tuple[bytes, int]:
    """The thread as output JSON bytes and its version.

    Raises:
        NotFound: no such thread, or the caller may not read it.
        Gone: the thread was deleted.
    """
    row = await load_row(session, thread_id, with_messages=True)
    if row is None or not can_read(principal, facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone("The thread was deleted.")
    return render_row(row), row.version


async def render(session: AsyncSession, thread_id: uuid.UUID) -> bytes:
    """The output document of a thread, read inside the current transaction."""
    row = await load_row(session, thread_id, with_messages=True)
    assert row is not None
    return render_row(row)


async def load_readable(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> Row[Any]:
    """A thread row the caller may read and that is not deleted.

    Raises:
        NotFound, Gone.
    """
    row = await load_row(session, thread_id, with_messages=False)
    if row is None or not can_read(principal, facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone("The thread was deleted.")
    return row
