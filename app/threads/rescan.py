"""Rescanning stored threads with the server's detector (review P3-14; docs/operations.md
"Secret scan"): ``loomsync-server rescan [--dry-run] [--thread ID]…``.

The write-time scan (app/threads/scanning.py) sees only what a write brings: threads stored
before it existed, under ``LOOMSYNC_SECRET_SCAN=off``, or before the detector learned a rule,
keep their credentials. A rescan reads each live thread as a GET renders it, redacts it with
the same detector and, when something was found, stores the redacted thread as a PUT replace
by an admin would: version + 1, changed message rows and search vectors rewritten, the stored
answers of its create or fork refreshed (app/idempotency/keys.py), and one
``thread.secrets_redacted`` audit event (actor :data:`RESCAN_ACTOR`), never a value.

Each thread is read in one snapshot and written in its own transaction at the version it was
read at: a thread written in between is left alone and reported (``changed``: run again).
Deleted threads are not rescanned (they are never read again; their rows keep the text).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.audit.context import AuditContext
from app.auth import ROLE_ADMIN, Principal
from app.errors import Conflict, Gone, NotFound, ValidationFailed
from app.idempotency.keys import refresh_answers
from app.threads import auditing, repository, service
from app.threads.documents import (
    COLUMN_FIELDS,
    parse_json,
    prepare_messages,
    storable_document,
)
from app.threads.preconditions import Precondition, etag
from app.threads.reads import begin_snapshot, load_row, render_row
from app.threads.scanning import DOCUMENT_MESSAGES, Scanned, redact_body
from app.threads.tables import threads
from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import Redactor

#: Who a rescan's writes and audit events are by: an admin no token can name (``sub`` claims
#: hold no spaces).
RESCAN_ACTOR = Principal(user_id="loomsync-server rescan", roles=frozenset({ROLE_ADMIN}))
#: Thread ids read per query while listing the threads to scan.
BATCH = 200

Status = Literal["clean", "found", "redacted", "changed", "invalid"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the rescan of one thread did. ``status``: ``clean`` (nothing found), ``found``
    (found, dry run: nothing written), ``redacted`` (stored redacted at ``new_version``),
    ``changed`` (written by someone else since it was read: left alone), ``invalid`` (its
    redacted copy is not a valid thread: left alone, ``reason`` says why). ``kinds``:
    ``{kind: count}``, never a value."""

    thread_id: ThreadId
    version: int
    status: Status
    kinds: dict[str, int] = field(default_factory=dict)
    new_version: int | None = None
    reason: str | None = None


async def _ids(
    maker: async_sessionmaker[AsyncSession], only: Sequence[uuid.UUID] | None
) -> AsyncIterator[uuid.UUID]:
    """The ids of the live threads (``only`` those, if given), in id order, a batch a query."""
    after: uuid.UUID | None = None
    while True:
        query = select(threads.c.id).where(threads.c.deleted_at.is_(None))
        if only is not None:
            query = query.where(threads.c.id.in_(only))
        if after is not None:
            query = query.where(threads.c.id > after)
        async with maker() as session:
            batch = list((await session.scalars(query.order_by(threads.c.id).limit(BATCH))).all())
        for thread_id in batch:
            yield thread_id
        if len(batch) < BATCH:
            return
        after = batch[-1]


async def _read(
    maker: async_sessionmaker[AsyncSession], thread_id: uuid.UUID
) -> tuple[int, dict[str, object]] | None:
    """(version, the thread as a PUT body: its output without server and column-only fields),
    read in one snapshot; None when it is gone or deleted."""
    async with maker() as session:
        await begin_snapshot(session)
        row = await load_row(session, thread_id)
        if row is None or row.deleted_at is not None:
            return None
        body = parse_json(await render_row(session, row))
    for key in COLUMN_FIELDS - {"id", "version", "created_at", "last_activity_at"}:
        body.pop(key, None)
    return row.version, body


async def _store(
    maker: async_sessionmaker[AsyncSession], tid: ThreadId, version: int, scanned: Scanned
) -> int:
    """Store ``scanned.value`` over version ``version`` as a replace, audited; the new version.

    Raises:
        Conflict, Gone, NotFound: the thread is no longer at ``version``, or was deleted.
        ValidationFailed: the redacted copy is not a valid thread.
    """
    audit = AuditContext(RESCAN_ACTOR, client_ip=None, request_id=None)
    thread, raw_messages = service.parse_thread(scanned.value, tid)
    async with maker() as session:
        body, new_version, _ = await repository.create_or_replace(
            session,
            audit,
            tid.uuid,
            storable_document(thread),
            prepare_messages(raw_messages),
            {"created_at": thread.created_at, "last_activity_at": thread.last_activity_at},
            Precondition.exactly(version),
        )
        await auditing.secrets_redacted(
            session, audit, tid.uuid, scanned.details(DOCUMENT_MESSAGES)
        )
        await refresh_answers(session, tid.uuid, body, etag(new_version))
        await session.commit()
    return new_version


async def rescan(
    maker: async_sessionmaker[AsyncSession],
    redactor: Redactor,
    *,
    dry_run: bool = False,
    only: Sequence[ThreadId] | None = None,
) -> AsyncIterator[Outcome]:
    """Scan every live thread (``only`` those, if given) with ``redactor``; store each one with
    findings redacted unless ``dry_run``. Yields an :class:`Outcome` per thread scanned, in id
    order; one thread in memory at a time."""
    wanted = None if only is None else [tid.uuid for tid in only]
    async for thread_id in _ids(maker, wanted):
        read = await _read(maker, thread_id)
        if read is None:
            continue
        version, body = read
        tid = ThreadId.from_uuid(thread_id)
        redacted, spots = redact_body(redactor, body)
        if not spots:
            yield Outcome(tid, version, "clean")
            continue
        scanned = Scanned(redacted, spots)
        kinds = scanned.kinds()
        if dry_run:
            yield Outcome(tid, version, "found", kinds)
            continue
        try:
            new_version = await _store(maker, tid, version, scanned)
        except (Conflict, Gone, NotFound):  # written, or deleted, since it was read
            yield Outcome(tid, version, "changed", kinds)
        except ValidationFailed as exc:
            yield Outcome(tid, version, "invalid", kinds, reason=str(exc))
        else:
            yield Outcome(tid, version, "redacted", kinds, new_version)
