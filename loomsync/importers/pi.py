"""Pi coding agent sessions (badlogic/pi-mono, ``pi-coding-agent``):
``~/.pi/agent/sessions/--<cwd with / → ->--/<ISO time>_<uuid>.jsonl`` (``$PI_CODING_AGENT_DIR``
replaces ``~/.pi/agent``, ``$PI_CODING_AGENT_SESSION_DIR`` the sessions folder), one JSON object per line, appended as the session goes.

Line 1 is the header ``{type:"session", id, timestamp, cwd, provider?, modelId?,
thinkingLevel?, version?, parentSession?}``. Then entries:

- ``message``: ``{message: {role, content, timestamp (ms), …}}`` with roles ``user``
  (text/image blocks) → user; ``assistant`` (``text`` → content, ``toolCall{id, name,
  arguments}`` → tool calls, ``thinking`` kept in ``extra.blocks``; ``api``, ``provider``,
  ``model``, ``usage{input, output, cacheRead, cacheWrite, totalTokens, cost}``,
  ``stopReason``, ``errorMessage``) → assistant with ``usage``; ``toolResult{toolCallId,
  toolName, content, isError, details}`` → a tool message paired with its call;
  ``bashExecution{command, output, exitCode, …}`` (a command the user ran with ``!``) → a
  user message ``!command`` followed by its output; other roles (``custom``,
  ``branchSummary``, ``compactionSummary``) → system messages;
- ``compaction{summary, firstKeptEntryIndex | firstKeptEntryId, tokensBefore}`` and
  ``branch_summary{summary}`` → a system message with the summary, also listed in
  ``metadata.extra.compactions``;
- ``model_change``, ``thinking_level_change``, ``label``, ``custom`` and any entry type not
  known here → ``metadata.extra.events`` (nothing is dropped); ``session_info{name}`` → the
  title.

Two layouts: v1 (2025) lines have no ids and are one linear conversation; later versions
(``version`` 2/3) give every entry ``id`` and ``parentId`` — a tree whose branches come from
rewinding. The conversation is then the path from the last entry back to the root, and the
entries of abandoned branches are kept whole in ``metadata.extra.branches``. A session
started from another (``parentSession``, the other session's file) names it in
``metadata.extra.forked_from``.

A torn write can glue two entries on one line without a newline (a real Pi session has one):
both are recovered (:func:`~loomsync.importers.common.glued_values`).
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Thread, ToolCall
from loomsync.importers.blocks import message, rest
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
    name_thread_id,
    parse_time,
    read_jsonl,
    session_thread_id,
)
from loomsync.importers.usage import usage

NAME = "pi"

_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.I)
_SUMMARIES = ("compaction", "branch_summary")


def _session_of_file(name: str) -> str | None:
    match = _UUID.search(name)
    return match.group(1) if match else None


def _path(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(conversation, abandoned)``: all entries when the file has no ids (v1), else the
    path from the last entry with an id back to the root, and the entries off that path."""
    by_id = {e["id"]: e for e in entries if isinstance(e.get("id"), str)}
    if not by_id:
        return entries, []
    leaf = next(e for e in reversed(entries) if isinstance(e.get("id"), str))
    chosen: set[str] = set()
    current: dict[str, Any] | None = leaf
    while current is not None and current["id"] not in chosen:
        chosen.add(current["id"])
        parent = current.get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    kept = [e for e in entries if not isinstance(e.get("id"), str) or e["id"] in chosen]
    return kept, [e for e in entries if isinstance(e.get("id"), str) and e["id"] not in chosen]


class _Session:
    """Builds one thread from the entries of a Pi session file, in order."""

    def __init__(self, path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
        self.path = path
        self.header: dict[str, Any] = {}
        self.messages: list[Message] = []
        self.events: list[dict[str, Any]] = []
        self.compactions: list[dict[str, Any]] = []
        self.name: str | None = None
        self.model: str | None = None
        self.provider: str | None = None
        body: list[dict[str, Any]] = []
        for record in records:
            if record.get("type") == "session" and not self.header:
                self.header = record
            elif isinstance(record.get("type"), str):
                body.append(record)
            else:
                result.skipped["bad_record"] += 1
        self.model = as_str(self.header.get("modelId"))
        self.provider = as_str(self.header.get("provider"))
        conversation, self.abandoned = _path(body)
        for entry in conversation:
            self._entry(entry)

    def _entry(self, entry: dict[str, Any]) -> None:
        kind = entry["type"]
        time = parse_time(entry.get("timestamp"))
        if kind == "message" and isinstance(entry.get("message"), dict):
            self._message(entry["message"], time, entry)
        elif kind in _SUMMARIES:
            summary = entry.get("summary")
            more = rest(entry, ("summary", "timestamp"))
            self.compactions.append({**more, "timestamp": entry.get("timestamp")})
            text = summary if isinstance(summary, str) else ""
            self.messages.append(message("system", text, created_at=time, extra=more))
        elif kind == "session_info" and as_str(entry.get("name")):
            self.name = entry["name"]
            self.events.append(entry)
        else:
            if kind == "model_change":
                self.model = as_str(entry.get("modelId")) or self.model
                self.provider = as_str(entry.get("provider")) or self.provider
            self.events.append(entry)

    def _message(
        self, body: dict[str, Any], entry_time: datetime | None, entry: dict[str, Any]
    ) -> None:
        role = body.get("role")
        time = parse_time(body.get("timestamp")) or entry_time
        ids = rest(entry, ("type", "timestamp", "message"))  # id / parentId of v2+ entries
        if role == "user":
            extra = {**ids, **rest(body, ("role", "content", "timestamp"))}
            text = blocks_text(body.get("content"), image="[image]")
            self.messages.append(message("user", text, created_at=time, extra=extra))
        elif role == "assistant":
            self._assistant(body, time, ids)
        elif role == "toolResult":
            extra = {
                **ids,
                **rest(body, ("role", "content", "timestamp", "toolCallId", "toolName")),
            }
            self.messages.append(
                message(
                    "tool",
                    blocks_text(body.get("content"), image="[image]"),
                    created_at=time,
                    tool_call_id=as_str(body.get("toolCallId")),
                    tool_name=as_str(body.get("toolName")),
                    extra=extra,
                )
            )
        elif role == "bashExecution":
            extra = {**ids, **rest(body, ("role", "timestamp"))}
            command, output = as_str(body.get("command")) or "", body.get("output")
            text = f"!{command}" + (f"\n{output}" if isinstance(output, str) and output else "")
            self.messages.append(message("user", text, created_at=time, extra=extra))
        else:
            extra = {**ids, **rest(body, ("content", "timestamp"))}
            text = blocks_text(body.get("content") or body.get("summary"), image="[image]")
            self.messages.append(message("system", text, created_at=time, extra=extra))

    def _assistant(self, body: dict[str, Any], time: datetime | None, ids: dict[str, Any]) -> None:
        texts: list[str] = []
        calls: list[ToolCall] = []
        others: list[Any] = []
        for block in as_list(body.get("content")):
            block = as_dict(block)
            if block.get("type") == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif block.get("type") == "toolCall":
                calls.append(
                    ToolCall(
                        id=as_str(block.get("id")),
                        tool_name=as_str(block.get("name")),
                        arguments_json=block.get("arguments"),
                    )
                )
            else:
                others.append(block)
        model, provider = as_str(body.get("model")), as_str(body.get("provider"))
        self.model, self.provider = model or self.model, provider or self.provider
        counts = as_dict(body.get("usage"))
        extra = {**ids, **rest(body, ("role", "content", "timestamp", "model", "provider"))}
        if others:
            extra["blocks"] = others
        self.messages.append(
            message(
                "assistant",
                "\n".join(texts),
                created_at=time,
                tool_calls=calls or None,
                usage=usage(
                    input_tokens=counts.get("input"),
                    output_tokens=counts.get("output"),
                    cache_read_tokens=counts.get("cacheRead"),
                    cache_write_tokens=counts.get("cacheWrite"),
                    model=model,
                    provider=provider,
                ),
                extra=extra,
            )
        )

    def thread(self) -> Thread | None:
        """The thread, or None when the file holds no message."""
        if not self.messages:
            return None
        session_id = as_str(self.header.get("id")) or _session_of_file(self.path.name)
        thread_id = (
            session_thread_id(NAME, session_id)
            if session_id
            else name_thread_id(NAME, file_identity(self.path))
        )
        extra: dict[str, Any] = {"header": rest(self.header, ("type", "id", "timestamp", "cwd"))}
        for key, value in (
            ("events", self.events),
            ("compactions", self.compactions),
            ("branches", self.abandoned),
        ):
            if value:
                extra[key] = value
        parent = as_str(self.header.get("parentSession"))
        parent_id = _session_of_file(parent) if parent else None
        if parent_id:
            extra["forked_from"] = str(session_thread_id(NAME, parent_id))
        first_user = next(
            (m.content for m in self.messages if m.role == "user" and m.content.strip()), None
        )
        return build_thread(
            thread_id,
            self.messages,
            source={
                "agent": NAME,
                "file": self.path.name,
                "session_id": session_id,
                "version": self.header.get("version"),
            },
            title=clip_title(self.name or first_user),
            created_at=parse_time(self.header.get("timestamp")),
            extra=extra,
            workspace_root=as_str(self.header.get("cwd")),  # Pi records no other root
            cwd=as_str(self.header.get("cwd")),
            model=self.model,
            provider=self.provider,
        )


def parse(path: Path) -> ImportResult:
    """Read one Pi session file into one thread; damaged lines are skipped and counted (two
    entries glued on one line are both read)."""
    result = ImportResult()
    records = read_jsonl(path, result)
    if records is not None:
        from_records(path, records, result)
    return result


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of records already read (``loomsync watch`` reads appended lines)."""
    thread = _Session(path, records, result).thread()
    if thread is None:
        result.warnings.append(f"{path}: no Pi conversation in this file")
    else:
        result.threads.append(thread)


def detect(path: Path) -> bool:
    """A ``.jsonl`` file whose first line is a Pi session header (``type: session`` with an
    ``id`` and a ``cwd``; Codex and Qwen headers are shaped otherwise)."""
    if path.suffix != ".jsonl":
        return False
    first = first_objects(path, 1)
    if not first:
        return False
    header = first[0]
    return (
        header.get("type") == "session"
        and isinstance(header.get("id"), str)
        and isinstance(header.get("cwd"), str)
        and "payload" not in header
        and "sessionId" not in header
    )


def discover(path: Path) -> list[Path]:
    """Pi session files under ``path``, or the file itself."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``$PI_CODING_AGENT_SESSION_DIR`` when set, else ``$PI_CODING_AGENT_DIR/sessions``, by
    default ``~/.pi/agent/sessions`` (Linux, macOS; Pi's own two variables)."""
    sessions = os.environ.get("PI_CODING_AGENT_SESSION_DIR")
    if sessions:
        return [Path(sessions).expanduser()]
    configured = os.environ.get("PI_CODING_AGENT_DIR")
    root = Path(configured).expanduser() if configured else home() / ".pi" / "agent"
    return [root / "sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Pi",
    what="session",
    expects='expected JSON Lines opening with a {"type": "session", "id", "cwd"} header, in a .jsonl file',
    order=82,
    suffixes=(".jsonl",),
    live="append",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "lineage"),
)
