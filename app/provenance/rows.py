"""Writing ``thread_files`` rows: from stored message texts, in the writer's transaction."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loomsync.core.document import jsontext
from loomsync.core.provenance.touches import Touch, touches_indexed

#: The one marker every message with tool calls holds in its JSON text: other messages are
#: not parsed at all (most of a thread: prose and tool output).
_MARKER = '"tool_calls"'

INSERT_FILES = text(
    "INSERT INTO thread_files (thread_id, path, seq, action, via)"
    " SELECT CAST(:thread_id AS uuid), u.path, u.seq, u.action, u.via"
    " FROM unnest(CAST(:paths AS text[]), CAST(:seqs AS integer[]), CAST(:actions AS text[]),"
    " CAST(:vias AS text[])) AS u(path, seq, action, via)"
    " ON CONFLICT DO NOTHING"
)


def file_touches(bodies: Iterable[tuple[int, str]], root: str | None) -> list[Touch]:
    """The touches of messages given as ``(index, exact JSON text)``; ``root`` the thread's
    ``workspace_root``. Texts without tool calls are skipped unparsed; one that does not
    parse touches nothing (never raises)."""

    def parsed() -> Iterable[tuple[int, Any]]:
        for seq, body in bodies:
            if _MARKER in body:
                try:
                    yield seq, jsontext.loads(body)
                except (ValueError, RecursionError):
                    continue

    return touches_indexed(parsed(), root)


def touch_params(thread_id: uuid.UUID, found: list[Touch]) -> dict[str, Any]:
    """The parameters of :data:`INSERT_FILES` for ``found``."""
    return {
        "thread_id": thread_id,
        "paths": [t.path for t in found],
        "seqs": [t.message_index for t in found],
        "actions": [t.action for t in found],
        "vias": [t.via for t in found],
    }


async def write_files(
    session: AsyncSession,
    thread_id: uuid.UUID,
    root: Any,
    bodies: Iterable[tuple[int, str]],
    *,
    replace: bool,
) -> None:
    """Index the files the messages ``bodies`` (``(seq, JSON text)``) touched, for a thread
    whose row the caller's transaction has claimed (``replace``: drop the thread's rows
    first, for a whole-thread write). Same transaction as the messages, so the index never
    disagrees with what a reader sees."""
    if replace:
        await session.execute(
            text("DELETE FROM thread_files WHERE thread_id = CAST(:id AS uuid)"), {"id": thread_id}
        )
    found = file_touches(bodies, root if isinstance(root, str) else None)
    if found:
        await session.execute(INSERT_FILES, touch_params(thread_id, found))


async def copy_files(
    session: AsyncSession, source_id: uuid.UUID, target_id: uuid.UUID, up_to: int
) -> None:
    """Copy the source's rows of messages ``[0, up_to)`` to a fork, inside PostgreSQL."""
    await session.execute(
        text(
            "INSERT INTO thread_files (thread_id, path, seq, action, via)"
            " SELECT CAST(:new_id AS uuid), path, seq, action, via FROM thread_files"
            " WHERE thread_id = CAST(:source_id AS uuid) AND seq < :up_to"
        ),
        {"new_id": target_id, "source_id": source_id, "up_to": up_to},
    )
