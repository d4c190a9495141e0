"""Qwen Code chat recordings: ``~/.qwen/projects/<cwd with / → ->/chats/<session id>.jsonl``.

Qwen Code (a Gemini CLI fork, 0.18 here) appends one record per line: ``{uuid, parentUuid,
sessionId, timestamp, type, cwd, version, gitBranch?, model?, message: {role: user|model,
parts: [...]}, usageMetadata?, toolCallResult?, subtype?, systemPayload?}``. Its lines look like
Claude Code's (``uuid``, ``parentUuid``, ``sessionId``) but the message is a Gemini
``Content`` (``parts``), which is how :func:`detect` tells them apart. What comes out:

- ``user`` → a user message (text parts);
- ``assistant`` → an assistant message: text parts as content (``thought`` parts are kept
  under ``extra.thoughts``, not content), ``functionCall`` parts as tool calls, and
  ``usageMetadata`` as usage (Gemini counts: ``promptTokenCount`` includes the cached
  tokens and ``candidatesTokenCount`` excludes the thoughts, so input = prompt - cached and
  output = candidates + thoughts, see :mod:`loomsync.importers.usage`);
- ``tool_result`` → one tool message per ``functionResponse`` part (its ``output``, else
  ``error``, else the response as JSON), paired by id; ``toolCallResult`` kept in ``extra``;
- ``system`` records (``ui_telemetry``, ``attribution_snapshot``, …) are kept in
  ``metadata.extra.system``.

Thread id ``T-<sessionId>``. Learned from ``../shared/data/transcripts/qwen-code`` (a real
Qwen Code 0.18.1 run against a mock model).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    build_thread,
    clip_title,
    find_files,
    first_objects,
    head,
    home,
    json_text,
    parse_time,
    session_thread_id,
)
from loomsync.importers.parts import message, parse_jsonl, without
from loomsync.importers.usage import usage

NAME = "qwen-code"


def _usage(record: dict[str, Any], model: str | None) -> dict[str, Any] | None:
    meta = as_dict(record.get("usageMetadata"))
    prompt, cached = meta.get("promptTokenCount"), meta.get("cachedContentTokenCount")
    output, thoughts = meta.get("candidatesTokenCount"), meta.get("thoughtsTokenCount")
    if isinstance(prompt, int) and isinstance(cached, int):
        prompt -= cached
    if isinstance(output, int) and isinstance(thoughts, int):
        output += thoughts
    return usage(
        input_tokens=prompt,
        output_tokens=output,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
        model=model,
        provider="qwen",
    )


def _response_text(response: Any) -> str:
    body = as_dict(response)
    value = body.get("output", body.get("error", response))
    return json_text(value) if value is not None else ""


def _messages(
    records: list[dict[str, Any]], result: ImportResult
) -> tuple[list[Message], list[Any]]:
    messages: list[Message] = []
    system: list[Any] = []
    tools: dict[str, str] = {}
    seen: set[str] = set()
    for record in records:
        kind, uuid = record.get("type"), as_str(record.get("uuid"))
        if uuid and uuid in seen:
            result.skipped["duplicate_uuid"] += 1
            continue
        if kind == "system":
            system.append(record)
            continue
        body = record.get("message")
        if kind not in ("user", "assistant", "tool_result") or not isinstance(body, dict):
            result.skipped["bad_record"] += 1
            continue
        if uuid:
            seen.add(uuid)
        time = parse_time(record.get("timestamp"))
        parts = [as_dict(p) for p in as_list(body.get("parts"))]
        texts = [
            str(p["text"]) for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
        ]
        kept = without(record, "message", "uuid", "timestamp", "usageMetadata", "type")
        if kind == "user":
            messages.append(message("user", "\n".join(texts), created_at=time, id=uuid, extra=kept))
        elif kind == "assistant":
            model = as_str(record.get("model"))
            calls = []
            for part in parts:
                call = as_dict(part.get("functionCall"))
                if call:
                    call_id, name = as_str(call.get("id")), as_str(call.get("name"))
                    tools[call_id or ""] = name or ""
                    calls.append(
                        ToolCall(id=call_id, tool_name=name, arguments_json=call.get("args"))
                    )
            thoughts = [p.get("text") for p in parts if p.get("thought")]
            if thoughts:
                kept["thoughts"] = thoughts
            messages.append(
                message(
                    "assistant",
                    "\n".join(texts).strip(),
                    created_at=time,
                    id=uuid,
                    tool_calls=calls,
                    usage=_usage(record, model),
                    extra=kept,
                )
            )
        else:
            for index, part in enumerate(parts):
                response = as_dict(part.get("functionResponse"))
                if not response:
                    continue
                call_id = as_str(response.get("id"))
                messages.append(
                    message(
                        "tool",
                        _response_text(response.get("response")),
                        created_at=time,
                        id=f"{uuid}:{index}" if uuid else None,
                        tool_call_id=call_id,
                        tool_name=as_str(response.get("name")) or tools.get(call_id or ""),
                        extra=kept,
                    )
                )
    return messages, system


def parse(path: Path) -> ImportResult:
    """Read one chat recording into one thread. Damaged lines are skipped and counted; an
    unreadable file gives a warning and no thread."""
    return parse_jsonl(path, from_records)


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch`` reads a
    growing recording from an offset): threads and warnings go to ``result``."""
    messages, system = _messages(records, result)
    if not messages:
        result.warnings.append(f"{path}: no Qwen Code conversation in this file")
        return
    conversation = [r for r in records if r.get("type") != "system"]

    def last(key: str) -> str | None:
        return next((v for r in reversed(conversation) if (v := as_str(r.get(key)))), None)

    def first(key: str) -> str | None:
        return next((v for r in conversation if (v := as_str(r.get(key)))), None)

    session_id = last("sessionId") or path.stem
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "version": last("version"),
                "project": path.parent.parent.name if path.parent.name == "chats" else None,
            },
            title=clip_title(first_user),
            extra={"system": system} if system else None,
            workspace_root=first("cwd"),
            cwd=last("cwd"),
            git_branch=last("gitBranch"),
            git_initial_branch=first("gitBranch"),
            provider="qwen",
            model=last("model"),
        )
    )


def _looks_like_a_line(record: dict[str, Any]) -> bool:
    body = record.get("message")
    return (
        "uuid" in record
        and "sessionId" in record
        and (
            (isinstance(body, dict) and isinstance(body.get("parts"), list))
            or (record.get("type") == "system" and "systemPayload" in record)
        )
    )


def detect(path: Path) -> bool:
    """A ``.jsonl`` file whose first lines are Qwen Code records: ``uuid`` and ``sessionId``
    with a Gemini-style ``message.parts`` (Claude Code's lines have ``message.content``)."""
    if path.suffix != ".jsonl":
        return False
    records = first_objects(path)
    if records:
        return any(_looks_like_a_line(r) for r in records)
    first = head(path).split(b"\n", 1)[0]
    return b'"sessionId"' in first and b'"parts"' in first and b'"uuid"' in first


def discover(path: Path) -> list[Path]:
    """Chat recordings under ``path`` (``projects/*/chats/*.jsonl``), or the file itself."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``~/.qwen/projects`` (the same under ``%USERPROFILE%`` on Windows): Qwen Code's
    ``Storage.getGlobalQwenDir`` is the home folder's ``.qwen``, with no variable to move it."""
    return [home() / ".qwen" / "projects"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Qwen Code",
    what="chat recording",
    expects="expected JSON Lines with uuid, sessionId and a message with parts, in a .jsonl file",
    order=15,
    suffixes=(".jsonl",),
    live="append",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "git"),
)
