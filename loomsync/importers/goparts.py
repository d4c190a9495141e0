"""One row of the Crush / OpenCode-Go ``messages`` table → thread messages: the ``parts`` JSON
mapping described in :mod:`loomsync.importers.gostore`, and the time values of both agents."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, ToolCall
from loomsync.importers import sqlite
from loomsync.importers.common import (
    ImportResult,
    as_dict,
    as_str,
    parse_time,
    tool_arguments,
)

MESSAGE_COLUMNS = (
    "id",
    "session_id",
    "role",
    "parts",
    "model",
    "provider",
    "created_at",
    "updated_at",
    "finished_at",
    "is_summary_message",
)


def go_time(value: Any) -> datetime | None:
    """A Crush / OpenCode-Go time: Unix seconds (milliseconds when larger than 1e11), or
    ISO-8601 text (OpenCode-Go goose v2); None for 0, NULL or anything else."""
    if value in (None, 0, "", "0"):
        return None
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    return parse_time(value)


def loads(text: Any) -> Any:
    """A JSON column's value decoded (text that is not JSON is returned as it is)."""
    if not isinstance(text, str | bytes):
        return text
    try:
        return jsontext.loads(text)
    except (ValueError, RecursionError, UnicodeDecodeError):
        return sqlite.plain(text)


def iso(time: datetime | None) -> str | None:
    """``time`` as RFC 3339 text in UTC (``…Z``), or None."""
    return time.isoformat().replace("+00:00", "Z") if time else None


def _attachment(data: dict[str, Any], extra: dict[str, Any]) -> list[str]:
    """A ``binary`` part: a ``text/*`` file's text is returned to be appended to the message
    (named by its path); its path, type and (for other types) base64 data go to ``extra``."""
    mime, name, encoded = as_str(data.get("MIMEType")), as_str(data.get("Path")), data.get("Data")
    kept: dict[str, Any] = {"path": name, "mime_type": mime}
    try:
        raw = base64.b64decode(encoded, validate=True) if isinstance(encoded, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    text = None
    if mime and mime.startswith("text/"):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is None:
        kept["data"] = encoded
    extra.setdefault("attachments", []).append(kept)
    return [f"[{name or 'attachment'}]\n{text}"] if text is not None else []


class Messages:
    """The messages of one session, built row by row in ``created_at`` order:
    ``messages``, the tool names by call id, and each assistant row's ``(model, provider)``.
    ``summary_id``: the session's ``summary_message_id`` (that row is marked as the summary)."""

    def __init__(self, summary_id: str | None) -> None:
        self.summary_id = summary_id
        self.messages: list[Message] = []
        self.names: dict[str, str] = {}
        self.models: list[tuple[str | None, str | None]] = []

    def add(self, row: dict[str, Any], result: ImportResult) -> None:
        """Add the message(s) of one ``messages`` row: a user/assistant message, then one
        tool message per ``tool_result`` part; a row whose parts are not a list, or whose
        role is unknown, is counted as ``bad_record``."""
        parts = loads(row.get("parts"))
        if not isinstance(parts, list):
            result.skipped["bad_record"] += 1
            return
        role, time = row.get("role"), go_time(row.get("created_at"))
        extra: dict[str, Any] = {
            k: v
            for k, v in {
                "updated_at": iso(go_time(row.get("updated_at"))),
                "finished_at": iso(go_time(row.get("finished_at"))),
                "is_summary": bool(row.get("is_summary_message"))
                or (self.summary_id is not None and row.get("id") == self.summary_id)
                or None,
            }.items()
            if v is not None
        }
        extra.update(sqlite.unknown(row, MESSAGE_COLUMNS))
        texts: list[str] = []
        calls: list[ToolCall] = []
        results: list[Message] = []
        for part in parts:
            self._part(as_dict(part), texts, calls, results, extra, time, result)
        model, provider = as_str(row.get("model")), as_str(row.get("provider"))
        if role == "tool":
            self.messages.extend(results)
            return
        if role not in ("user", "assistant", "system"):
            result.skipped["bad_record"] += 1
            return
        fields: dict[str, Any] = {"extra": extra} if extra else {}
        if role == "assistant" and (model or provider):
            self.models.append((model, provider))
            fields.update({k: v for k, v in (("model", model), ("provider", provider)) if v})
        self.messages.append(
            Message(
                role=role,
                content="\n".join(texts),
                created_at=time,
                id=as_str(row.get("id")),
                tool_calls=calls or None,
                **fields,
            )
        )
        self.messages.extend(results)  # a tool result in a non-tool row (not seen): kept

    def _part(
        self,
        part: dict[str, Any],
        texts: list[str],
        calls: list[ToolCall],
        results: list[Message],
        extra: dict[str, Any],
        time: datetime | None,
        result: ImportResult,
    ) -> None:
        kind, data = part.get("type"), as_dict(part.get("data"))
        if kind == "text":
            text = data.get("text")
            if isinstance(text, str) and text:
                texts.append(text)
        elif kind == "tool_call":
            call_id, name = as_str(data.get("id")), as_str(data.get("name"))
            if call_id and name:
                self.names[call_id] = name
            others = {k: v for k, v in data.items() if k not in ("id", "name", "input")}
            calls.append(
                ToolCall(
                    id=call_id,
                    tool_name=name,
                    arguments_json=tool_arguments(data.get("input", "")),
                    **({"extra": others} if others else {}),
                )
            )
        elif kind == "tool_result":
            call_id = as_str(data.get("tool_call_id"))
            others = {
                k: loads(v) if k == "metadata" else v
                for k, v in data.items()
                if k not in ("tool_call_id", "name", "content") and v not in (None, "", False)
            }
            content = data.get("content")
            results.append(
                Message(
                    role="tool",
                    content=content if isinstance(content, str) else "",
                    tool_call_id=call_id,
                    tool_name=as_str(data.get("name")) or self.names.get(call_id or ""),
                    created_at=time,
                    **({"extra": others} if others else {}),
                )
            )
        elif kind == "binary":
            texts.extend(_attachment(data, extra))
        elif kind == "reasoning":
            extra.setdefault("reasoning", []).append(data)
        elif kind == "finish":
            extra["finish"] = {
                k: iso(go_time(v)) if k == "time" else v
                for k, v in data.items()
                if not (k == "time" and not v)
            }
        elif isinstance(kind, str):  # image_url and parts of a newer version
            extra.setdefault("parts", []).append(part)
        else:
            result.skipped["bad_record"] += 1


__all__ = ["MESSAGE_COLUMNS", "Messages", "go_time", "iso", "loads"]
