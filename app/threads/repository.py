"""Every SQL statement about threads.

Writes follow one pattern: a single statement checks the version, the caller's write access and
that the thread is not deleted, and claims the new version (``UPDATE … WHERE version = ANY(:base)
… RETURNING``, or ``INSERT … ON CONFLICT DO NOTHING RETURNING`` for a create). That statement
takes the row lock, so the remaining statements of the transaction (messages, commits) cannot
interleave with another writer. Each write commits before returning, so a client never sees
success for a write that did not commit. When the claim matches no row, :func:`_refusal` says why.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    JSON,
    ColumnElement,
    Row,
    Text,
    cast,
    delete,
    func,
    literal,
    select,
    text,
    true,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by, insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import Conflict, Forbidden, Gone, NotFound, PayloadTooLarge
from app.threads.access import AccessFacts, can_read, can_write, readable, writable
from app.threads.documents import (
    PreparedMessage,
    changed_indexes,
    commit_shas,
    derived_columns,
    dump_json,
    render_thread,
)
from app.threads.indexing import MESSAGE_VECTOR_SQL, thread_texts, weighted
from app.threads.preconditions import Precondition
from app.threads.tables import thread_commits, thread_messages, threads

ARCHIVED_AT = threads.c.archived_at
MESSAGE_COUNT = threads.c.message_count

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

_UNNEST = (
    "unnest(CAST(:seqs AS integer[]), CAST(:roles AS text[]), CAST(:bodies AS text[]),"
    " CAST(:hashes AS bytea[]), CAST(:content_texts AS text[]), CAST(:tool_texts AS text[]))"
    " AS u(seq, role, body, content_hash, content_text, tool_text)"
)
_INSERT_MESSAGES = text(
    "INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)"
    f" SELECT CAST(:thread_id AS uuid), u.seq, u.role, CAST(u.body AS json), u.content_hash, {MESSAGE_VECTOR_SQL}"
    f" FROM {_UNNEST}"
)
_UPDATE_MESSAGES = text(
    "UPDATE thread_messages AS m SET role = u.role, body = CAST(u.body AS json),"
    f" content_hash = u.content_hash, search_vector = {MESSAGE_VECTOR_SQL}"
    f" FROM {_UNNEST} WHERE m.thread_id = CAST(:thread_id AS uuid) AND m.seq = u.seq"
)


def _message_params(thread_id: uuid.UUID, messages: Sequence[PreparedMessage]) -> dict[str, Any]:
    return {
        "thread_id": thread_id,
        "seqs": [m.seq for m in messages],
        "roles": [m.role for m in messages],
        "bodies": [m.body for m in messages],
        "hashes": [m.content_hash for m in messages],
        "content_texts": [m.content_text for m in messages],
        "tool_texts": [m.tool_text for m in messages],
    }


def _document_values(doc: dict[str, Any]) -> dict[str, Any]:
    """Column values for a stored document: the JSON text, derived columns and the A/B vector."""
    a_text, b_text = thread_texts(doc)
    return {
        "document": cast(literal(dump_json(doc), Text), JSON),
        "search_vector": weighted(a_text, "A").op("||")(weighted(b_text, "B")),
        **derived_columns(doc),
    }


def _version_matches(precondition: Precondition | None) -> ColumnElement[bool]:
    if precondition is None or precondition.any_version:
        return true()
    return threads.c.version.in_(sorted(precondition.versions))


def _facts(row: Any) -> AccessFacts:
    return AccessFacts(row.owner_id, row.org_id, row.visibility, row.is_shared_with_support)


async def _load(
    session: AsyncSession, thread_id: uuid.UUID, *, with_messages: bool
) -> Row[Any] | None:
    columns: list[Any] = [threads, threads.c.document.cast(Text).label("document_text")]
    if with_messages:
        columns.append(_MESSAGES_TEXT.label("messages_text"))
    result = await session.execute(select(*columns).where(threads.c.id == thread_id))
    return result.first()


def _render(row: Any) -> bytes:
    return render_thread(row, row.document_text, getattr(row, "messages_text", None))


async def read_thread(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> tuple[bytes, int]:
    """The thread as output JSON bytes and its version.

    Raises:
        NotFound: no such thread, or the caller may not read it.
        Gone: the thread was deleted.
    """
    row = await _load(session, thread_id, with_messages=True)
    if row is None or not can_read(principal, _facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone("The thread was deleted.")
    return _render(row), row.version


async def _refusal(
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
    row = await _load(session, thread_id, with_messages=True)
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
    facts = _facts(row)
    readable_now = can_read(principal, facts) and row.deleted_at is None
    if creating:
        return Conflict(
            "A thread with this id already exists (ids are never reused).",
            server_version=row.version if readable_now else None,
            client_version=client_version,
            current=json.loads(_render(row)) if readable_now else None,
        )
    if not can_read(principal, facts):
        return NotFound("No such thread.")
    if row.deleted_at is not None:
        return Gone("The thread was deleted; its id cannot be reused.")
    if not can_write(principal, facts):
        return Forbidden("Only the thread's owner or an admin may change it.")
    return Conflict(
        f"The thread is at version {row.version}; the write was based on "
        f"{precondition.describe() if precondition else 'no version'}.",
        server_version=row.version,
        client_version=client_version,
        current=json.loads(_render(row)),
    )


async def _write_commits(
    session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any], *, replace: bool
) -> None:
    if replace:
        await session.execute(delete(thread_commits).where(thread_commits.c.thread_id == thread_id))
    shas = commit_shas(doc)
    if shas:
        stmt = text(
            "INSERT INTO thread_commits (thread_id, sha)"
            " SELECT CAST(:thread_id AS uuid), s FROM unnest(CAST(:shas AS text[])) AS s"
            " ON CONFLICT DO NOTHING"
        )
        await session.execute(stmt, {"thread_id": thread_id, "shas": shas})


async def _insert_messages(
    session: AsyncSession, thread_id: uuid.UUID, messages: Sequence[PreparedMessage]
) -> None:
    if messages:
        await session.execute(_INSERT_MESSAGES, _message_params(thread_id, messages))


async def _replace_messages(
    session: AsyncSession, thread_id: uuid.UUID, messages: Sequence[PreparedMessage]
) -> None:
    """Make the stored messages equal ``messages``, rewriting only rows whose hash changed."""
    result = await session.execute(
        select(thread_messages.c.content_hash)
        .where(thread_messages.c.thread_id == thread_id)
        .order_by(thread_messages.c.seq)
    )
    old_hashes = [bytes(h) for h in result.scalars()]
    changed = [messages[i] for i in changed_indexes(old_hashes, messages)]
    if changed:
        await session.execute(_UPDATE_MESSAGES, _message_params(thread_id, changed))
    if len(old_hashes) > len(messages):
        await session.execute(
            delete(thread_messages).where(
                thread_messages.c.thread_id == thread_id, thread_messages.c.seq >= len(messages)
            )
        )
    await _insert_messages(session, thread_id, messages[len(old_hashes) :])


async def create_or_replace(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    doc: dict[str, Any],
    messages: Sequence[PreparedMessage],
    timestamps: dict[str, Any],
    precondition: Precondition,
    *,
    allow_replace: bool = True,
) -> tuple[bytes, int, bool]:
    """Store a whole thread (PUT, or POST when ``allow_replace`` is False).

    ``doc`` is the storable document (no messages, no column fields); ``timestamps`` may hold
    ``created_at`` and ``last_activity_at`` (datetimes). A base version of 0 creates; another
    base replaces when it equals the stored version.

    Returns:
        (output JSON bytes, new version, created?)

    Raises:
        Conflict, NotFound, Forbidden, Gone: see :func:`_refusal`.
    """
    if principal.user_id is None:
        raise AssertionError("writes need an authenticated principal")
    values = _document_values(doc)
    created_at = timestamps.get("created_at")
    last_activity_at = timestamps.get("last_activity_at")
    claimed = None
    created = False
    if 0 in precondition.versions and not precondition.any_version:
        now = func.now()
        stmt = (
            insert(threads)
            .values(
                id=thread_id,
                owner_id=principal.user_id,
                org_id=principal.org_id,
                version=1,
                created_at=created_at or now,
                updated_at=now,
                last_activity_at=last_activity_at or now,
                message_count=len(messages),
                **values,
            )
            .on_conflict_do_nothing(index_elements=[threads.c.id])
            .returning(threads.c.version)
        )
        claimed = (await session.execute(stmt)).first()
        created = claimed is not None
    nonzero = Precondition(
        frozenset(v for v in precondition.versions if v), precondition.any_version
    )
    if claimed is None and allow_replace and (nonzero.versions or nonzero.any_version):
        stmt_update = (
            update(threads)
            .where(
                threads.c.id == thread_id,
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
                **values,
            )
            .returning(threads.c.version)
        )
        claimed = (await session.execute(stmt_update)).first()
    if claimed is None:
        raise await _refusal(
            session,
            principal,
            thread_id,
            precondition,
            creating=not allow_replace,
            replacing=allow_replace,
        )
    if created:
        await _insert_messages(session, thread_id, messages)
    else:
        await _replace_messages(session, thread_id, messages)
    await _write_commits(session, thread_id, doc, replace=not created)
    row = await _load(session, thread_id, with_messages=True)
    assert row is not None
    body = _render(row)
    await session.commit()
    return body, claimed.version, created


async def claim(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
    **values: Any,
) -> Row[Any]:
    """Check version and write access, bump the version and set ``values``, in one statement.

    Returns the updated row (with ``document_text``, the document before this write).

    Raises:
        Conflict, NotFound, Forbidden, Gone: see :func:`_refusal`.
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
        .returning(threads, threads.c.document.cast(Text).label("document_text"))
    )
    row: Row[Any] | None = (await session.execute(stmt)).first()
    if row is None:
        raise await _refusal(session, principal, thread_id, precondition)
    return row


async def store_document(
    session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any], *, commits_changed: bool
) -> None:
    """Write a changed document (and its derived columns) for a thread claimed by :func:`claim`."""
    await session.execute(
        update(threads).where(threads.c.id == thread_id).values(**_document_values(doc))
    )
    if commits_changed:
        await _write_commits(session, thread_id, doc, replace=False)


async def append_messages(
    session: AsyncSession, thread_id: uuid.UUID, messages: Sequence[PreparedMessage]
) -> None:
    """Insert ``messages`` (numbered after those already stored); costs O(appended), not O(thread)."""
    await _insert_messages(session, thread_id, messages)


def check_message_limit(count: int, limit: int) -> None:
    """Raise PayloadTooLarge when a thread would hold more than ``limit`` messages (API.md §8)."""
    if count > limit:
        raise PayloadTooLarge(
            f"A thread holds at most {limit} messages; this write would make {count}."
        )


async def render(session: AsyncSession, thread_id: uuid.UUID) -> bytes:
    """The output document of a thread, read inside the current transaction."""
    row = await _load(session, thread_id, with_messages=True)
    assert row is not None
    return _render(row)


async def load_readable(
    session: AsyncSession, principal: Principal, thread_id: uuid.UUID
) -> Row[Any]:
    """A thread row the caller may read and that is not deleted.

    Raises:
        NotFound, Gone.
    """
    row = await _load(session, thread_id, with_messages=False)
    if row is None or not can_read(principal, _facts(row)):
        raise NotFound("No such thread.")
    if row.deleted_at is not None:
        raise Gone("The thread was deleted.")
    return row


async def insert_fork(
    session: AsyncSession,
    principal: Principal,
    source: Row[Any],
    new_id: uuid.UUID,
    doc: dict[str, Any],
    up_to: int,
) -> bytes:
    """Create thread ``new_id`` owned by the caller from ``doc`` and the source's first ``up_to``
    messages, copied inside PostgreSQL."""
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
    await session.execute(
        text(
            "INSERT INTO thread_messages (thread_id, seq, role, body, content_hash, search_vector)"
            " SELECT CAST(:new_id AS uuid), seq, role, body, content_hash, search_vector"
            " FROM thread_messages WHERE thread_id = CAST(:source_id AS uuid) AND seq < :up_to"
        ),
        {"new_id": new_id, "source_id": source.id, "up_to": up_to},
    )
    await _write_commits(session, new_id, doc, replace=False)
    body = await render(session, new_id)
    await session.commit()
    return body


async def soft_delete(
    session: AsyncSession,
    principal: Principal,
    thread_id: uuid.UUID,
    precondition: Precondition | None,
) -> None:
    """Mark a thread deleted (owner or admin). Raises as :func:`claim` does."""
    await claim(session, principal, thread_id, precondition, deleted_at=func.now())
    await session.commit()


async def list_threads(
    session: AsyncSession,
    principal: Principal,
    *,
    scope: str,
    archived: str,
    workspace: str | None,
    after: tuple[Any, uuid.UUID] | None,
    limit: int,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 thread rows, newest ``last_activity_at`` first, keyset-paginated
    after ``after`` = (last_activity_at, id) of the previous page's last row."""
    conditions: list[ColumnElement[bool]] = [threads.c.deleted_at.is_(None)]
    if scope == "mine":
        if principal.user_id is None:
            return []
        conditions.append(threads.c.owner_id == principal.user_id)
    else:
        conditions.append(readable(principal))
    if archived == "false":
        conditions.append(threads.c.archived_at.is_(None))
    elif archived == "true":
        conditions.append(threads.c.archived_at.is_not(None))
    if workspace is not None:
        conditions.append(threads.c.workspace_root == workspace)
    if after is not None:
        conditions.append(tuple_(threads.c.last_activity_at, threads.c.id) < tuple_(*after))
    stmt = (
        select(*[c for c in threads.c if c.name not in ("document", "search_vector")])
        .where(*conditions)
        .order_by(threads.c.last_activity_at.desc(), threads.c.id.desc())
        .limit(limit + 1)
    )
    return list((await session.execute(stmt)).all())


__all__ = [
    "append_messages",
    "check_message_limit",
    "claim",
    "create_or_replace",
    "insert_fork",
    "list_threads",
    "load_readable",
    "read_thread",
    "render",
    "soft_delete",
    "store_document",
]
