"""Turning thread documents into rows and rows back into documents, without touching message JSON.

Storage split (ARCHITECTURE.md "Storage"): each message is kept as its own exact JSON text; the
rest of the document (minus the fields the server owns, which live in columns) is one ``json``
value. A read splices the stored message texts into the output verbatim: message JSON is never
parsed on the way out.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.errors import BadRequest
from app.threads.indexing import clean, message_vector
from app.times import rfc3339
from loomsync.core.document import jsontext
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import SERVER_FIELDS, Thread

#: Fields kept in columns, not in the stored document: set or owned by the server.
COLUMN_FIELDS = (
    frozenset({"id", "version", "created_at", "updated_at", "last_activity_at"}) | SERVER_FIELDS
)


class JsonSyntaxError(BadRequest, ValueError):
    """The body is not acceptable JSON (syntax, NaN/Infinity, invalid UTF-8, too deep).

    A 400 wherever it is raised: nesting that parsed can still be too deep to serialise later."""


def parse_json(data: bytes | str) -> Any:
    """Parse a request body (or stored JSON text) strictly, RFC 8259: no NaN/Infinity. Every
    number keeps its text (:mod:`loomsync.core.document.jsontext`): ``1E2``, ``-0``, ``1e400`` or a
    5,000-digit integer are stored and returned as written (API.md section 2).

    Raises:
        JsonSyntaxError: invalid UTF-8 or JSON, NaN/Infinity, or nesting too deep to parse.
    """
    try:
        return jsontext.loads(data)
    except RecursionError as exc:
        raise JsonSyntaxError("JSON nesting is too deep") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise JsonSyntaxError(f"invalid JSON: {str(exc)[:200]}") from exc


def dump_json(value: Any) -> str:
    """Compact JSON text that PostgreSQL can store as UTF-8: raw UTF-8 where possible,
    ``\\uXXXX`` escapes when the value holds lone surrogates; numbers parsed by
    :func:`parse_json` are written as they were read. Raises JsonSyntaxError on nesting too
    deep to serialise."""
    try:
        text = jsontext.dumps(value)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = jsontext.dumps(value, ensure_ascii=True)
    except RecursionError as exc:
        raise JsonSyntaxError("JSON nesting is too deep") from exc
    return text


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A message ready to insert: exact JSON text, its SHA-256, and its search vector as
    ``tsvector`` input text (:func:`app.threads.indexing.message_vector`)."""

    seq: int
    role: str
    body: str
    content_hash: bytes
    vector: str


def prepare_messages(
    messages: Iterable[dict[str, Any]], start_seq: int = 0
) -> list[PreparedMessage]:
    """Serialise raw (already validated) message dicts, numbering them from ``start_seq``."""
    prepared = []
    for offset, message in enumerate(messages):
        body = dump_json(message)
        prepared.append(
            PreparedMessage(
                seq=start_seq + offset,
                role=str(message["role"]),
                body=body,
                content_hash=hashlib.sha256(body.encode("utf-8")).digest(),
                vector=message_vector(message),
            )
        )
    return prepared


def storable_document(thread: Thread) -> dict[str, Any]:
    """The document to keep in ``threads.document``: validated, timestamps normalised, without
    messages and without the fields kept in columns.

    Python mode, not ``mode="json"``: pydantic's JSON mode mangles (or fails on) dict keys
    holding lone surrogates; every datetime field is a column field, popped below."""
    doc = thread.model_dump(exclude={"conversation": {"messages"}})
    for key in COLUMN_FIELDS:
        doc.pop(key, None)
    return doc


def derived_columns(doc: dict[str, Any]) -> dict[str, Any]:
    """Column values derived from a stored document (list filters, summaries, access).

    Text columns cannot hold NUL or lone surrogates: those become spaces here (the document
    itself keeps them exactly)."""
    metadata = doc.get("metadata") or {}

    def text(value: Any) -> Any:
        return clean(value) if isinstance(value, str) else value

    return {
        "visibility": doc.get("visibility", "private"),
        "is_shared_with_support": bool(doc.get("is_shared_with_support", False)),
        "title": text(metadata.get("title")),
        "tags": [clean(t) for t in metadata.get("tags") or [] if isinstance(t, str)],
        "is_pinned": bool(metadata.get("is_pinned", False)),
        "workspace_root": text(doc.get("workspace_root")),
        "git_branch": text(doc.get("git_branch")),
        "git_remote_url": text(doc.get("git_remote_url")),
        "provider": text(doc.get("provider")),
        "model": text(doc.get("model")),
    }


_SHA = re.compile(r"[0-9a-f]{4,64}")


def commit_shas(doc: dict[str, Any]) -> list[str]:
    """Distinct lowercase commit SHAs named by the document, in first-seen order.

    Only hexadecimal strings of 4 to 64 characters (SHA-1 and SHA-256 object names and their
    abbreviations) are indexed for prefix search; anything else stays in the document only.
    """
    candidates = [
        *(doc.get("git_commits") or []),
        doc.get("git_initial_commit_sha"),
        doc.get("git_current_commit_sha"),
    ]
    shas = (v.strip().lower() for v in candidates if isinstance(v, str))
    return list(dict.fromkeys(sha for sha in shas if _SHA.fullmatch(sha)))


def render_thread(row: Any, document_text: str, messages: Sequence[bytes]) -> bytes:
    """Assemble the output document (API.md §2) as UTF-8 JSON bytes.

    ``row`` carries the column fields; ``messages`` are the stored message JSON texts in order
    (each item one message, or a run of them already joined by commas) as UTF-8 bytes, spliced
    in verbatim: never decoded or parsed, and copied once, by the one join into the output.
    """
    return render_document(row, jsontext.loads(document_text), messages)


def render_document(row: Any, document: dict[str, Any], messages: Sequence[bytes]) -> bytes:
    """:func:`render_thread` of a document already parsed (``document`` is not changed): a
    write renders its answer from what it stored, without reading it back."""
    doc = dict(document)
    conversation = dict(doc.pop("conversation", None) or {})
    conversation.pop("messages", None)
    head = {
        "id": ThreadId.from_uuid(row.id),
        "version": row.version,
        "created_at": rfc3339(row.created_at),
        "updated_at": rfc3339(row.updated_at),
        "last_activity_at": rfc3339(row.last_activity_at),
        **doc,
        "owner_id": row.owner_id,
        "org_id": row.org_id,
        "archived_at": as_timestamp(row.archived_at),
        "message_count": row.message_count,
    }
    conversation_text = dump_json(conversation)
    conversation_open = conversation_text[:-1] + ("," if conversation_text != "{}" else "")
    prefix = f'{dump_json(head)[:-1]},"conversation":{conversation_open}"messages":['
    pieces = [prefix.encode()]
    for message in messages:
        pieces += (message, b",")
    if messages:
        pieces.pop()
    pieces.append(b"]}}")
    return b"".join(pieces)


def summary(row: Any) -> dict[str, Any]:
    """ThreadSummary (API.md §2) of a ``threads`` row."""
    return {
        "id": ThreadId.from_uuid(row.id),
        "title": row.title,
        "workspace_root": row.workspace_root,
        "git_branch": row.git_branch,
        "git_remote_url": row.git_remote_url,
        "provider": row.provider,
        "model": row.model,
        "tags": list(row.tags),
        "is_pinned": row.is_pinned,
        "visibility": row.visibility,
        "is_shared_with_support": row.is_shared_with_support,
        "owner_id": row.owner_id,
        "org_id": row.org_id,
        "version": row.version,
        "message_count": row.message_count,
        "created_at": rfc3339(row.created_at),
        "last_activity_at": rfc3339(row.last_activity_at),
        "archived_at": as_timestamp(row.archived_at),
    }


def as_timestamp(value: datetime | None) -> str | None:
    """RFC 3339 UTC ``Z`` text, or None."""
    return rfc3339(value) if value is not None else None


def changed_indexes(old_hashes: Sequence[bytes], new: Sequence[PreparedMessage]) -> list[int]:
    """Indexes below both lengths whose message differs (by SHA-256 of its JSON text)."""
    return [
        i for i in range(min(len(old_hashes), len(new))) if old_hashes[i] != new[i].content_hash
    ]
