"""Small pieces the JSON agents' importers share (Copilot CLI and Chat, Qwen Code, Droid,
Grok Build, Amp): a message with the members the document keeps as unknown fields
(``usage``, ``extra``), and the sidecar readers.

Every importer here is pure (see :mod:`loomsync.importers.common`): the same bytes give the
same documents.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, Role, ToolCall
from loomsync.importers.common import ImportResult, as_str, read_json, read_jsonl

FromRecords = Callable[[Path, list[dict[str, Any]], ImportResult], None]


def message(
    role: Role,
    content: str = "",
    *,
    created_at: datetime | None = None,
    id: str | None = None,
    tool_calls: list[ToolCall] | None = None,
    tool_call_id: str | None = None,
    tool_name: str | None = None,
    usage: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> Message:
    """A :class:`Message`; ``usage`` (the shape of :mod:`loomsync.importers.usage`) and
    ``extra`` (what the agent wrote about this message that has no field of its own) are
    added as members only when given, so a message without them has none."""
    members: dict[str, Any] = {}
    if usage:
        members["usage"] = usage
    if extra:
        members["extra"] = extra
    return Message(
        role=role,
        content=content,
        created_at=created_at,
        id=id,
        tool_calls=tool_calls or None,
        tool_call_id=tool_call_id,
        tool_name=tool_name,
        **members,
    )


def without(record: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``record`` without ``keys`` (what is left for ``extra`` once the mapped keys are used)."""
    return {k: v for k, v in record.items() if k not in keys}


def read_sidecar(path: Path) -> Any:
    """The JSON document in a sidecar file, or None when it is missing, unreadable or
    damaged (a sidecar adds metadata; the session imports without it)."""
    try:
        return jsontext.loads(path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def parse_jsonl(
    path: Path, from_records: FromRecords, unit_of: Callable[[Path], Path | None] | None = None
) -> ImportResult:
    """``parse`` of a JSON Lines format: read ``path`` (or the session file ``unit_of`` names
    for it) with :func:`~loomsync.importers.common.read_jsonl` and hand its records to
    ``from_records``; damaged lines are counted, an unreadable file is a warning."""
    result = ImportResult()
    unit = (unit_of(path) if unit_of else None) or path
    records = read_jsonl(unit, result)
    if records is not None:
        from_records(unit, records, result)
    return result


def read_document(path: Path, result: ImportResult, key: str, kind: str) -> dict[str, Any] | None:
    """The JSON object in ``path`` when it holds a list under ``key``; else None, with a
    warning (``not <kind> (no <key> list)``) and a ``bad_record`` count for a JSON value of
    another shape (a file that is no JSON is counted by ``read_json``)."""
    document = read_json(path, result)
    if document is None:
        return None
    if not isinstance(document, dict) or not isinstance(document.get(key), list):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not {kind} (no {key} list)")
        return None
    return document


def tool_uses(blocks: list[dict[str, Any]], names: dict[str, str]) -> list[ToolCall]:
    """The Anthropic-style ``tool_use{id, name, input}`` blocks as tool calls; each call's
    name is remembered in ``names`` by id, for the tool result that answers it."""
    calls: list[ToolCall] = []
    for block in blocks:
        if block.get("type") == "tool_use":
            call_id, name = as_str(block.get("id")), as_str(block.get("name"))
            names[call_id or ""] = name or ""
            calls.append(ToolCall(id=call_id, tool_name=name, arguments_json=block.get("input")))
    return calls


__all__ = ["message", "parse_jsonl", "read_document", "read_sidecar", "tool_uses", "without"]
