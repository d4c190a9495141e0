"""Block Goose: ``sessions.db`` in Goose's data folder (``~/.local/share/goose/sessions/`` on
Linux and macOS, ``%APPDATA%\\Block\\goose\\data\\sessions\\`` on Windows; ``XDG_DATA_HOME``
and ``GOOSE_PATH_ROOT`` move it), Goose ≥ ~1.10 (late 2025).

Tables (the corpus database, schema_version 5): ``sessions(id "YYYYMMDD_N", name,
description, user_set_name, session_type (user, scheduled, sub-agent, …), working_dir,
created_at, updated_at ("YYYY-MM-DD HH:MM:SS" UTC), extension_data JSON, total/input/
output_tokens, accumulated_* tokens, schedule_id, recipe_json, user_recipe_values_json)``
and ``messages(id, session_id, role, content_json, created_timestamp (Unix s), timestamp,
tokens, metadata_json)``. ``content_json`` is Goose's ``Message.content`` array of
``{"type": …}`` items: ``text{text}``, ``toolRequest{id, toolCall{status, value{name,
arguments}}}``, ``toolResponse{id, toolResult{status, value (a list of contents, or
{content, isError})}}`` (in a *user* row), ``thinking``, ``redactedThinking``, ``image``,
and notices (learned from Goose's source and public parsers; the corpus database holds one
session and no message at all, so it imports cleanly into nothing).

Mapping: text → the message's content; tool requests → tool calls of the assistant message;
tool responses → tool messages linked by id; everything else of a message under its
``extra``. A ``usage`` object in ``metadata_json`` (``inputTokens``, ``outputTokens``,
``cacheReadTokens``, ``cacheWriteTokens``, where a newer Goose writes one) → the message's
usage; the ``tokens`` column (the message's size as Goose counts it for its context window,
not what a model call billed) stays under the message's ``extra``; session token totals under ``metadata.extra``; the
working folder → ``cwd``. Goose writes no parent id: a ``sub-agent`` session is marked by
``metadata.extra.session_type``. Thread id: UUIDv5 over ``goose``, the session id, its
creation time and working folder: Goose's ids (``20251202_1``) are dates, unique only on one
machine, so the id alone would make two machines' sessions one thread; the database's own
path is not mixed in, so the same database copied elsewhere keeps its ids.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, ToolCall
from loomsync.importers import places, sqlite
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_str,
    blocks_text,
    build_thread,
    clip_title,
    find_files,
    json_text,
    name_thread_id,
    parse_time,
)
from loomsync.importers.usage import usage

NAME = "goose"

SESSION_COLUMNS = (
    "id",
    "name",
    "description",
    "user_set_name",
    "session_type",
    "working_dir",
    "created_at",
    "updated_at",
    "extension_data",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "accumulated_total_tokens",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
    "schedule_id",
    "recipe_json",
    "user_recipe_values_json",
)
MESSAGE_COLUMNS = (
    "id",
    "session_id",
    "role",
    "content_json",
    "created_timestamp",
    "timestamp",
    "tokens",
    "metadata_json",
)
SCHEMA = sqlite.Schema(
    tables={"sessions": SESSION_COLUMNS, "messages": MESSAGE_COLUMNS},
    ignored=("schema_version",),
)


def _json(value: Any) -> Any:
    if not isinstance(value, str):
        return sqlite.plain(value)
    try:
        return jsontext.loads(value)
    except (ValueError, RecursionError):
        return value


def _result_text(result: dict[str, Any]) -> tuple[str, bool]:
    """A tool response's text and whether it is an error."""
    value = result.get("value")
    error = result.get("status") == "error"
    if isinstance(value, dict):
        error = error or value.get("isError") is True
        value = value.get("content")
    if value is None and error:
        return json_text(result.get("error", "")), True
    return blocks_text(value, image="[image]") if isinstance(value, list) else json_text(
        value
    ), error


class _Session:
    def __init__(self, row: dict[str, Any]) -> None:
        self.row = row
        self.messages: list[Message] = []

    def add(self, row: dict[str, Any], result: ImportResult) -> None:
        content = _json(row.get("content_json"))
        role = row.get("role")
        if not isinstance(content, list) or role not in ("user", "assistant"):
            result.skipped["bad_record"] += 1
            return
        time = parse_time(row.get("created_timestamp")) or parse_time(row.get("timestamp"))
        texts: list[str] = []
        calls: list[ToolCall] = []
        replies: list[Message] = []
        extra: dict[str, Any] = {}
        for item in (as_dict(i) for i in content):
            kind = item.get("type")
            if kind == "text" and isinstance(item.get("text"), str):
                texts.append(item["text"])
            elif kind == "toolRequest":
                call = as_dict(item.get("toolCall"))
                value = as_dict(call.get("value"))
                calls.append(
                    ToolCall(
                        id=as_str(item.get("id")),
                        tool_name=as_str(value.get("name")),
                        arguments_json=value.get("arguments"),
                        **({"extra": {"status": call["status"]}} if call.get("status") else {}),
                    )
                )
            elif kind == "toolResponse":
                text, error = _result_text(as_dict(item.get("toolResult")))
                replies.append(
                    Message(
                        role="tool",
                        content=text,
                        tool_call_id=as_str(item.get("id")),
                        created_at=time,
                        **({"extra": {"is_error": True}} if error else {}),
                    )
                )
            elif kind == "image":
                texts.append("[image]")
                extra.setdefault("content", []).append(item)
            else:
                extra.setdefault("content", []).append(item)
        metadata = _json(row.get("metadata_json"))
        if metadata:
            extra["metadata"] = metadata
        extra.update(sqlite.unknown(row, MESSAGE_COLUMNS))
        names = {c.id: c.tool_name for m in self.messages for c in m.tool_calls or []}
        for reply in replies:
            reply.tool_name = names.get(reply.tool_call_id)
        if texts or calls or not replies:
            if row.get("tokens") is not None:
                extra["tokens"] = row["tokens"]
            fields: dict[str, Any] = {"extra": extra} if extra else {}
            counted = as_dict(as_dict(metadata).get("usage"))
            if role == "assistant" and counted:
                fields["usage"] = usage(
                    input_tokens=counted.get("inputTokens"),
                    output_tokens=counted.get("outputTokens"),
                    cache_read_tokens=counted.get("cacheReadTokens"),
                    cache_write_tokens=counted.get("cacheWriteTokens"),
                )
            self.messages.append(
                Message(
                    role=role,
                    content="\n".join(texts),
                    created_at=time,
                    id=str(row["id"]) if row.get("id") is not None else None,
                    tool_calls=calls or None,
                    **{k: v for k, v in fields.items() if v is not None},
                )
            )
        self.messages.extend(replies)


def _thread(path: Path, session: dict[str, Any], messages: list[Message]) -> Any:
    row = session
    keep = ("description", "session_type", "user_set_name", "schedule_id")
    extra: dict[str, Any] = {k: row[k] for k in keep if row.get(k) not in (None, "")}
    totals = {
        k: row[k] for k in SESSION_COLUMNS if k.endswith("_tokens") and row.get(k) is not None
    }
    if totals:
        extra["session_usage"] = totals
    for key in ("extension_data", "recipe_json", "user_recipe_values_json"):
        value = _json(row.get(key))
        if value not in (None, "", {}):
            extra[key.removesuffix("_json")] = value
    extra.update(sqlite.unknown(row, SESSION_COLUMNS))
    first_user = next((m.content for m in messages if m.role == "user" and m.content), None)
    return build_thread(
        name_thread_id(
            NAME, str(row["id"]), str(row.get("created_at")), str(row.get("working_dir"))
        ),
        messages,
        source={"agent": NAME, "file": path.name, "session_id": str(row["id"])},
        title=clip_title(as_str(row.get("name"))) or clip_title(first_user),
        created_at=parse_time(row.get("created_at")),
        last_activity_at=parse_time(row.get("updated_at")),
        extra=extra,
        cwd=as_str(row.get("working_dir")),
        workspace_root=as_str(row.get("working_dir")),
    )


def parse(path: Path) -> ImportResult:
    """One thread per session with messages, read from a private copy of the database; a
    database without messages (the corpus one) gives no thread and no warning. Never raises
    for bad input."""
    result = ImportResult()
    sqlite.read_into(result, path, "Goose", lambda connection: _read(connection, path, result))
    return result


def _read(connection: sqlite3.Connection, path: Path, result: ImportResult) -> None:
    if not {"sessions", "messages"} <= sqlite.tables(connection):
        result.warnings.append(f"{path}: not a Goose database (no sessions/messages)")
        return
    note = sqlite.schema_note(connection, SCHEMA)
    if note:
        result.warnings.append(f"{path}: {note}")
    by_session: dict[Any, list[dict[str, Any]]] = {}
    for row in sqlite.rows(connection, "messages", order=("created_timestamp", "id")):
        by_session.setdefault(row.get("session_id"), []).append(row)
    for session in sqlite.rows(connection, "sessions", order=("created_at", "id")):
        builder = _Session(session)
        for row in by_session.get(session.get("id"), []):
            builder.add(row, result)
        if builder.messages and session.get("id") is not None:
            result.threads.append(_thread(path, session, builder.messages))


def detect(path: Path) -> bool:
    """An SQLite database with Goose's ``sessions`` and ``messages.content_json``."""
    found = sqlite.peek(path)
    return "sessions" in found and "content_json" in found.get("messages", [])


def discover(path: Path) -> list[Path]:
    """``sessions.db`` files under ``path``, or the file."""
    return find_files(path, ["sessions.db", "*.db"], detect)


def default_paths() -> list[Path]:
    """Goose's sessions folder: ``$GOOSE_PATH_ROOT/data/sessions`` when set; else
    ``%APPDATA%\\Block\\goose\\data\\sessions`` on Windows and
    ``$XDG_DATA_HOME/goose/sessions`` (``~/.local/share/goose/sessions``) elsewhere."""
    root = os.environ.get("GOOSE_PATH_ROOT")
    if root:
        return [Path(root).expanduser() / "data" / "sessions"]
    if sys.platform == "win32":
        return [places.appdata() / "Block" / "goose" / "data" / "sessions"]
    return [places.data_home() / "goose" / "sessions"]


def unit_of(path: Path) -> Path | None:
    """``sessions.db`` for a change of it or its ``-wal``/``-journal``."""
    return sqlite.unit_of(path, ("sessions.db",))


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Goose",
    what="session database",
    expects="expected an SQLite database with Goose's sessions and messages tables (sessions.db)",
    order=42,
    suffixes=(".db", ".db-wal", ".db-journal"),
    unit_of=unit_of,
    live="sqlite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage"),
)
