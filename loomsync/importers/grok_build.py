"""xAI Grok Build CLI sessions: ``~/.grok/sessions/<percent-encoded cwd>/<session id>/``.

A session folder holds ``chat_history.jsonl`` (appended as the chat goes on),
``summary.json`` and ``signals.json`` (rewritten). ``chat_history.jsonl`` lines are
``{type, content, tool_calls?, tool_call_id?, model_id?, synthetic_reason?, prompt_index?}``;
what comes out, in order:

- ``system`` → a system message; ``user`` → a user message, or a system message when Grok
  injected it (``synthetic_reason: project_instructions``; an ``interjection`` is the user's);
- ``assistant`` → an assistant message (``tool_calls[{id, name, arguments (JSON text)}]``),
  ``model_id`` under ``extra.model``;
- ``tool_result`` → a tool message paired by ``tool_call_id``;
- ``backend_tool_call`` (a tool the xAI backend ran itself, e.g. web search) → an assistant
  message with that one tool call; the backend records no result for it;
- ``reasoning`` → kept under ``extra.reasoning`` of the next assistant message.

``summary.json`` gives the thread: ``info.id`` (id ``T-<uuid>``), ``info.cwd``,
``git_root_dir``, ``head_branch``, ``generated_title``/``session_summary``, times,
``current_model_id``, and ``parent_session_id`` (a sub-session: lineage as
``metadata.extra.parent_thread_id``); the whole summary and ``signals.json`` (session metrics,
token totals) are kept under ``metadata.extra``. Lines carry no timestamps: messages have
none, the thread has the summary's.

The only sample is a FIXTURE (``../shared/data/transcripts/grok-build``, from
kenn-io/agentsview) with invented content but serialised by grok-build's own types, so the
shape is the real one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote

from loomsync.core.document.model import Message, ToolCall
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
    tool_arguments,
)
from loomsync.importers.parts import message, parse_jsonl, read_sidecar, without

NAME = "grok-build"
HISTORY = "chat_history.jsonl"
_SIDECARS = ("summary.json", "signals.json")
_KINDS = ("system", "user", "assistant", "tool_result", "reasoning", "backend_tool_call")


def _messages(records: list[dict[str, Any]], result: ImportResult) -> list[Message]:
    messages: list[Message] = []
    tools: dict[str, str] = {}
    reasoning: list[Any] = []
    for record in records:
        kind = record.get("type")
        text = blocks_text(record.get("content"), image="[image]") if "content" in record else ""
        kept = without(record, "type", "content", "tool_calls")
        if kind not in _KINDS:
            result.skipped["bad_record"] += 1
            continue
        if kind == "reasoning":
            reasoning.append(without(record, "type"))
        elif kind == "system" or (
            kind == "user" and record.get("synthetic_reason") == "project_instructions"
        ):
            messages.append(message("system", text, extra=kept))
        elif kind == "user":
            messages.append(message("user", text, extra=kept))
        elif kind in ("assistant", "backend_tool_call"):
            calls = []
            if kind == "backend_tool_call":
                call = as_dict(record.get("kind"))
                name = as_str(call.get("tool_type"))
                calls.append(
                    ToolCall(
                        id=as_str(call.get("id")), tool_name=name, arguments_json=call.get("action")
                    )
                )
                kept = {"backend": True, **kept}
            for raw in as_list(record.get("tool_calls")):
                raw = as_dict(raw)
                call_id, name = as_str(raw.get("id")), as_str(raw.get("name"))
                tools[call_id or ""] = name or ""
                calls.append(
                    ToolCall(
                        id=call_id,
                        tool_name=name,
                        arguments_json=tool_arguments(raw.get("arguments")),
                    )
                )
            if reasoning:
                kept["reasoning"], reasoning = reasoning, []
            messages.append(message("assistant", text.strip(), tool_calls=calls, extra=kept))
        else:
            call_id = as_str(record.get("tool_call_id"))
            kept.pop("tool_call_id", None)
            messages.append(
                message(
                    "tool",
                    text,
                    tool_call_id=call_id,
                    tool_name=tools.get(call_id or ""),
                    extra=kept,
                )
            )
    return messages


def parse(path: Path) -> ImportResult:
    """Read one session folder's ``chat_history.jsonl`` (a sidecar given directly reads its
    session) into one thread. Damaged lines are skipped and counted."""
    return parse_jsonl(path, from_records, unit_of)


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch`` reads the
    growing history from an offset); ``summary.json`` and ``signals.json`` are read again."""
    if unit_of(path) not in (None, path):
        return  # a sidecar: it is read with its session file, never as lines of its own
    messages = _messages(records, result)
    if not messages:
        result.warnings.append(f"{path}: no Grok Build conversation in this file")
        return
    folder = path.parent
    summary = as_dict(read_sidecar(folder / "summary.json"))
    signals = read_sidecar(folder / "signals.json")
    info = as_dict(summary.get("info"))
    session_id = as_str(info.get("id")) or folder.name
    extra: dict[str, Any] = {"summary": summary} if summary else {}
    if signals is not None:
        extra["signals"] = signals
    if parent := as_str(summary.get("parent_session_id")):
        extra["parent_thread_id"] = str(session_thread_id(NAME, parent))
    models = [m for r in records if (m := as_str(r.get("model_id")))]
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    cwd = as_str(info.get("cwd")) or unquote(folder.parent.name) or None
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "chat_format_version": summary.get("chat_format_version"),
                "agent_name": as_str(summary.get("agent_name")),
            },
            title=clip_title(
                as_str(summary.get("generated_title"))
                or as_str(summary.get("session_summary"))
                or first_user
            ),
            created_at=parse_time(summary.get("created_at")),
            last_activity_at=parse_time(summary.get("last_active_at"))
            or parse_time(summary.get("updated_at")),
            extra=extra,
            cwd=cwd,
            workspace_root=as_str(summary.get("git_root_dir")) or cwd,
            git_branch=as_str(summary.get("head_branch")),
            provider="xai",
            model=as_str(summary.get("current_model_id")) or (models[-1] if models else None),
        )
    )


def unit_of(path: Path) -> Path | None:
    """``chat_history.jsonl`` for itself and for the ``summary.json``/``signals.json`` beside
    it; None for any other file."""
    if path.name == HISTORY:
        return path
    if path.name in _SIDECARS and (path.parent / HISTORY).is_file():
        return path.parent / HISTORY
    return None


def detect(path: Path) -> bool:
    """A ``chat_history.jsonl`` whose first lines are Grok Build chat items (or a sidecar
    of one)."""
    unit = unit_of(path)
    if unit is None:
        return False
    return any(
        r.get("type") in _KINDS and ("content" in r or "kind" in r or "summary" in r)
        for r in first_objects(unit)
    )


def discover(path: Path) -> list[Path]:
    """Session histories under ``path``, or the file's own history."""
    if path.is_file():
        return [unit_of(path) or path]
    return find_files(path, [HISTORY], detect)


def default_paths() -> list[Path]:
    """``~/.grok/sessions`` (``%USERPROFILE%\\.grok\\sessions`` on Windows)."""
    return [home() / ".grok" / "sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Grok Build",
    what="session",
    expects="expected a session folder's chat_history.jsonl of {type, content} items",
    order=55,
    suffixes=(HISTORY, *_SIDECARS),
    unit_of=unit_of,
    live="append",
    watch_by_default=False,
    records=("messages", "tool calls", "git", "subagents"),
)
