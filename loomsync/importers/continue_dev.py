"""Continue (continuedev/continue, VS Code and JetBrains) chat sessions:
``$CONTINUE_GLOBAL_DIR/sessions/<sessionId>.json`` (by default ``~/.continue/sessions``, the
same on Linux, macOS and Windows), listed in ``sessions/sessions.json``.

A session file is one JSON object ``{sessionId, title, workspaceDirectory, history: [item]}``
rewritten in place after every turn; an item is ``{message: {role, content, id?,
toolCalls?, toolCallId?, usage?}, contextItems, editorState?, promptLogs?, toolCallStates?,
…}``:

- ``user`` → user (text of a string or of ``text`` parts; images as ``[image]``);
  ``assistant`` → assistant, its ``toolCalls`` (OpenAI-style ``{id, function{name,
  arguments}}``) as tool calls; ``tool`` (``toolCallId``) → a tool message paired with its
  call; ``system`` / ``thinking`` → system messages;
- a tool call answered by no ``tool`` message but whose ``toolCallStates`` entry holds an
  ``output`` (Continue's agent mode) gets a tool message made from that output;
- ``message.usage`` (2025+ Continue: ``promptTokens`` counting cached tokens,
  ``completionTokens``, ``promptTokensDetails.cachedTokens`` / ``cacheWriteTokens``,
  ``completionTokensDetails.reasoningTokens``) → ``usage``; the 2024 files record none;
- everything else of an item (``contextItems``, ``editorState``, ``promptLogs`` with the full
  prompt and completion options, ``toolCallStates``) is kept in the message's ``extra``.

The files hold no timestamps per message: messages have none, and the thread's creation
time is the index's ``dateCreated`` (milliseconds written as a string). ``sessions.json`` may
list sessions whose files are gone; it is read only for that time. The model is taken from
``promptLogs[].completionOptions.model`` (the configured model's name, ``modelTitle``, kept
in ``extra``). No git data is recorded.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Role, ToolCall
from loomsync.importers.blocks import message, read_session, rest
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
    head,
    home,
    parse_time,
    read_json,
    session_thread_id,
    tool_arguments,
)
from loomsync.importers.usage import usage

NAME = "continue"
INDEX = "sessions.json"


def _usage(raw: Any, model: str | None) -> dict[str, Any] | None:
    counts = as_dict(raw)
    if not counts:
        return None
    prompt = counts.get("promptTokens")
    details = as_dict(counts.get("promptTokensDetails"))
    cached, written = details.get("cachedTokens"), details.get("cacheWriteTokens")
    if isinstance(prompt, int):
        for part in (cached, written):
            if isinstance(part, int) and 0 <= part <= prompt:
                prompt -= part
    return usage(
        input_tokens=prompt,
        output_tokens=counts.get("completionTokens"),
        cache_read_tokens=cached,
        cache_write_tokens=written,
        reasoning_tokens=as_dict(counts.get("completionTokensDetails")).get("reasoningTokens"),
        model=model,
    )


def _calls(raw: Any) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for call in as_list(raw):
        call = as_dict(call)
        function = as_dict(call.get("function"))
        calls.append(
            ToolCall(
                id=as_str(call.get("id")),
                tool_name=as_str(function.get("name")),
                arguments_json=tool_arguments(function.get("arguments")),
            )
        )
    return calls


def _model(item: dict[str, Any]) -> str | None:
    for log in as_list(item.get("promptLogs")):
        found = as_str(as_dict(as_dict(log).get("completionOptions")).get("model"))
        if found:
            return found
    return None


def _state_output(state: dict[str, Any]) -> str:
    """The text of a ``toolCallStates`` entry's ``output`` (context items with ``content``)."""
    texts = [as_dict(i).get("content") for i in as_list(state.get("output"))]
    return "\n".join(t for t in texts if isinstance(t, str))


def _messages(history: list[Any], result: ImportResult) -> tuple[list[Message], str | None]:
    messages: list[Message] = []
    answered: set[str] = set()
    model: str | None = None
    pending: list[tuple[ToolCall, dict[str, Any]]] = []
    for item in history:
        body = as_dict(as_dict(item).get("message"))
        role = body.get("role")
        if not isinstance(item, dict) or not isinstance(role, str):
            result.skipped["bad_record"] += 1
            continue
        extra = rest(item, ("message",))
        extra.update(rest(body, ("role", "content", "toolCalls", "toolCallId", "usage")))
        text = blocks_text(body.get("content"), image="[image]")
        if role != "tool":
            _answer_from_states(messages, pending, answered)
        if role == "assistant":
            model = _model(item) or model
            calls = _calls(body.get("toolCalls"))
            states = {
                as_str(as_dict(s).get("toolCallId")): as_dict(s)
                for s in as_list(item.get("toolCallStates"))
            }
            single = as_dict(item.get("toolCallState"))
            if single:
                states[as_str(single.get("toolCallId"))] = single
            pending.extend((call, states.get(call.id, {})) for call in calls)
            messages.append(
                message(
                    "assistant",
                    text,
                    tool_calls=calls or None,
                    usage=_usage(body.get("usage"), model),
                    extra=extra,
                )
            )
        elif role == "tool":
            call_id = as_str(body.get("toolCallId"))
            name = next((c.tool_name for c, _ in pending if c.id == call_id), None)
            answered.add(call_id or "")
            messages.append(
                message("tool", text, tool_call_id=call_id, tool_name=name, extra=extra)
            )
        else:
            kind: Role = "user" if role == "user" else "system"
            messages.append(
                message(kind, text, extra={"role": role, **extra} if kind != role else extra)
            )
    _answer_from_states(messages, pending, answered)
    return messages, model


def _answer_from_states(
    messages: list[Message], pending: list[tuple[ToolCall, dict[str, Any]]], answered: set[str]
) -> None:
    """Tool messages for calls no ``tool`` message answered but whose state holds output."""
    for call, state in pending:
        if call.id not in answered and "output" in state:
            answered.add(call.id or "")
            messages.append(
                message(
                    "tool",
                    _state_output(state),
                    tool_call_id=call.id,
                    tool_name=call.tool_name,
                    extra={"from": "toolCallStates", "status": state.get("status")},
                )
            )
    pending.clear()


def _index_entry(path: Path, session_id: str) -> dict[str, Any]:
    index = path.parent / INDEX
    if not index.is_file():
        return {}
    listed = read_json(index, ImportResult())
    return next(
        (as_dict(e) for e in as_list(listed) if as_dict(e).get("sessionId") == session_id), {}
    )


def parse(path: Path) -> ImportResult:
    """Read one Continue session file into one thread (id ``T-<sessionId>``). A damaged file
    gives a warning and a skipped count; a damaged history item is skipped and counted."""
    result = ImportResult()
    document = read_session(path, result, "history", "Continue")
    if document is None:
        return result
    messages, model = _messages(document["history"], result)
    if not messages:
        result.warnings.append(f"{path}: no messages in this Continue session")
        return result
    session_id = as_str(document.get("sessionId")) or path.stem
    listed = _index_entry(path, session_id)
    created = listed.get("dateCreated")
    if isinstance(created, str) and created.isdigit():
        created = int(created)
    workspace = as_str(document.get("workspaceDirectory")) or as_str(
        listed.get("workspaceDirectory")
    )
    if workspace and workspace.startswith("file://"):
        workspace = workspace.removeprefix("file://")
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    extra = rest(document, ("sessionId", "title", "workspaceDirectory", "history"))
    if listed:
        extra["index"] = listed
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={"agent": NAME, "file": path.name, "session_id": session_id},
            title=clip_title(as_str(document.get("title")) or first_user),
            created_at=parse_time(created),
            extra=extra,
            cwd=workspace,
            workspace_root=workspace,
            model=model,
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``.json`` file (not the index) that starts like a Continue session object: a
    ``history`` list whose items carry ``contextItems`` (Continue writes ``history`` first
    and ``sessionId`` last, so the id may be past the bytes looked at)."""
    if path.suffix != ".json" or path.name == INDEX:
        return False
    data = head(path)
    return (
        data.lstrip().startswith(b"{")
        and b'"history"' in data
        and (b'"contextItems"' in data or b'"sessionId"' in data)
        and b'"message"' in data
    )


def discover(path: Path) -> list[Path]:
    """Continue session files under ``path``, or the file itself."""
    return find_files(path, ["*.json"], detect)


def unit_of(path: Path) -> Path | None:
    """A session file (``<sessionId>.json``) is its own unit; the index (``sessions.json``)
    and any other file belong to no single session (None)."""
    return path if path.suffix == ".json" and path.name != INDEX else None


def default_paths() -> list[Path]:
    """``$CONTINUE_GLOBAL_DIR/sessions``, by default ``~/.continue/sessions`` on every OS."""
    configured = os.environ.get("CONTINUE_GLOBAL_DIR")
    root = Path(configured).expanduser() if configured else home() / ".continue"
    return [root / "sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Continue",
    what="session",
    expects="expected a JSON object with sessionId and a history list, in a .json file",
    order=90,
    suffixes=(".json",),
    unit_of=unit_of,
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage"),
)
