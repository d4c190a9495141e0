"""The cursor-agent CLI (Cursor's terminal agent): a chat store per chat,
``~/.cursor/chats/<md5 of the workspace path>/<chat id>/store.db``, and (newer versions) a
plain transcript ``~/.cursor/projects/<slug>/agent-transcripts/<id>.jsonl``.

``store.db`` (SQLite, WAL mode while the agent runs) has two tables: ``meta(key, value)``,
whose key ``"0"`` holds **hex-encoded** JSON ``{agentId, name, mode, createdAt (ms),
lastUsedModel, latestRootBlobId}``, and ``blobs(id (SHA-256 hex), data)``, a content-
addressed tree: a blob starting with ``{`` is a message in the Vercel AI SDK shape
``{role: system|user|assistant|tool, id?, content: text | [text | reasoning | tool-call
{toolCallId, toolName, args | input} | tool-result{toolCallId, toolName, result | output
{type, value}, isError}]}``; any
other blob is a protobuf node whose length-delimited fields name child blobs by their raw
32-byte hash (and may end with embedded JSON). The conversation is the messages met walking
the tree depth-first from ``latestRootBlobId``, each blob once. Learned from public readers
of the format (the corpus holds only a hand-made fixture with no blob, which imports into
nothing); the tests build stores that follow it. Messages carry no time: the thread's
``created_at`` is ``createdAt``; no usage is recorded; the workspace is only known by its
MD5 (``metadata.extra.workspace_hash``).

The transcript JSON Lines are ``{role, message: {content: [text | tool_use{name, input} |
tool_result{tool_use_id, content}]}}`` with no ids or times; its tool calls carry no id, so
they cannot be paired with results.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, ToolCall
from loomsync.importers import sqlite
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    blocks_text,
    build_thread,
    clip_title,
    file_identity,
    find_files,
    first_objects,
    home,
    json_text,
    name_thread_id,
    parse_time,
    read_jsonl,
    session_thread_id,
)

NAME = "cursor-agent"
SCHEMA = sqlite.Schema(tables={"meta": ("key", "value"), "blobs": ("id", "data")})
_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.DOTALL)
_ROLES = ("system", "user", "assistant", "tool")
#: Deepest blob tree walked (a cycle or a damaged tree stops here, not in a RecursionError).
MAX_DEPTH = 200


def _meta(connection: sqlite3.Connection) -> dict[str, Any]:
    """The decoded ``meta`` key ``"0"`` ({} when absent or not hex JSON)."""
    row = connection.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    value = row[0] if row else None
    try:
        raw = bytes.fromhex(value) if isinstance(value, str) else bytes(value or b"")
        decoded = jsontext.loads(raw.decode("utf-8"))
    except (ValueError, TypeError, UnicodeDecodeError, RecursionError):
        return {}
    return as_dict(decoded)


def _fields(data: bytes) -> list[bytes]:
    """The length-delimited field values of a protobuf message, in order; parsing stops at
    the first malformed field (what came before it is kept)."""
    out: list[bytes] = []
    index = 0

    def varint() -> int:
        nonlocal index
        shift = value = 0
        while index < len(data) and shift < 64:
            byte = data[index]
            index += 1
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
        raise ValueError("truncated varint")

    try:
        while index < len(data):
            wire = varint() & 7
            if wire == 0:
                varint()
            elif wire == 1:
                index += 8
            elif wire == 5:
                index += 4
            elif wire == 2:
                length = varint()
                if index + length > len(data):
                    break
                out.append(data[index : index + length])
                index += length
            else:
                break
    except ValueError:
        pass
    return out


def _walk(blobs: dict[str, bytes], root: str, result: ImportResult) -> list[tuple[str, Any]]:
    """``(blob id, message object)`` of every message blob reachable from ``root``, in
    depth-first order, each blob once."""
    found: list[tuple[str, Any]] = []
    seen: set[str] = set()
    stack: list[tuple[str, int]] = [(root, 0)]
    while stack:
        blob_id, depth = stack.pop()
        if blob_id in seen or blob_id not in blobs or depth > MAX_DEPTH:
            continue
        seen.add(blob_id)
        data = blobs[blob_id]
        if data[:1] == b"{":
            try:
                found.append((blob_id, jsontext.loads(data.decode("utf-8"))))
            except (ValueError, UnicodeDecodeError, RecursionError):
                result.skipped["invalid_json"] += 1
            continue
        children: list[tuple[str, int]] = []
        for value in _fields(data):
            if len(value) == 32 and value.hex() in blobs:
                children.append((value.hex(), depth + 1))
            elif value[:1] == b"{":
                try:
                    found.append((blob_id, jsontext.loads(value.decode("utf-8"))))
                except (ValueError, UnicodeDecodeError, RecursionError):
                    result.skipped["invalid_json"] += 1
        stack.extend(reversed(children))
    return found


def _messages(items: list[tuple[str | None, Any]], result: ImportResult) -> list[Message]:
    """Messages from AI-SDK or Anthropic-style message objects (store blobs and transcript
    lines share the content block shapes)."""
    messages: list[Message] = []
    names: dict[str, str] = {}
    for blob_id, item in items:
        item = as_dict(item)
        role = item.get("role")
        body = as_dict(item.get("message")) or item
        content = body.get("content")
        if role not in _ROLES:
            result.skipped["bad_record"] += 1
            continue
        texts: list[str] = []
        calls: list[ToolCall] = []
        replies: list[Message] = []
        extra: dict[str, Any] = {}
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in (as_dict(b) for b in as_list(blocks)):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind in ("tool-call", "tool_use"):
                call_id = as_str(block.get("toolCallId")) or as_str(block.get("id"))
                name = as_str(block.get("toolName")) or as_str(block.get("name"))
                if call_id and name:
                    names[call_id] = name
                arguments = block.get("args", block.get("input"))  # AI SDK 4 / 5
                calls.append(ToolCall(id=call_id, tool_name=name, arguments_json=arguments))
            elif kind in ("tool-result", "tool_result"):
                call_id = as_str(block.get("toolCallId")) or as_str(block.get("tool_use_id"))
                output = block.get("result", block.get("output", block.get("content")))
                if isinstance(output, dict) and "value" in output:  # AI SDK 5: {type, value}
                    output = output["value"]
                text = blocks_text(output) if isinstance(output, list) else json_text(output)
                error = block.get("isError") is True or block.get("is_error") is True
                replies.append(
                    Message(
                        role="tool",
                        content=text if output is not None else "",
                        tool_call_id=call_id,
                        tool_name=as_str(block.get("toolName")) or names.get(call_id or ""),
                        **({"extra": {"is_error": True}} if error else {}),
                    )
                )
            else:
                extra.setdefault("content", []).append(block)
        others = {k: v for k, v in item.items() if k not in ("role", "content", "message", "id")}
        if others:
            extra["fields"] = others
        if blob_id:
            extra["blob_id"] = blob_id
        if role != "tool" and (texts or calls or not replies):
            messages.append(
                Message(
                    role=role,
                    content="\n".join(texts),
                    tool_calls=calls or None,
                    **({"extra": extra} if extra else {}),
                )
            )
        messages.extend(replies)
    return messages


def _title(messages: list[Message]) -> str | None:
    for message in messages:
        if message.role == "user" and message.content.strip():
            match = _QUERY.search(message.content)
            if title := clip_title(match.group(1) if match else message.content):
                return title
    return None


def _parse_store(path: Path, result: ImportResult) -> None:
    meta: dict[str, Any] = {}
    blobs: dict[str, bytes] = {}

    def read(connection: sqlite3.Connection) -> None:
        if not {"meta", "blobs"} <= sqlite.tables(connection):
            result.warnings.append(f"{path}: not a cursor-agent chat store (no meta/blobs)")
            return
        note = sqlite.schema_note(connection, SCHEMA)
        if note:
            result.warnings.append(f"{path}: {note}")
        meta.update(_meta(connection))
        for blob_id, data in connection.execute("SELECT id, data FROM blobs"):
            if isinstance(data, bytes | str) and blob_id is not None:
                blobs[str(blob_id)] = data.encode("utf-8") if isinstance(data, str) else data

    sqlite.read_into(result, path, "cursor-agent", read)
    root = as_str(meta.get("latestRootBlobId"))
    items: list[tuple[str | None, Any]] = list(_walk(blobs, root, result)) if root else []
    messages = _messages(items, result)
    if not messages:  # a chat opened and left, or a store still empty: nothing to import
        return
    chat_id = as_str(meta.get("agentId")) or path.parent.name
    created = parse_time(meta.get("createdAt"))
    known = ("agentId", "name", "createdAt", "lastUsedModel", "latestRootBlobId")
    result.threads.append(
        build_thread(
            session_thread_id(NAME, chat_id),
            messages,
            source={"agent": NAME, "file": path.name, "chat_id": chat_id},
            title=clip_title(as_str(meta.get("name"))) or _title(messages),
            created_at=created,
            last_activity_at=created,
            extra={
                "workspace_hash": path.parent.parent.name or None,
                **{k: v for k, v in meta.items() if k not in known},
            },
            model=as_str(meta.get("lastUsedModel")),
        )
    )


def _parse_transcript(path: Path, result: ImportResult) -> None:
    records = read_jsonl(path, result)
    if records is None:
        return
    messages = _messages([(None, r) for r in records], result)
    if not messages:
        result.warnings.append(f"{path}: no cursor-agent conversation in this transcript")
        return
    result.threads.append(
        build_thread(
            name_thread_id(NAME, "transcript", file_identity(path)),
            messages,
            source={"agent": NAME, "file": path.name, "kind": "agent-transcript"},
            title=_title(messages),
            extra={"project": path.parent.parent.name or None},
        )
    )


def parse(path: Path) -> ImportResult:
    """A chat store (``store.db``, from a private copy) or an agent transcript (``.jsonl``)
    into at most one thread; never raises for bad input."""
    result = ImportResult()
    if path.suffix == ".jsonl":
        _parse_transcript(path, result)
    else:
        _parse_store(path, result)
    return result


def _is_transcript(path: Path) -> bool:
    records = first_objects(path, 3)
    return bool(records) and all(
        r.get("role") in _ROLES and isinstance(r.get("message"), dict) and "type" not in r
        for r in records
    )


def detect(path: Path) -> bool:
    """A chat store (SQLite with exactly the ``meta`` and ``blobs`` tables) or a ``.jsonl``
    whose first lines are ``{role, message}`` objects without a ``type``."""
    if path.suffix == ".jsonl":
        return _is_transcript(path)
    found = sqlite.peek(path)
    return {"meta", "blobs"} <= set(found) and "value" in found["meta"]


def discover(path: Path) -> list[Path]:
    """Chat stores and transcripts under ``path``, or the file."""
    return find_files(path, ["*.db", "*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``~/.cursor/chats`` (stores) and ``~/.cursor/projects`` (transcripts); the same on
    every OS (``%USERPROFILE%\\.cursor`` on Windows)."""
    return [home() / ".cursor" / "chats", home() / ".cursor" / "projects"]


def unit_of(path: Path) -> Path | None:
    """``store.db`` (or any ``*store.db``, as a copied store may be renamed) for a change of
    it or its ``-wal``; a transcript for itself."""
    return path if path.suffix == ".jsonl" else sqlite.unit_of(path, suffix="store.db")


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="cursor-agent",
    what="chat",
    expects="expected a cursor-agent store.db (meta and blobs tables) or agent-transcripts .jsonl",
    order=43,
    suffixes=(".db", ".db-wal", ".jsonl"),
    unit_of=unit_of,
    live="sqlite",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
