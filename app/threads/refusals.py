"""Why a write is refused (API.md sections 4 and 5), asked after a claim matched no row
(:func:`refusal`) or before a write that must not be attempted (:func:`check_store`)."""

from __future__ import annotations

import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Conflict, Forbidden, Gone, NotFound
from app.threads.access import can_read, can_write
from app.threads.preconditions import Precondition
from app.threads.reads import begin_snapshot, facts, load_row, render_row
from loomsync.core.document import jsontext


async def refusal(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
    *,
    creating: bool = False,
    replacing: bool = False,
) -> Exception:
    """Why a claim matched no row: 404, 410, 403 or 409 with the current thread (API.md sections
    4 and 5). A missing thread is 404, except for a create (POST) and a replace (PUT), where it
    is a version conflict with server version 0."""
    await session.rollback()
    await begin_snapshot(session)
    row = await load_row(session, thread_id)
    client_version = precondition.client_version if precondition else None
    if row is None:
        if not (creating or replacing):
            return NotFound("No such thread.")
        return Conflict(
            "The thread does not exist on the server (version 0).",
            server_version=0,
            client_version=client_version,
            current=None,
        )
    thread = facts(row)
    readable_now = can_read(principal, thread) and row.deleted_at is None
    if creating:
        return Conflict(
            "A thread with this id already exists (ids are never reused).",
            server_version=row.version if readable_now else None,
            client_version=client_version,
            current=jsontext.loads(await render_row(session, row)) if readable_now else None,
        )
    if not can_read(principal, thread):
        return NotFound("No such thread.")
    if row.deleted_at is not None:
        return Gone("The thread was deleted; its id cannot be reused.")
    if not can_write(principal, thread):
        return Forbidden("Only the thread's owner or an admin may change it.")
    return Conflict(
        f"The thread is at version {row.version}; the write was based on "
        f"{precondition.describe() if precondition else 'no version'}.",
        server_version=row.version,
        client_version=client_version,
        current=jsontext.loads(await render_row(session, row)),
    )


async def check_store(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition,
    *,
    allow_replace: bool,
) -> None:
    """Raise what :func:`app.threads.repository.create_or_replace` would raise for this caller,
    id and base version (existence, deletion, write access, version), without writing: for a
    write refused for another reason (credentials under ``LOOMSYNC_SECRET_SCAN=reject``) whose
    refusal is audited against ``thread_id``. A caller who may not write the thread gets the
    answer they would get anyway, and leaves no audit event (issue 12 item 4). Reads one row;
    the session's transaction stays open when nothing is raised.

    Raises:
        Conflict, NotFound, Forbidden, Gone: see :func:`refusal`.
    """
    row = await load_row(session, thread_id)
    if row is None:
        stored = 0 in precondition.versions and not precondition.any_version
    else:
        stored = (
            allow_replace
            and row.deleted_at is None
            and can_write(principal, facts(row))
            and (precondition.any_version or row.version in precondition.versions)
        )
    if not stored:
        raise await refusal(
            session,
            principal,
            thread_id,
            precondition,
            creating=not allow_replace,
            replacing=allow_replace,
        )
