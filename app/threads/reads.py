"""Reading threads: one thread as output JSON, or its row, for the caller who may read it."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import LargeBinary, Row, Text, bindparam, func, literal, literal_column, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Forbidden, Gone, NotFound
from app.threads.access import AccessFacts, can_fork, can_read
from app.threads.documents import render_thread
from app.threads.tables import thread_messages, threads

#: Messages read by one statement of :func:`message_runs`.
RUN_MESSAGES = 250

#: The messages of a thread with seq in ``[:start, :stop)``: their JSON texts joined by commas
#: in seq order as UTF-8 bytes (``bytea``); NULL when there are none. Bytes, because asyncpg then
#: hands them over undecoded and they are joined into the output without becoming a ``str`` (one
#: emoji makes a Python string 4 bytes a character). Runs of bounded seq ranges, because one row
#: a message costs a Python object each (and the garbage collector's passes over them), one value
#: for the whole thread is buffered by asyncpg up to three times over, and a bounded range keeps
#: a stale row estimate from turning each statement into a scan of the whole thread.
#: bench/reads.py: a 30 MB thread's GET took 17x its size in memory and spent 75% of its time
#: splicing strings with one aggregate as text; now about 2x, and 1.2-1.3x the raw floor's time.
_RUN = select(
    func.string_agg(
        func.convert_to(
            thread_messages.c.body.cast(Text), literal_column("'UTF8'"), type_=LargeBinary
        ),
        aggregate_order_by(literal(b",", LargeBinary), thread_messages.c.seq),
    )
).where(
    thread_messages.c.thread_id == bindparam("thread_id"),
    thread_messages.c.seq >= bindparam("start"),
    thread_messages.c.seq < bindparam("stop"),
)


SUPPORT_DOES_NOT_COPY = (
    "Support access reads a thread and does not copy it: a fork needs access to the thread "
    "other than the support role."
)


def facts(row: Any) -> AccessFacts:
    """The access-deciding columns of a ``threads`` row."""
    return AccessFacts(row.owner_id, row.org_id, row.visibility, row.is_shared_with_support)


#: What :func:`load_row` selects: every column but ``document``, whose text comes as
#: ``document_text`` (built once, not per read).
_ROW_COLUMNS = (
    *(column for column in threads.c if column.name != "document"),
    threads.c.document.cast(Text).label("document_text"),
)


async def load_row(session: AsyncSession, thread_id: uuid.UUID) -> Row[Any] | None:
    """The row of a thread (deleted or not) with its document text (``document_text``); None
    when there is no such thread. The ``json`` column itself is not selected: only its text is
    used, and decoding it would cost a parse (and change numbers, API.md section 2)."""
    result = await session.execute(select(*_ROW_COLUMNS).where(threads.c.id == thread_id))
    return result.first()


async def render_row(session: AsyncSession, row: Any) -> bytes:
    """The output JSON of a row from :func:`load_row`, with its messages read now.

    The row and the messages are several statements: call this in the transaction that read the
    row and that either holds the thread's row lock (every write claims it first) or began
    with :func:`begin_snapshot`, so that both see the same version of the thread.
    """
    runs = await message_runs(session, row.id, row.message_count)
    return render_thread(row, row.document_text, runs)


async def message_runs(
    session: AsyncSession, thread_id: uuid.UUID, message_count: int
) -> list[bytes]:
    """The JSON texts of the thread's messages (seq ``0 … message_count - 1``) in order, as
    UTF-8 bytes, in runs of up to :data:`RUN_MESSAGES` joined by commas (one statement a run)."""
    runs = []
    for start in range(0, message_count, RUN_MESSAGES):
        params = {"thread_id": thread_id, "start": start, "stop": start + RUN_MESSAGES}
        run = (await session.execute(_RUN, params)).scalar()
        if run is not None:
            runs.append(run)
    return runs


async def begin_snapshot(session: AsyncSession) -> None:
    """Begin the session's transaction as REPEATABLE READ, so that all its statements read one
    snapshot (a read of a row and then its messages cannot straddle a concurrent write).

    Raises:
        RuntimeError: the session's transaction has begun already (too late to choose).
    """
    if session.in_transaction():
        raise RuntimeError("begin_snapshot needs a session with no transaction begun")
    await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})


async def read_thread(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> tuple[bytes, int]:
    """The thread as output JSON bytes and its version, read in one snapshot.

    Raises:
        NotFound: no such thread, or the caller may not read it.
        Gone: the thread was deleted.
    """
    await begin_snapshot(session)
    row = await load_readable(session, principal, thread_id)
    return await render_row(session, row), row.version


async def render(session: AsyncSession, thread_id: uuid.UUID) -> bytes:
    """The output document of a thread, read inside the current (writing) transaction."""
    row = await load_row(session, thread_id)
    assert row is not None
    return await render_row(session, row)


async def load_forkable(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> Row[Any]:
    """A thread row the caller may read, copy into a fork (:func:`can_fork`), and that is not
    deleted.

    Raises:
        NotFound, Gone: as :func:`load_readable`.
        Forbidden: the caller reads the thread only through the ``support`` role (API.md §4:
            support reads, and does not copy).
    """
    row = await load_readable(session, principal, thread_id)
    if not can_fork(principal, facts(row)):
        raise Forbidden(SUPPORT_DOES_NOT_COPY)
    return row


async def check_copy_of(session: AsyncSession, principal: Principal, source_id: uuid.UUID) -> None:
    """Refuse a whole-thread write whose document says it copies thread ``source_id``
    (``metadata.extra.forked_from``, as a client's local fork writes it) when the caller reads
    that thread only through the ``support`` role: the same rule as a fork on the server
    (API.md §4). A source that does not exist, or that the caller may not read at all, is left
    alone (refusing would tell that it exists).

    Raises:
        Forbidden: the caller is a support-only reader of ``source_id``.
    """
    access = (
        await session.execute(
            select(
                threads.c.owner_id,
                threads.c.org_id,
                threads.c.visibility,
                threads.c.is_shared_with_support,
            ).where(threads.c.id == source_id)
        )
    ).first()
    if access is not None and can_read(principal, facts(access)):
        if not can_fork(principal, facts(access)):
            raise Forbidden(SUPPORT_DOES_NOT_COPY)


async def load_readable(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> Row[Any]:
    """A thread row the caller may read and that is not deleted.

    Raises:
        NotFound, Gone.
    """
    row = await load_row(session, thread_id)
    if row is None or not can_read(principal, facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone()
    return row
