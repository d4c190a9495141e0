"""Factory Droid sessions: ``~/.factory/sessions/<cwd slug>/<session uuid>.jsonl``.

Line 1 is ``{type: "session_start", id, title, sessionTitle, owner, cwd, version}``; then
``{type: "message", id, parentId, timestamp, message: {role, content: [blocks]}}`` lines whose
blocks are Anthropic-style (``text``, ``thinking``, ``tool_use{id, name, input}``,
``tool_result{tool_use_id, content, is_error}``). What comes out, in file order:

- a user line → a user message for its text blocks, and a tool message per ``tool_result``
  (paired with the ``tool_use`` of the same id);
- an assistant line → an assistant message (text as content, ``tool_use`` as tool calls,
  ``thinking`` kept under ``extra.thinking``);
- other line types (added by later versions) are kept in ``metadata.extra.events``.

Newer Droid versions write a ``<session uuid>.settings.json`` beside the session (model,
session token totals): it is kept whole in ``metadata.extra.settings`` and its ``model``
names the thread's model. No per-message token counts are recorded in this shape.

The only sample is a hand-made FIXTURE in the shape of the real files
(``../shared/data/transcripts/droid``, from jazzyalex/agent-sessions); no real Droid session
with a usable licence was found, so fields beyond that shape are kept, never interpreted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    blocks_text,
    build_thread,
    clip_title,
    find_files,
    first_objects,
    home,
    parse_time,
    session_thread_id,
)
from loomsync.importers.parts import message, parse_jsonl, read_sidecar, tool_uses, without

NAME = "droid"


def _line_messages(record: dict[str, Any], tools: dict[str, str]) -> list[Message]:
    body = as_dict(record.get("message"))
    role, time, line_id = (
        body.get("role"),
        parse_time(record.get("timestamp")),
        as_str(record.get("id")),
    )
    content = body.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
    blocks = [as_dict(b) for b in blocks]
    kept = without(record, "message", "type", "id", "timestamp")
    texts = [
        str(b["text"]) for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if role == "assistant":
        calls = tool_uses(blocks, tools)
        thinking = [b.get("thinking") for b in blocks if b.get("type") == "thinking"]
        if thinking:
            kept["thinking"] = thinking
        extra_body = without(body, "role", "content")
        if extra_body:
            kept["message"] = extra_body
        return [
            message(
                "assistant",
                "\n\n".join(t.strip() for t in texts if t.strip()),
                created_at=time,
                id=line_id,
                tool_calls=calls,
                extra=kept,
            )
        ]
    out: list[Message] = []
    for index, block in enumerate(blocks):
        if block.get("type") == "tool_result":
            call_id = as_str(block.get("tool_use_id"))
            out.append(
                message(
                    "tool",
                    blocks_text(block.get("content"), image="[image]"),
                    created_at=time,
                    id=f"{line_id}:{index}" if line_id else None,
                    tool_call_id=call_id,
                    tool_name=tools.get(call_id or ""),
                    extra={"is_error": True} if block.get("is_error") else None,
                )
            )
    if texts or not out:
        text = "\n".join(texts)
        own = message(
            "system" if role == "system" else "user", text, created_at=time, id=line_id, extra=kept
        )
        out.append(own)
    return out


def parse(path: Path) -> ImportResult:
    """Read one session into one thread. Damaged lines are skipped and counted; an
    unreadable file gives a warning and no thread."""
    return parse_jsonl(path, from_records)


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch`` reads a
    growing session from an offset): threads and warnings go to ``result``."""
    start: dict[str, Any] = {}
    events: list[dict[str, Any]] = []
    messages: list[Message] = []
    tools: dict[str, str] = {}
    for record in records:
        kind = record.get("type")
        if kind == "session_start":
            start = record
        elif kind == "message":
            if not isinstance(record.get("message"), dict):
                result.skipped["bad_record"] += 1
                continue
            messages.extend(_line_messages(record, tools))
        else:
            events.append(record)
    if not messages:
        result.warnings.append(f"{path}: no Factory Droid conversation in this file")
        return
    session_id = as_str(start.get("id")) or path.stem
    settings = as_dict(read_sidecar(path.with_name(f"{path.stem}.settings.json")))
    extra: dict[str, Any] = {"session_start": without(start, "type")}
    if events:
        extra["events"] = events
    if settings:
        extra["settings"] = settings
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "version": as_str(start.get("version")),
                "project": path.parent.name,
            },
            title=clip_title(
                as_str(start.get("sessionTitle")) or as_str(start.get("title")) or first_user
            ),
            extra=extra,
            cwd=as_str(start.get("cwd")),
            workspace_root=as_str(start.get("cwd")),
            provider="factory",
            model=as_str(settings.get("model")),
        )
    )


def detect(path: Path) -> bool:
    """A ``.jsonl`` file that opens with Droid's ``session_start`` line (``id`` and a
    ``sessionTitle``, ``title``, ``owner`` or ``cwd``). Message lines alone are not enough:
    Pi's v3 sessions write ``{type: "message", id, parentId, message}`` lines too."""
    if path.suffix != ".jsonl":
        return False
    records = first_objects(path, 1)
    return bool(records) and (
        records[0].get("type") == "session_start"
        and "id" in records[0]
        and any(k in records[0] for k in ("sessionTitle", "title", "owner", "cwd"))
    )


def discover(path: Path) -> list[Path]:
    """Sessions under ``path`` (``sessions/<slug>/<uuid>.jsonl``), or the file itself."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``~/.factory/sessions`` (``%USERPROFILE%\\.factory\\sessions`` on Windows)."""
    return [home() / ".factory" / "sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Factory Droid",
    what="session",
    expects="expected JSON Lines opening with a session_start line, then message lines",
    order=50,
    suffixes=(".jsonl", ".settings.json"),
    unit_of=lambda p: (
        p.with_name(p.name.removesuffix(".settings.json") + ".jsonl")
        if p.name.endswith(".settings.json")
        else p
    ),
    live="append",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
