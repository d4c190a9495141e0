"""sst/opencode sessions: its JSON storage tree, ``$XDG_DATA_HOME/opencode/storage/`` (by
default ``~/.local/share/opencode/storage/`` on Linux, macOS and Windows alike, opencode
0.x to 1.1; opencode 1.2 moved to a SQLite database, not read here).

One session is many files, each one pretty-printed JSON object (opencode's ``Storage.write``):

- ``session/<projectID>/<sessionID>.json``: ``{id "ses_…", version, projectID, directory,
  title, parentID? (a sub-agent's session), time{created, updated}, summary, share?,
  revert?}``; this is the file ``discover`` returns and ``parse`` is given (the unit);
- ``message/<sessionID>/<messageID>.json``: user ``{role, time, agent, model, summary}`` or
  assistant ``{role, time{created, completed}, parentID, modelID, providerID, mode, path{cwd,
  root}, cost, tokens{input, output, reasoning, cache{read, write}}, finish, error?,
  summary? (a compaction summary)}``;
- ``part/<messageID>/<partID>.json``: ``text``, ``reasoning``, ``tool{callID, tool,
  state{status, input, output | error, title, metadata, time}}``, ``step-start``,
  ``step-finish``, ``patch``, ``file``, ``agent``, ``subtask``, ``compaction``;
- ``project/<projectID>.json`` (``worktree``, ``vcs``) and ``session_diff/<sessionID>.json``.

Mapping: user messages → user (text parts; ``synthetic`` text, which opencode adds itself,
and file parts are kept in ``extra``); assistant messages → assistant (text parts, tool
parts as tool calls, each followed by a tool message with its output or error), with
``usage`` from ``tokens`` (opencode's ``input`` excludes cache; its ``output`` excludes
``reasoning``, so ``output_tokens`` is their sum); an assistant message flagged ``summary``
(compaction) → a system message. Every other part and member is kept in the message's
``extra``; the session's other members, the project and the session diff in
``metadata.extra``. A session with ``parentID`` (a sub-agent's task) names its parent in
``metadata.extra.parent_thread_id``. Message and part ids sort by creation time, so name order
is chronological. opencode records no git branch or commit (``step-start`` snapshots are its
own shadow repository), only that the project is a git work tree (``extra.project.vcs``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.blocks import message, rest
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_str,
    build_thread,
    clip_title,
    find_files,
    head,
    home,
    json_text,
    parse_time,
    read_json,
    session_thread_id,
)
from loomsync.importers.usage import usage

NAME = "opencode"

_USER_KEYS = ("id", "sessionID", "role", "time")
_ASSISTANT_KEYS = ("id", "sessionID", "role", "time", "tokens", "modelID", "providerID")


def storage_root(session_file: Path) -> Path:
    """``storage/`` of a ``storage/session/<projectID>/<sessionID>.json`` file."""
    return session_file.parent.parent.parent


def _objects(folder: Path, result: ImportResult) -> list[dict[str, Any]]:
    """The JSON objects of ``folder/*.json``, by name (= creation order); damaged ones are
    counted and reported by :func:`read_json`, other values counted as ``not_an_object``."""
    if not folder.is_dir():
        return []
    found: list[dict[str, Any]] = []
    for file in sorted(folder.glob("*.json")):
        value = read_json(file, result)
        if isinstance(value, dict):
            found.append(value)
        elif value is not None:
            result.skipped["not_an_object"] += 1
    return found


def _tool_messages(part: dict[str, Any], time: Any) -> tuple[ToolCall, Message]:
    state = as_dict(part.get("state"))
    call_id, name = as_str(part.get("callID")), as_str(part.get("tool"))
    output = state.get("output", state.get("error"))
    times = as_dict(state.get("time"))
    extra = rest(state, ("input", "output", "error"))
    extra.update(rest(part, ("callID", "tool", "state", "type", "sessionID", "messageID")))
    if "error" in state:
        extra["is_error"] = True
    result = message(
        "tool",
        json_text(output) if output is not None else "",
        created_at=parse_time(times.get("end")) or parse_time(times.get("start")) or time,
        tool_call_id=call_id,
        tool_name=name,
        extra=extra,
    )
    return ToolCall(id=call_id, tool_name=name, arguments_json=state.get("input")), result


def _turn(info: dict[str, Any], parts: list[dict[str, Any]]) -> list[Message]:
    """The messages of one opencode message and its parts."""
    role = info.get("role")
    time = parse_time(as_dict(info.get("time")).get("created"))
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    other_parts: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str) and not part.get("synthetic"):
            texts.append(part["text"])
        elif kind == "tool" and role == "assistant":
            call, answer = _tool_messages(part, time)
            calls.append(call)
            results.append(answer)
        else:
            other_parts.append(part)
    if role == "user":
        extra = rest(info, _USER_KEYS)
        if other_parts:
            extra["parts"] = other_parts
        return [
            message(
                "user", "\n".join(texts), created_at=time, id=as_str(info.get("id")), extra=extra
            )
        ]
    if role != "assistant":
        return []
    tokens = as_dict(info.get("tokens"))
    cache = as_dict(tokens.get("cache"))
    output, reasoning = tokens.get("output"), tokens.get("reasoning")
    both = output + reasoning if isinstance(output, int) and isinstance(reasoning, int) else output
    counted = usage(
        input_tokens=tokens.get("input"),
        output_tokens=both,
        cache_read_tokens=cache.get("read"),
        cache_write_tokens=cache.get("write"),
        reasoning_tokens=reasoning,
        model=info.get("modelID"),
        provider=info.get("providerID"),
    )
    extra = rest(info, _ASSISTANT_KEYS)
    if other_parts:
        extra["parts"] = other_parts
    summary = info.get("summary") is True
    answer = message(
        "system" if summary else "assistant",
        "\n".join(texts),
        created_at=time,
        id=as_str(info.get("id")),
        tool_calls=calls or None,
        usage=counted,
        extra=extra,
    )
    return [answer, *results]


def parse(path: Path) -> ImportResult:
    """Read the session whose ``session/<projectID>/<sessionID>.json`` is ``path`` (with its
    messages, parts, project and diff) into one thread. A damaged file is one warning and one
    skipped count; the session's other files still import."""
    result = ImportResult()
    session = read_json(path, result)
    if not isinstance(session, dict) or not as_str(session.get("id")):
        if session is not None:
            result.skipped["bad_record"] += 1
            result.warnings.append(f"{path}: not an opencode session (no id)")
        return result
    session_id = session["id"]
    root = storage_root(path)
    messages: list[Message] = []
    for info in _objects(root / "message" / session_id, result):
        parts = _objects(root / "part" / str(info.get("id")), result)
        messages.extend(_turn(info, parts))
    if not messages:
        result.warnings.append(f"{path}: no messages in this opencode session")
        return result
    project_id = as_str(session.get("projectID"))
    project = (
        read_json(root / "project" / f"{project_id}.json", ImportResult()) if project_id else None
    )
    diff = read_json(root / "session_diff" / f"{session_id}.json", ImportResult())
    extra: dict[str, Any] = {"session": rest(session, ("id", "title", "directory", "time"))}
    if isinstance(project, dict):
        extra["project"] = project
    if diff is not None:
        extra["session_diff"] = diff
    parent = as_str(session.get("parentID"))
    if parent:
        extra["parent_thread_id"] = str(session_thread_id(NAME, parent))
    times = as_dict(session.get("time"))
    last = next((m for m in reversed(messages) if getattr(m, "usage", None)), None)
    last_usage = as_dict(getattr(last, "usage", None))
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "version": as_str(session.get("version")),
            },
            title=clip_title(as_str(session.get("title")) or first_user),
            created_at=parse_time(times.get("created")),
            last_activity_at=parse_time(times.get("updated")),
            extra=extra,
            cwd=as_str(session.get("directory")),
            workspace_root=as_str(as_dict(project).get("worktree")),
            model=as_str(last_usage.get("model")),
            provider=as_str(last_usage.get("provider")),
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``ses_*.json`` file in ``storage/session/<projectID>/`` holding a session object."""
    if path.suffix != ".json" or not path.name.startswith("ses_"):
        return False
    if path.parent.parent.name != "session":
        return False
    data = head(path)
    return data.lstrip().startswith(b"{") and b'"projectID"' in data and b'"ses_' in data


def discover(path: Path) -> list[Path]:
    """The session files (``session/*/ses_*.json``) under ``path``, or the file itself."""
    return find_files(path, ["ses_*.json"], detect)


def unit_of(path: Path) -> Path | None:
    """The session file a changed file of the storage tree belongs to: a message
    (``message/<sessionID>/…``), a part (its ``sessionID`` member, read from it), a session
    diff or the session file itself; None for other files (project, migration) or when the
    session file is not found."""
    kind = path.parent.parent.name
    if kind == "session":
        return path
    if kind == "message":
        session_id, root = path.parent.name, path.parent.parent.parent
    elif kind == "part":
        session_id = as_str(as_dict(read_json(path, ImportResult())).get("sessionID")) or ""
        root = path.parent.parent.parent
    elif path.parent.name == "session_diff":
        session_id, root = path.stem, path.parent.parent
    else:
        return None
    if not session_id.startswith("ses_"):
        return None
    return next(iter(sorted((root / "session").glob(f"*/{session_id}.json"))), None)


def default_paths() -> list[Path]:
    """``$XDG_DATA_HOME/opencode/storage``, by default ``~/.local/share/opencode/storage`` on
    every OS (opencode takes its folders from ``xdg-basedir``, without a Windows branch)."""
    data = os.environ.get("XDG_DATA_HOME")
    base = Path(data).expanduser() if data else home() / ".local" / "share"
    return [base / "opencode" / "storage"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="opencode",
    what="session",
    expects="expected an opencode session object (ses_*.json) under storage/session/<project>/",
    order=80,
    suffixes=(".json",),
    unit_of=unit_of,
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "subagents"),
)
