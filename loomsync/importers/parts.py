"""Small pieces the JSON agents' importers share (Copilot CLI and Chat, Qwen Code, Droid,
Grok Build, Amp): a message with the members the document keeps as unknown fields
(``usage``, ``extra``), and the sidecar readers.

Every importer here is pure (see :mod:`loomsync.importers.common`): the same bytes give the
same documents.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, Role, ToolCall


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


__all__ = ["message", "read_sidecar", "without"]
