"""The online backfill of ``thread_files`` for threads stored before the index existed.

Batches of :data:`BATCH` threads in id order; each batch is read (the messages holding tool
calls only), extracted in Python (loomsync.core.provenance, the same code as the write path)
and inserted by one statement, then the progress row moves on. Run on a connection in
autocommit mode, every statement is its own short transaction: nothing stays locked, a server
keeps serving, and a stopped run resumes after ``provenance_backfill.after_thread``.

A thread replaced between the read and the insert keeps what its writer indexed: the insert
only takes rows of threads whose ``version`` is still the one read.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from app.provenance.rows import file_touches

#: Threads a batch reads.
BATCH = 200

_NEXT_THREADS = text(
    "SELECT id, version, workspace_root FROM threads"
    " WHERE CAST(:after AS uuid) IS NULL OR id > CAST(:after AS uuid) ORDER BY id LIMIT :n"
)
_TOOL_MESSAGES = text(
    "SELECT thread_id, seq, CAST(body AS text) AS body FROM thread_messages"
    " WHERE thread_id = ANY(CAST(:ids AS uuid[]))"
    " AND strpos(CAST(body AS text), '\"tool_calls\"') > 0 ORDER BY thread_id, seq"
)
_INSERT = text(
    "INSERT INTO thread_files (thread_id, path, seq, action, via)"
    " SELECT u.thread_id, u.path, u.seq, u.action, u.via"
    " FROM unnest(CAST(:ids AS uuid[]), CAST(:versions AS integer[]), CAST(:paths AS text[]),"
    " CAST(:seqs AS integer[]), CAST(:actions AS text[]), CAST(:vias AS text[]))"
    " AS u(thread_id, version, path, seq, action, via)"
    " JOIN threads t ON t.id = u.thread_id AND t.version = u.version"
    " ON CONFLICT DO NOTHING"
)
_PROGRESS = text(
    "UPDATE provenance_backfill SET after_thread = CAST(:after AS uuid),"
    " threads_done = threads_done + :threads, files_found = files_found + :files,"
    " finished_at = CASE WHEN :done THEN now() END WHERE id = 1"
)


def backfill_sync(connection: Connection, *, again: bool = False) -> tuple[int, int]:
    """Index every thread after the progress row's ``after_thread`` (all of them with
    ``again``); ``connection`` in autocommit mode. Returns (threads read, file rows found)."""
    if again:
        connection.execute(
            text(
                "UPDATE provenance_backfill SET after_thread = NULL, finished_at = NULL,"
                " started_at = now() WHERE id = 1"
            )
        )
    row = connection.execute(
        text("SELECT after_thread, finished_at FROM provenance_backfill WHERE id = 1")
    ).first()
    if row is None or (row.finished_at is not None and not again):
        return 0, 0
    after: uuid.UUID | None = row.after_thread
    total_threads = total_files = 0
    while True:
        batch = connection.execute(_NEXT_THREADS, {"after": after, "n": BATCH}).all()
        if not batch:
            connection.execute(_PROGRESS, {"after": after, "threads": 0, "files": 0, "done": True})
            return total_threads, total_files
        found = _batch_rows(connection, batch)
        if found["paths"]:
            connection.execute(_INSERT, found)
        after = batch[-1].id
        total_threads += len(batch)
        total_files += len(found["paths"])
        connection.execute(
            _PROGRESS,
            {"after": after, "threads": len(batch), "files": len(found["paths"]), "done": False},
        )


def _batch_rows(connection: Connection, batch: Sequence[Any]) -> dict[str, list[Any]]:
    """The parallel arrays of :data:`_INSERT` for one batch of thread rows."""
    rows = connection.execute(_TOOL_MESSAGES, {"ids": [t.id for t in batch]}).all()
    bodies: dict[uuid.UUID, list[tuple[int, str]]] = {}
    for message in rows:
        bodies.setdefault(message.thread_id, []).append((message.seq, message.body))
    out: dict[str, list[Any]] = {
        k: [] for k in ("ids", "versions", "paths", "seqs", "actions", "vias")
    }
    for thread in batch:
        root = thread.workspace_root
        for touch in file_touches(bodies.get(thread.id, []), root):
            out["ids"].append(thread.id)
            out["versions"].append(thread.version)
            out["paths"].append(touch.path)
            out["seqs"].append(touch.message_index)
            out["actions"].append(touch.action)
            out["vias"].append(touch.via)
    return out
