"""The online backfill of ``usage_daily`` for threads stored before the table existed.

Batches of :data:`BATCH` threads in id order (deleted ones skipped); each batch's assistant
messages are read, counted in Python (loomsync.core.usage, the same code as the write path)
and inserted by one statement per thread, then the progress row moves on. Run on a
connection in autocommit mode, every statement is its own short transaction: nothing stays locked, a
server keeps serving, and a stopped run resumes after ``usage_backfill.after_thread``.

A thread written between the read and the insert keeps what its writer counted: the insert
takes only threads whose ``version`` is still the one read, and threads that have rows
already are left alone.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.usage.rows import INSERT_USAGE, fallback_day, sums_of_bodies, usage_params

#: Threads a batch reads.
BATCH = 200

_NEXT_THREADS = text(
    "SELECT id, version, last_activity_at, CAST(document AS text) AS document FROM threads"
    " WHERE deleted_at IS NULL AND (CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid))"
    " AND NOT EXISTS (SELECT 1 FROM usage_daily u WHERE u.thread_id = threads.id)"
    " ORDER BY id LIMIT :n"
)
_MESSAGES = text(
    "SELECT thread_id, role, CAST(body AS text) AS body FROM thread_messages"
    " WHERE thread_id = ANY(CAST(:ids AS uuid[])) AND role = 'assistant'"
    " ORDER BY thread_id, seq"
)
_PROGRESS = text(
    "UPDATE usage_backfill SET after_thread = CAST(:after AS uuid),"
    " threads_done = threads_done + :threads,"
    " finished_at = CASE WHEN :done THEN now() END WHERE id = 1"
)


def backfill_sync(connection: Connection, *, again: bool = False) -> int:
    """Count every thread after the progress row's ``after_thread`` (from the start with
    ``again``) that has no rows yet; ``connection`` in autocommit mode. Returns threads read."""
    from loomsync.core.document import jsontext

    if again:
        connection.execute(
            text(
                "UPDATE usage_backfill SET after_thread = NULL, finished_at = NULL,"
                " started_at = now() WHERE id = 1"
            )
        )
    row = connection.execute(
        text("SELECT after_thread, finished_at FROM usage_backfill WHERE id = 1")
    ).first()
    if row is None or (row.finished_at is not None and not again):
        return 0
    after: uuid.UUID | None = row.after_thread
    total = 0
    while True:
        batch = connection.execute(_NEXT_THREADS, {"after": after, "n": BATCH}).all()
        if not batch:
            connection.execute(_PROGRESS, {"after": after, "threads": 0, "done": True})
            return total
        bodies = _bodies(connection, batch)
        for thread in batch:
            doc: Any = jsontext.loads(thread.document)
            if not isinstance(doc, dict):
                continue
            found = sums_of_bodies(
                bodies.get(thread.id, []), doc, fallback_day(thread.last_activity_at)
            )
            if found:
                params = usage_params(thread.id, doc, found, thread.version)
                connection.execute(INSERT_USAGE, params)
        after = batch[-1].id
        total += len(batch)
        connection.execute(_PROGRESS, {"after": after, "threads": len(batch), "done": False})


def _bodies(connection: Connection, batch: Sequence[Any]) -> dict[uuid.UUID, list[tuple[str, str]]]:
    rows = connection.execute(_MESSAGES, {"ids": [t.id for t in batch]}).all()
    out: dict[uuid.UUID, list[tuple[str, str]]] = {}
    for message in rows:
        out.setdefault(message.thread_id, []).append((message.role, message.body))
    return out
