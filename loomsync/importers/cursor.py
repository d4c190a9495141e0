"""Cursor (the IDE): agent and chat conversations ("composers") in the global
``state.vscdb``: ``~/.config/Cursor/User/globalStorage/state.vscdb`` on Linux
(``$XDG_CONFIG_HOME``), ``~/Library/Application Support/Cursor/User/globalStorage/`` on macOS,
``%APPDATA%\\Cursor\\User\\globalStorage\\`` on Windows.

**No sample file**: the corpus has none (every public ``state.vscdb`` found also carries
Cursor's auth tokens). The format below was learned from public readers of it (Cursor chat
exporters and storage references, 2025, composer ``_v`` 3-10, bubble ``_v`` 2-3), and the
tests build databases that follow it; a field Cursor renames will be kept under ``extra``
rather than mapped.

The database is VS Code's key/value store: ``ItemTable(key, value)`` (settings, and the
auth tokens: never read here) and ``cursorDiskKV(key, value)`` with

- ``composerData:<composerId>``: JSON ``{_v, composerId, name, createdAt (ms),
  lastUpdatedAt (ms), status, unifiedMode/forceMode, isAgentic, modelConfig{modelName},
  createdOnBranch, subComposerIds, usageData, fullConversationHeadersOnly[{bubbleId, type,
  serverBubbleId?}], conversationMap{}, conversation[] (older inline bubbles), text (the
  unsent draft), …}``;
- ``bubbleId:<composerId>:<bubbleId>``: one message ``{_v, type (1 user, 2 assistant),
  bubbleId, text, createdAt (ISO text), requestId, modelInfo{modelName}, tokenCount
  {inputTokens, outputTokens}, thinking{text}, toolFormerData{tool, toolCallId, name,
  params or rawArgs (JSON text), result (JSON text), status}, codeBlocks, …}``.

Mapping: one thread per composer with at least one message (``T-<composerId>``), messages
in header order; a bubble with ``toolFormerData`` is an assistant message with that tool call,
followed by a tool message with its ``result``; ``tokenCount`` → the message's usage (Cursor
writes zeros where it recorded nothing, so zeros are left out) with ``modelInfo.modelName``;
``thinking`` and the other non-empty fields of a bubble under the message's ``extra``; the
composer's other non-empty fields under ``metadata.extra`` (``originalFileStates`` keeps its
file names, not the file contents); ``createdOnBranch`` → ``git_branch``; a composer named in
another's ``subComposerIds`` gets ``metadata.extra.parent_thread_id``. The workspace folder
is not in the global database (only in each workspace's own ``state.vscdb``), so ``cwd`` is
not set. The key/value table has no change stamp: ``watch`` re-reads the whole database (a
private copy: Cursor's database can be hundreds of megabytes, so this is the costly agent).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, Thread, ToolCall
from loomsync.importers import places, sqlite
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    build_thread,
    clip_title,
    find_files,
    json_text,
    parse_time,
    session_thread_id,
    tool_arguments,
)
from loomsync.importers.usage import usage

NAME = "cursor"
SCHEMA = sqlite.Schema(
    tables={"cursorDiskKV": ("key", "value"), "ItemTable": ("key", "value")},
)
#: Composer fields that are the conversation itself (mapped, not kept again under extra).
_CONVERSATION = ("fullConversationHeadersOnly", "conversationMap", "conversation", "richText")
_MAPPED_COMPOSER = ("composerId", "name", "createdAt", "lastUpdatedAt", "createdOnBranch")
_MAPPED_BUBBLE = (
    "type",
    "bubbleId",
    "text",
    "createdAt",
    "tokenCount",
    "toolFormerData",
    "richText",
)


def _empty(value: Any) -> bool:
    return value in (None, "", [], {}, False)


def _decode(value: Any) -> Any:
    """A ``cursorDiskKV`` value (text or bytes holding JSON), or None."""
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if not isinstance(value, str):
        return None
    try:
        return jsontext.loads(value)
    except (ValueError, RecursionError):
        return None


def _bubble_messages(bubble: dict[str, Any]) -> list[Message]:
    """The message(s) of one bubble: user or assistant, then a tool message when the
    bubble is a tool call with a result."""
    kind = bubble.get("type")
    role = "user" if kind == 1 else "assistant" if kind == 2 else None
    if role is None:
        return []
    time = parse_time(bubble.get("createdAt"))
    extra = {k: v for k, v in bubble.items() if k not in _MAPPED_BUBBLE and not _empty(v)}
    fields: dict[str, Any] = {}
    model = as_str(as_dict(bubble.get("modelInfo")).get("modelName"))
    counts = as_dict(bubble.get("tokenCount"))
    if any(isinstance(v, int) and v > 0 for v in counts.values()):
        fields["usage"] = usage(
            input_tokens=counts.get("inputTokens") or None,
            output_tokens=counts.get("outputTokens") or None,
            model=model,
        )
    tool = as_dict(bubble.get("toolFormerData"))
    call_id = as_str(tool.get("toolCallId"))
    calls: list[ToolCall] = []
    if tool:
        raw = tool.get("rawArgs", tool.get("params"))
        calls.append(
            ToolCall(
                id=call_id,
                tool_name=as_str(tool.get("name")),
                arguments_json=tool_arguments(raw) if raw is not None else None,
            )
        )
        rest = {
            k: v
            for k, v in tool.items()
            if k not in ("toolCallId", "name", "rawArgs", "params", "result") and not _empty(v)
        }
        if rest:
            extra["tool"] = rest
    text = bubble.get("text")
    out = [
        Message(
            role=role,
            content=text if isinstance(text, str) else "",
            created_at=time,
            id=as_str(bubble.get("bubbleId")),
            tool_calls=calls or None,
            **({"extra": extra} if extra else {}),
            **{k: v for k, v in fields.items() if v is not None},
        )
    ]
    if tool and tool.get("result") is not None:
        result = tool["result"]
        out.append(
            Message(
                role="tool",
                content=json_text(result),
                tool_call_id=call_id,
                tool_name=as_str(tool.get("name")),
                created_at=time,
            )
        )
    return out


def _composer(
    path: Path,
    composer: dict[str, Any],
    bubbles: dict[str, Any],
    parents: dict[str, str],
    result: ImportResult,
) -> Thread | None:
    composer_id = str(composer["composerId"])
    inline = as_dict(composer.get("conversationMap"))
    found: list[dict[str, Any]] = []
    for header in as_list(composer.get("fullConversationHeadersOnly")):
        bubble_id = as_str(as_dict(header).get("bubbleId"))
        bubble = bubbles.get(bubble_id or "") or inline.get(bubble_id or "")
        if isinstance(bubble, dict):
            found.append({"bubbleId": bubble_id, **bubble})
        else:
            result.skipped["missing_bubble"] += 1
    if not found:
        found = [b for b in as_list(composer.get("conversation")) if isinstance(b, dict)]
    messages = [m for bubble in found for m in _bubble_messages(bubble)]
    if not messages:
        return None
    extra: dict[str, Any] = {
        k: v
        for k, v in composer.items()
        if k not in _CONVERSATION and k not in _MAPPED_COMPOSER and not _empty(v)
    }
    if "text" in extra:
        extra["draft"] = extra.pop("text")
    if isinstance(extra.get("originalFileStates"), dict):
        extra["originalFileStates"] = sorted(extra["originalFileStates"])
    if composer_id in parents:
        extra["parent_thread_id"] = str(session_thread_id(NAME, parents[composer_id]))
    branch = as_str(composer.get("createdOnBranch"))
    users = (m.content for m in messages if m.role == "user")
    models = [m.model_extra.get("usage", {}).get("model") for m in messages if m.model_extra]
    return build_thread(
        session_thread_id(NAME, composer_id),
        messages,
        source={"agent": NAME, "file": path.name, "composer_id": composer_id},
        title=clip_title(as_str(composer.get("name")))
        or next((t for u in users if (t := clip_title(u))), None),
        created_at=parse_time(composer.get("createdAt")),
        last_activity_at=parse_time(composer.get("lastUpdatedAt")),
        extra=extra,
        git_branch=branch,
        git_initial_branch=branch,
        model=as_str(as_dict(composer.get("modelConfig")).get("modelName"))
        or next((m for m in reversed(models) if m), None),
    )


def parse(path: Path) -> ImportResult:
    """Every composer of a Cursor ``state.vscdb`` that has messages, one thread each, read
    from a private copy; never raises for bad input."""
    result = ImportResult()
    sqlite.read_into(result, path, "Cursor", lambda connection: _read(connection, path, result))
    return result


def _read(connection: sqlite3.Connection, path: Path, result: ImportResult) -> None:
    if "cursorDiskKV" not in sqlite.tables(connection):
        result.warnings.append(f"{path}: not a Cursor state database (no cursorDiskKV)")
        return
    note = sqlite.schema_note(connection, SCHEMA)
    if note:
        result.warnings.append(f"{path}: {note}")
    composers: list[dict[str, Any]] = []
    bubbles: dict[str, dict[str, Any]] = {}
    query = (
        "SELECT key, value FROM cursorDiskKV"
        " WHERE key LIKE 'composerData:%' OR key LIKE 'bubbleId:%' ORDER BY key"
    )
    for key, value in connection.execute(query):
        decoded = _decode(value)
        if not isinstance(decoded, dict):
            if value is not None:
                result.skipped["bad_record"] += 1
            continue
        if key.startswith("composerData:"):
            composers.append({"composerId": key.split(":", 1)[1], **decoded})
        else:
            parts = key.split(":", 2)
            if len(parts) == 3:
                bubbles[parts[2]] = decoded  # bubble ids are UUIDs, unique across composers
    parents = {
        str(child): str(c["composerId"])
        for c in composers
        for child in as_list(c.get("subComposerIds"))
        if isinstance(child, str)
    }
    composers.sort(key=lambda c: (c.get("createdAt") or 0, str(c["composerId"])))
    for composer in composers:
        thread = _composer(path, composer, bubbles, parents, result)
        if thread is not None:
            result.threads.append(thread)


def detect(path: Path) -> bool:
    """An SQLite database with a ``cursorDiskKV`` table (VS Code's own ``state.vscdb`` has
    only ``ItemTable``)."""
    return "cursorDiskKV" in sqlite.peek(path)


def discover(path: Path) -> list[Path]:
    """``state.vscdb`` files under ``path`` that hold ``cursorDiskKV``, or the file."""
    return find_files(path, ["*.vscdb"], detect)


def default_paths() -> list[Path]:
    """Cursor's ``User/globalStorage`` folder for this OS (``$XDG_CONFIG_HOME`` and
    ``%APPDATA%`` honoured)."""
    if sys.platform == "darwin":
        base = places.application_support()
    elif sys.platform == "win32":
        base = places.appdata()
    else:
        base = places.config_home()
    return [base / "Cursor" / "User" / "globalStorage"]


def unit_of(path: Path) -> Path | None:
    """``state.vscdb`` for a change of it or its ``-wal``/``-journal``."""
    return sqlite.unit_of(path, suffix=".vscdb")


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Cursor",
    what="state database",
    expects="expected Cursor's state.vscdb (an SQLite database with a cursorDiskKV table)",
    order=44,
    suffixes=(".vscdb", ".vscdb-wal", ".vscdb-journal"),
    unit_of=unit_of,
    live="sqlite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "git", "subagents"),
)
