"""GitHub Copilot Chat in VS Code (and its forks): persisted chat sessions.

Where: ``<User>/workspaceStorage/<workspace hash>/chatSessions/<session id>.json`` (a window
with a folder open) and ``<User>/globalStorage/emptyWindowChatSessions/<session id>.json``
(no folder), with the edit state in
``<User>/workspaceStorage/<hash>/chatEditingSessions/<session id>/state.json``. ``<User>`` is
VS Code's user folder (``~/.config/Code/User`` on Linux, ``~/Library/Application
Support/Code/User`` on macOS, ``%APPDATA%\\Code\\User`` on Windows; likewise ``Code - Insiders``,
``VSCodium``, ``Cursor``; ``~/.vscode-server/data/User`` over SSH). VS Code rewrites the whole
file as the chat goes on, so ``watch`` re-reads it on change (``live="rewrite"``).

The file is VS Code's ``ISerializableChatData`` (version 3): ``{sessionId, creationDate,
lastMessageDate, customTitle?, requests: [...]}``. Each request becomes, in order:

- a user message (``message.text``, at ``timestamp``; the request's other members, such as
  ``variableData``, ``agent.id``, ``contentReferences``, under the message's ``extra``);
- when ``result.metadata.toolCallRounds`` is recorded (agent mode), one assistant message per
  round (its ``response`` text and ``toolCalls``), each followed by a tool message per call
  whose text is pulled out of ``result.metadata.toolCallResults[<call id>]`` (a rendered
  prompt tree); otherwise one assistant message made of the ``response`` Markdown parts, its
  ``toolInvocationSerialized`` parts as tool calls answered by their ``pastTenseMessage``;
- ``modelId`` (``copilot/gpt-4.1``, ``generic-copilot/litellm/anthropic/claude-haiku-4.5``)
  gives the provider (before the first ``/``) and model (after it).

These versions record no token counts. The edit state (``chatEditingSessions``) is kept in
``metadata.extra.editing_state``. Learned from the real files in
``../shared/data/transcripts/copilot-chat-vscode``. Newer VS Code builds append to
``chatSessions/<id>.jsonl`` instead: a mutation log replayed by
:mod:`loomsync.importers.vscode_log` into the same object (no sample file: its rule is VS
Code's own source, and the tests build logs from the real ``.json`` sessions).
"""

from __future__ import annotations

import os
import sys
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
    head,
    home,
    json_text,
    name_thread_id,
    parse_time,
    read_jsonl,
    session_thread_id,
    tool_arguments,
)
from loomsync.importers.parts import message, read_document, read_sidecar, without
from loomsync.importers.vscode_log import looks_like_a_log, replay

NAME = "copilot-chat"
_FOLDERS = ("chatSessions", "emptyWindowChatSessions")
#: The user folders of VS Code and the forks that persist Copilot Chat sessions the same way.
PRODUCTS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")


def _markdown(part: dict[str, Any]) -> str | None:
    """The text of a Markdown response part (``{value}`` without ``kind``, or ``markdownContent``)."""
    if "kind" not in part and isinstance(part.get("value"), str):
        return str(part["value"])
    if part.get("kind") == "markdownContent":
        return as_str(as_dict(part.get("content")).get("value"))
    return None


def _value(value: Any) -> str:
    """A ``MarkdownString`` (``{value}``) or plain string as text."""
    return as_str(as_dict(value).get("value")) or (value if isinstance(value, str) else "")


def _model(request: dict[str, Any]) -> tuple[str | None, str | None]:
    model_id = as_str(request.get("modelId"))
    if not model_id:
        return None, None
    provider, _, model = model_id.partition("/")
    return (provider, model) if model else (None, provider)


def _tree_text(value: Any) -> str:
    """The text of a rendered prompt tree (``{node: {children: [{text, lineBreakBefore}]}}``,
    VS Code's prompt-tsx serialisation): its text nodes in order, with a line break before a
    node marked ``lineBreakBefore`` unless the text already ends with one. The tree's other
    layout (priorities, element boundaries) is not rendered, so the text can differ in
    whitespace from what the model was sent."""
    out: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            text = item.get("text")
            if isinstance(text, str):
                newline = item.get("lineBreakBefore") and out and not out[-1].endswith("\n")
                out.append(("\n" if newline else "") + text)
            stack.extend(reversed([v for k, v in item.items() if k != "text"]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
    return "".join(out)


def _rounds(request: dict[str, Any], time: Any, model: str | None) -> list[Message]:
    metadata = as_dict(as_dict(request.get("result")).get("metadata"))
    results = as_dict(metadata.get("toolCallResults"))
    out: list[Message] = []
    for round_ in as_list(metadata.get("toolCallRounds")):
        round_ = as_dict(round_)
        calls = [as_dict(c) for c in as_list(round_.get("toolCalls"))]
        out.append(
            message(
                "assistant",
                (as_str(round_.get("response")) or "").strip(),
                created_at=time,
                id=as_str(round_.get("id")),
                tool_calls=[
                    ToolCall(
                        id=as_str(c.get("id")),
                        tool_name=as_str(c.get("name")),
                        arguments_json=tool_arguments(c.get("arguments")),
                    )
                    for c in calls
                ],
                extra={"model": model, **without(round_, "response", "toolCalls", "id")},
            )
        )
        for call in calls:
            call_id = as_str(call.get("id"))
            raw = results.get(call_id or "")
            out.append(
                message(
                    "tool",
                    _tree_text(raw) if raw is not None else "",
                    created_at=time,
                    tool_call_id=call_id,
                    tool_name=as_str(call.get("name")),
                )
            )
    return out


def _parts(request: dict[str, Any], time: Any, model: str | None) -> list[Message]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    answers: list[Message] = []
    for part in as_list(request.get("response")):
        part = as_dict(part)
        if (text := _markdown(part)) is not None:
            texts.append(text)
        elif part.get("kind") == "toolInvocationSerialized":
            call_id, tool = as_str(part.get("toolCallId")), as_str(part.get("toolId"))
            calls.append(
                ToolCall(
                    id=call_id,
                    tool_name=tool,
                    arguments_json={"invocation": _value(part.get("invocationMessage"))},
                )
            )
            details = part.get("resultDetails")
            answer = _value(part.get("pastTenseMessage"))
            if details is not None:
                answer = f"{answer}\n{json_text(details)}" if answer else json_text(details)
            answers.append(
                message("tool", answer, created_at=time, tool_call_id=call_id, tool_name=tool)
            )
    text = "".join(texts).strip()
    if not text and not calls:
        return []
    reply = message("assistant", text, created_at=time, tool_calls=calls, extra={"model": model})
    return [reply, *answers]


def _messages(
    requests: list[Any], result: ImportResult
) -> tuple[list[Message], list[tuple[str | None, str]]]:
    """Messages of the requests, and ``(provider, model)`` of each request that names one."""
    messages: list[Message] = []
    models: list[tuple[str | None, str]] = []
    for request in requests:
        if not isinstance(request, dict) or not isinstance(request.get("message"), dict):
            result.skipped["bad_record"] += 1
            continue
        time = parse_time(request.get("timestamp"))
        provider, model = _model(request)
        if model:
            models.append((provider, model))
        text = as_str(request["message"].get("text")) or ""
        kept = without(request, "message", "response", "timestamp")
        metadata = as_dict(as_dict(request.get("result")).get("metadata"))
        if metadata:  # the rounds and results become messages; keep the rest
            kept["result"] = {
                **without(as_dict(request.get("result")), "metadata"),
                "metadata": without(metadata, "toolCallRounds", "toolCallResults"),
            }
        messages.append(
            message("user", text, created_at=time, id=as_str(request.get("requestId")), extra=kept)
        )
        if metadata.get("toolCallRounds"):
            messages.extend(_rounds(request, time, model))
        else:
            messages.extend(_parts(request, time, model))
    return messages, models


def _editing_state(path: Path, session_id: str) -> Any:
    """The ``chatEditingSessions/<id>/state.json`` of a session: beside its ``chatSessions``
    folder, or (an empty-window session) in any workspace folder of the same user folder."""
    folder = path.parent
    near = folder.parent / "chatEditingSessions" / session_id / "state.json"
    if near.is_file():
        return read_sidecar(near)
    if folder.name == "emptyWindowChatSessions":
        user = folder.parent.parent
        for state in sorted(
            user.glob(f"workspaceStorage/*/chatEditingSessions/{session_id}/state.json")
        ):
            return read_sidecar(state)
    return None


def _load(path: Path, result: ImportResult) -> dict[str, Any] | None:
    """The session object of a ``.json`` file, or of a ``.jsonl`` mutation log replayed
    (:mod:`loomsync.importers.vscode_log`); None (with a warning) when it is neither."""
    if path.suffix != ".jsonl":
        return read_document(path, result, "requests", "a Copilot Chat session")
    entries = read_jsonl(path, result)
    if entries is None:
        return None
    document = replay(entries, result)
    if not isinstance(document, dict) or not isinstance(document.get("requests"), list):
        result.warnings.append(f"{path}: not a Copilot Chat session log (no requests list)")
        return None
    return document


def parse(path: Path) -> ImportResult:
    """Read one chat session file into one thread (``T-<sessionId>``); the edit state given
    directly reads its session. A damaged file gives a warning and a skipped count."""
    result = ImportResult()
    path = unit_of(path) or path
    document = _load(path, result)
    if document is None:
        return result
    messages, models = _messages(document["requests"], result)
    if not messages:
        result.warnings.append(f"{path}: no requests in this chat session")
        return result
    session_id = as_str(document.get("sessionId")) or path.stem
    thread_id = (
        session_thread_id(NAME, session_id) if session_id else name_thread_id(NAME, path.name)
    )
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    extra: dict[str, Any] = {"session": without(document, "requests")}
    if (state := _editing_state(path, session_id)) is not None:
        extra["editing_state"] = state
    result.threads.append(
        build_thread(
            thread_id,
            messages,
            source={
                "agent": NAME,
                "file": path.name,
                "session_id": session_id,
                "location": path.parent.name,
                "workspace_storage": path.parent.parent.name
                if path.parent.name == "chatSessions"
                else None,
            },
            title=clip_title(as_str(document.get("customTitle")) or first_user),
            created_at=parse_time(document.get("creationDate")),
            last_activity_at=parse_time(document.get("lastMessageDate")),
            extra=extra,
            provider=models[-1][0] if models else None,
            model=models[-1][1] if models else None,
        )
    )
    return result


def unit_of(path: Path) -> Path | None:
    """The session file for ``path``: itself for a ``chatSessions/*.json`` or
    ``emptyWindowChatSessions/*.json``; for ``chatEditingSessions/<id>/state.json`` the
    session it belongs to (in the same workspace folder, else the user folder's empty-window
    sessions); None for any other file."""
    if path.parent.name in _FOLDERS and path.suffix in (".json", ".jsonl"):
        return path
    if path.name == "state.json" and path.parent.parent.name == "chatEditingSessions":
        session_id = path.parent.name
        workspace = path.parent.parent.parent
        empty = workspace.parent.parent / "globalStorage" / "emptyWindowChatSessions"
        for folder in (workspace / "chatSessions", empty):
            for suffix in (".json", ".jsonl"):
                if (candidate := folder / f"{session_id}{suffix}").is_file():
                    return candidate
    return None


def detect(path: Path) -> bool:
    """A ``.json`` file that starts like a VS Code chat session (``requests`` and
    ``requesterUsername``/``responderUsername``), a ``.jsonl`` mutation log whose initial
    object is one, or the edit state of either."""
    unit = unit_of(path) if path.name == "state.json" else path
    if unit is None or unit.suffix not in (".json", ".jsonl"):
        return False
    data = head(unit)
    if unit.suffix == ".jsonl":
        return looks_like_a_log(data)
    return (
        data.lstrip().startswith(b"{")
        and b'"requests"' in data
        and (b'"requesterUsername"' in data or b'"responderUsername"' in data)
    )


def discover(path: Path) -> list[Path]:
    """Chat session files under ``path`` (edit states are read with their session)."""
    if path.is_file():
        return [unit_of(path) or path]
    return find_files(path, ["*.json", "*.jsonl"], lambda p: p == unit_of(p) and detect(p))


def user_folders() -> list[Path]:
    """VS Code's user folder for each product of :data:`PRODUCTS` on this OS (``APPDATA`` on
    Windows, ``~/Library/Application Support`` on macOS, ``$XDG_CONFIG_HOME`` or ``~/.config``
    elsewhere), plus the VS Code Server's ``~/.vscode-server/data/User``."""
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or home() / ".config")
    folders = [base / product / "User" for product in PRODUCTS]
    return [*folders, home() / ".vscode-server" / "data" / "User"]


def default_paths() -> list[Path]:
    """``workspaceStorage`` and ``globalStorage/emptyWindowChatSessions`` of every user
    folder of :func:`user_folders`."""
    paths: list[Path] = []
    for user in user_folders():
        paths += [user / "workspaceStorage", user / "globalStorage" / "emptyWindowChatSessions"]
    return paths


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="GitHub Copilot Chat",
    what="chat session",
    expects="expected a VS Code chat session: a JSON object with requests and requesterUsername",
    order=45,
    suffixes=(".json", ".jsonl"),
    unit_of=unit_of,
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
