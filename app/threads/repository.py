"""Every SQL statement that writes threads; the reads live beside it (``reads.py`` one thread,
``listing.py`` pages of them, ``messages.py`` message and commit rows, ``search.py`` search) and
the ones routes need are re-exported here, so routes call one module.

Writes follow one pattern: a single statement checks the version, the caller's write access and
that the thread is not deleted, and claims the new version (``UPDATE … WHERE version = ANY(:base)
… RETURNING``, or ``INSERT … ON CONFLICT DO NOTHING RETURNING`` for a create). That statement
takes the row lock, so the remaining statements of the transaction (messages, commits) cannot
interleave with another writer. Each write commits before returning, so a client never sees
success for a write that did not commit; :func:`create_or_replace` and :func:`insert_fork` leave
the commit to their route, which records the answer of an ``Idempotency-Key`` in the same
transaction (app/idempotency/keys.py). When the claim matches no row, :func:`~app.threads.refusals.refusal` says why.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    Row,
    Text,
    cast,
    func,
    literal,
    select,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.context import AuditContext
from app.auth import Principal
from app.errors import PayloadTooLarge
from app.idempotency.keys import forget_answers
from app.provenance import rows as files
from app.sharing import repository as share_links
from app.threads import auditing, hotsql
from app.threads import messages as rows
from app.threads.access import writable
from app.threads.documents import (
    PreparedMessage,
    derived_columns,
    dump_json,
    render_document,
)
from app.threads.indexing import stored_vector, thread_vector
from app.threads.listing import list_threads
from app.threads.preconditions import Precondition
from app.threads.reads import check_copy_of, load_forkable, read_thread, render
from app.threads.refusals import check_store, refusal
from app.threads.tables import threads
from app.usage import rows as usage
from loomsync.core.textsearch.vectors import VERSION as SEARCH_VERSION

ARCHIVED_AT = threads.c.archived_at
#: The columns a write returns to render its answer (:func:`app.threads.documents.render_thread`).
_RENDERED = (
    threads.c.id,
    threads.c.version,
    threads.c.created_at,
    threads.c.updated_at,
    threads.c.last_activity_at,
    threads.c.owner_id,
    threads.c.org_id,
    threads.c.archived_at,
    threads.c.message_count,
)
#: The columns :func:`claim` returns besides the document text.
_CLAIMED = (
    threads.c.id,
    threads.c.version,
    threads.c.message_count,
    threads.c.visibility,
    threads.c.is_shared_with_support,
)


def _document_values(
    doc: dict[str, Any], document_text: str | None = None, vector: str | None = None
) -> dict[str, Any]:
    """Column values for a stored document: the JSON text, derived columns and the A/B vector
    (``document_text`` and ``vector``: those of ``doc``, when the caller made them already)."""
    if document_text is None:
        document_text = dump_json(doc)
    return {
        "document": cast(literal(document_text, Text), JSON),
        "search_vector": stored_vector(vector if vector is not None else thread_vector(doc)),
        "search_version": SEARCH_VERSION,
        **derived_columns(doc),
    }


def _version_matches(precondition: Precondition | None) -> ColumnElement[bool]:
    if precondition is None or precondition.any_version:
        return true()
    return threads.c.version.in_(sorted(precondition.versions))


async def create_or_replace(
    session: AsyncSession,
    audit: AuditContext,
    thread_id: uuid.UUID,
    doc: dict[str, Any],
    messages: Sequence[PreparedMessage],
    timestamps: dict[str, Any],
    precondition: Precondition,
    *,
    allow_replace: bool = True,
    keep_visibility: bool = False,
) -> tuple[bytes, int, bool]:
    """Store a whole thread (PUT, or POST when ``allow_replace`` is False).

    ``doc`` is the storable document (no messages, no column fields); ``timestamps`` may hold
    ``created_at`` and ``last_activity_at`` (datetimes). A base version of 0 creates; another
    base replaces when it equals the stored version. ``keep_visibility`` (the body named no
    ``visibility``): a replace keeps the stored visibility, a create takes ``doc``'s (private,
    the model's default; API.md §2 "absent on a new thread: private").

    A replace rewrites every message row whose text changed and the document, with their search
    vectors: no live row keeps the replaced text (dead row versions wait for VACUUM,
    docs/operations.md).

    A create, and a replace that changes visibility or support sharing, leave audit events.
    The caller commits (after recording an idempotent answer, if any).

    Returns:
        (output JSON bytes, new version, created?)

    Raises:
        Conflict, NotFound, Forbidden, Gone: see :func:`app.threads.refusals.refusal`.
    """
    principal = audit.principal
    if principal.user_id is None:
        raise AssertionError("writes need an authenticated principal")
    document_text = dump_json(doc)
    vector = thread_vector(doc)
    derived = derived_columns(doc)
    created_at = timestamps.get("created_at")
    last_activity_at = timestamps.get("last_activity_at")
    claimed: Any = None
    created = False
    if 0 in precondition.versions and not precondition.any_version:
        params = {
            "id": thread_id,
            "owner_id": principal.user_id,
            "org_id": principal.org_id,
            "created_at": created_at,
            "last_activity_at": last_activity_at,
            "message_count": len(messages),
            "document": document_text,
            "vector": vector,
            "search_version": SEARCH_VERSION,
            **derived,
        }
        args = hotsql.insert_thread_args(params)
        record = await hotsql.first_row(session, hotsql.INSERT_THREAD, args)
        if record is not None:
            claimed = hotsql.Rendered(thread_id, *record[1:])
        created = claimed is not None
    nonzero = Precondition(
        frozenset(v for v in precondition.versions if v), precondition.any_version
    )
    if claimed is None and allow_replace and (nonzero.versions or nonzero.any_version):
        # The row as it was, locked: the statement returns the sharing before and after the write.
        old = (
            select(threads.c.id, threads.c.visibility, threads.c.is_shared_with_support)
            .where(threads.c.id == thread_id)
            .with_for_update()
            .subquery("old")
        )
        stmt_update = (
            update(threads)
            .where(
                threads.c.id == old.c.id,
                threads.c.deleted_at.is_(None),
                writable(principal),
                _version_matches(nonzero),
            )
            .values(
                version=threads.c.version + 1,
                updated_at=func.now(),
                created_at=func.coalesce(created_at, threads.c.created_at),
                last_activity_at=last_activity_at or func.now(),
                message_count=len(messages),
                **_document_values(doc, document_text, vector),
            )
            .returning(
                *_RENDERED,
                old.c.visibility.label("old_visibility"),
                old.c.is_shared_with_support.label("old_shared"),
            )
        )
        claimed = (await session.execute(stmt_update)).first()
    if claimed is None:
        raise await refusal(
            session,
            principal,
            thread_id,
            precondition,
            creating=not allow_replace,
            replacing=allow_replace,
        )
    sharing = (derived["visibility"], derived["is_shared_with_support"])
    if created:
        await auditing.created(session, audit, thread_id, *sharing)
        await rows.insert_messages(session, thread_id, messages)
    else:
        before = (claimed.old_visibility, claimed.old_shared)
        if keep_visibility and claimed.old_visibility != sharing[0]:
            doc = {**doc, "visibility": claimed.old_visibility}
            await _keep_visibility(session, thread_id, doc)
            sharing = (claimed.old_visibility, sharing[1])
        await auditing.sharing_changed(session, audit, thread_id, before, sharing)
        await rows.replace_messages(session, thread_id, messages)
    await rows.write_commits(session, thread_id, doc, replace=not created)
    await files.write_files(
        session,
        thread_id,
        doc.get("workspace_root"),
        ((m.seq, m.body) for m in messages),
        replace=not created,
    )
    await usage.write_usage(
        session,
        thread_id,
        doc,
        ((m.role, m.body) for m in messages),
        usage.fallback_day(claimed.last_activity_at),
        replace=not created,
    )
    # the answer is rendered from what was stored (the same texts a GET splices), not read back
    body = render_document(claimed, doc, [m.body.encode() for m in messages])
    return body, claimed.version, created


async def _keep_visibility(
    session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any]
) -> None:
    """Put back the visibility a replace without one must keep (the row is locked by the replace,
    which wrote the default): the column and the document that holds it, nothing indexed."""
    await session.execute(
        update(threads)
        .where(threads.c.id == thread_id)
        .values(visibility=doc["visibility"], document=cast(literal(dump_json(doc), Text), JSON))
    )


async def claim(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
    **values: Any,
) -> Row[Any]:
    """Check version and write access, bump the version and set ``values``, in one statement.

    Returns the updated row's version, message count, visibility and support sharing (as
    they were before this write, for an audit) and ``document_text``, the document before this
    write: only what writers use, so no ``json``/``tsvector`` column is decoded.

    Raises:
        Conflict, NotFound, Forbidden, Gone: see :func:`app.threads.refusals.refusal`.
    """
    stmt = (
        update(threads)
        .where(
            threads.c.id == thread_id,
            threads.c.deleted_at.is_(None),
            writable(principal),
            _version_matches(precondition),
        )
        .values(version=threads.c.version + 1, updated_at=func.now(), **values)
        .returning(*_CLAIMED, threads.c.document.cast(Text).label("document_text"))
    )
    row: Row[Any] | None = (await session.execute(stmt)).first()
    if row is None:
        raise await refusal(session, principal, thread_id, precondition)
    return row


async def claim_append(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
    added: int,
    last_activity_at: datetime | None,
) -> hotsql.AppendClaim:
    """:func:`claim` for an append of ``added`` messages: ``message_count`` grows by ``added``,
    ``last_activity_at`` is the given time or now; one statement built once
    (:data:`app.threads.hotsql.CLAIM_APPEND`), run as driver SQL in the session's transaction
    (:func:`app.threads.hotsql.first_row`). Raises as :func:`claim`."""
    sql, args = hotsql.claim_append_params(
        principal, thread_id, precondition, added, last_activity_at
    )
    record = await hotsql.first_row(session, sql, args)
    if record is None:
        raise await refusal(session, principal, thread_id, precondition)
    return hotsql.AppendClaim(*record)


async def store_document(
    session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any], *, commits_changed: bool
) -> None:
    """Write a changed document (and its derived columns) for a thread claimed by :func:`claim`."""
    await session.execute(
        update(threads).where(threads.c.id == thread_id).values(**_document_values(doc))
    )
    if commits_changed:
        await rows.write_commits(session, thread_id, doc, replace=False)
    await usage.refresh_facts(session, thread_id, doc)


async def audit_sharing(
    session: AsyncSession,
    audit: AuditContext,
    thread_id: uuid.UUID,
    claimed: Row[Any],
    doc: dict[str, Any],
) -> None:
    """Audit events for a PATCH: ``claimed`` is the row :func:`claim` returned (sharing columns
    as they were, under the row lock), ``doc`` the document being stored."""
    before = (claimed.visibility, claimed.is_shared_with_support)
    await auditing.sharing_changed(session, audit, thread_id, before, auditing.sharing_of(doc))


async def append_messages(
    session: AsyncSession,
    thread_id: uuid.UUID,
    prepared: Sequence[PreparedMessage],
    doc: dict[str, Any],
    last_activity_at: datetime | None,
) -> None:
    """Insert messages (numbered after those already stored), index the files their tool
    calls touched (paths relative to the document's ``workspace_root``, issue 32) and add
    their usage (issue 33; ``last_activity_at`` the day of messages without a time, now when
    None); costs O(appended), not O(thread)."""
    await rows.insert_messages(session, thread_id, prepared)
    await files.write_files(
        session,
        thread_id,
        doc.get("workspace_root"),
        ((m.seq, m.body) for m in prepared),
        replace=False,
    )
    await usage.write_usage(
        session,
        thread_id,
        doc,
        ((m.role, m.body) for m in prepared),
        usage.fallback_day(last_activity_at),
        replace=False,
    )


def check_message_limit(count: int, limit: int) -> None:
    """Raise PayloadTooLarge when a thread would hold more than ``limit`` messages (API.md §8)."""
    if count > limit:
        raise PayloadTooLarge(
            f"A thread holds at most {limit} messages; this write would make {count}."
        )


async def insert_fork(
    session: AsyncSession,
    audit: AuditContext,
    source: Row[Any],
    new_id: uuid.UUID,
    doc: dict[str, Any],
    up_to: int,
) -> bytes:
    """Create thread ``new_id`` owned by the caller from ``doc`` and the source's first ``up_to``
    messages, copied inside PostgreSQL; audited as a fork of the source. The caller commits."""
    principal = audit.principal
    assert principal.user_id is not None
    await session.execute(
        insert(threads).values(
            id=new_id,
            owner_id=principal.user_id,
            org_id=principal.org_id,
            version=1,
            created_at=func.now(),
            updated_at=func.now(),
            last_activity_at=source.last_activity_at,
            message_count=up_to,
            **_document_values(doc),
        )
    )
    await rows.copy_messages(session, source.id, new_id, up_to)
    await files.copy_files(session, source.id, new_id, up_to)
    await usage.copy_usage(
        session, source.id, new_id, up_to, doc, usage.fallback_day(source.last_activity_at)
    )
    await rows.write_commits(session, new_id, doc, replace=False)
    await auditing.forked(session, audit, source.id, source.version, new_id, up_to)
    return await render(session, new_id)


async def soft_delete(
    session: AsyncSession,
    audit: AuditContext,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
) -> None:
    """Mark a thread deleted (owner or admin), audited, revoke its share links (each audited),
    and make the stored idempotent answers that hold it a 410 (:func:`forget_answers`).
    Raises as :func:`claim` does."""
    await claim(session, audit.principal, thread_id, precondition, deleted_at=func.now())
    await auditing.deleted(session, audit, thread_id)
    await usage.delete_usage(session, thread_id)
    await share_links.revoke_all(session, audit, thread_id)
    await forget_answers(session, thread_id)
    await session.commit()


__all__ = [
    "append_messages",
    "audit_sharing",
    "check_copy_of",
    "check_message_limit",
    "check_store",
    "claim",
    "claim_append",
    "create_or_replace",
    "insert_fork",
    "list_threads",
    "load_forkable",
    "read_thread",
    "render",
    "soft_delete",
    "store_document",
]
