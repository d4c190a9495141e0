"""Roo Code, Kilo Code and Cline (VS Code extension) task folders:
``<editor user dir>/globalStorage/<extension id>/tasks/<taskId>/``.

The three extensions share this layout (Roo Code and Kilo Code are forks of Cline); which
agent wrote a task is told by the extension id in its path and kept in
``metadata.extra.source.extension``:

- ``saoudrizwan.claude-dev`` → ``cline`` (Cline; ``taskId`` is a millisecond time);
- ``rooveterinaryinc.roo-cline`` → ``roo-code`` (Roo Code; ``taskId`` is a UUID);
- ``kilocode.kilo-code`` → ``kilo-code`` (Kilo Code; ``taskId`` is a UUID).

Editor user dirs: VS Code (``Code``, ``Code - Insiders``), Cursor, VSCodium and Windsurf under
``$XDG_CONFIG_HOME`` (default ``~/.config``) on Linux plus ``~/.vscode-server/data/User``
(remote), and ``~/Library/Application Support`` on macOS (:func:`default_paths`). (The Cline
CLI / SDK writes another format: :mod:`loomsync.importers.cline_sdk`.)

Files of a task, each one JSON document rewritten in place as the task goes:

- ``api_conversation_history.json`` — what was sent to the model, Anthropic-style
  ``[{role, content: string | blocks, ts? (ms), isSummary?}]``: the file ``parse`` is given
  (the unit; the others map to it, :func:`unit_of`);
- ``ui_messages.json`` — the UI event list ``[{ts, type: say | ask, say | ask, text, …}]``;
  ``say: api_req_started`` holds a JSON string with ``tokensIn``, ``tokensOut``,
  ``cacheReads``, ``cacheWrites``, ``cost``, ``apiProtocol`` (the only token counts);
- ``task_metadata.json`` (files in context) and, in newer Roo, ``history_item.json`` (the
  task's entry in the history index: workspace, ``parentTaskId`` / ``rootTaskId``).

Mapping:

- user entries → user messages; their ``<environment_details>`` blocks (appended by the
  extension to every turn) are moved to the message's ``extra.environment_details``;
- assistant entries → assistant messages (text; ``reasoning`` / ``thinking`` blocks in
  ``extra.blocks``); an entry with ``isSummary`` (a context condensation) → a system message;
- tool calls: native ``tool_use`` / ``tool_result`` blocks are paired by id; the XML tool
  calls of 2025 Roo/Cline (``<read_file>…</read_file>`` inside the assistant text) become tool
  calls (id ``xml-<entry index>-<n>``, ``arguments_json`` the top-level parameters) answered by
  the next user entry that opens with ``[read_file for '…'] Result:``, which becomes the tool
  message (any further text of that entry, a user's feedback, stays a user message);
- usage: each ``api_req_started`` is given to the first assistant message written after it
  (Roo's ``tokensIn`` excludes cache reads/writes under the Anthropic protocol and includes
  them under the OpenAI one, where they are subtracted); the model is the one named in the
  environment details (``<model>…</model>``), as no UI event records it;
- ``ask: resume_task`` events → ``metadata.extra.resumes`` (reopened task), ``say:
  condense_context`` → ``metadata.extra.compactions``; ``parentTaskId`` (a subtask started
  with ``new_task``) → ``metadata.extra.parent_thread_id``; the UI events, task metadata and
  history item are kept whole under ``metadata.extra``.

The working folder is taken from the environment details (``# Current Workspace Directory
(…)``) or the history item; the files record no git data. Cline's legacy history has no
``ts`` on its entries, so its messages carry no time.
"""

from __future__ import annotations

import os
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.model import Message, Role, ToolCall
from loomsync.importers.blocks import message, rest, siblings_unit, tool_result_text
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
    parse_time,
    read_json,
    session_thread_id,
)
from loomsync.importers.usage import usage

NAME = "roo-code"
UNIT = "api_conversation_history.json"
SIBLINGS = ("ui_messages.json", "task_metadata.json", "history_item.json")

#: Extension id → agent name.
EXTENSIONS = {
    "saoudrizwan.claude-dev": "cline",
    "rooveterinaryinc.roo-cline": "roo-code",
    "kilocode.kilo-code": "kilo-code",
}
_EDITORS = ("Code", "Code - Insiders", "Cursor", "VSCodium", "Windsurf")

_TOOLS = (
    "read_file|write_to_file|apply_diff|insert_content|search_and_replace|search_files|"
    "list_files|list_code_definition_names|execute_command|browser_action|use_mcp_tool|"
    "access_mcp_resource|ask_followup_question|attempt_completion|switch_mode|new_task|"
    "fetch_instructions|codebase_search|update_todo_list|replace_in_file|plan_mode_respond|"
    "act_mode_respond|load_mcp_documentation|new_rule|condense|report_bug|web_fetch|"
    "run_slash_command|generate_image|edit_file|search_replace|apply_patch"
)
_XML_CALL = re.compile(rf"<({_TOOLS})>(.*?)</\1>", re.DOTALL)
_PARAM = re.compile(r"<([A-Za-z_]+)>(.*?)</\1>", re.DOTALL)
_RESULT = re.compile(r"^\s*\[([A-Za-z_]+)(?: for [^\n]*?)?\] Result:")
_ENV = "<environment_details>"
_USER_TURNS = ("New instructions for task continuation", "<user_message>", "[TASK RESUMPTION]")
_TASK_TAGS = re.compile(r"</?task>")
_MODEL = re.compile(r"<model>([^<\n]+)</model>")
_WORKSPACE = re.compile(r"# Current (?:Workspace|Working) Directory \(([^)\n]+)\)")


def _is_user_turn(text: str) -> bool:
    """A block the user wrote after a tool result: new instructions for a resumed task."""
    start = text.lstrip()
    return start.startswith(_USER_TURNS)


def _xml_calls(text: str, index: int) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for number, match in enumerate(_XML_CALL.finditer(text)):
        params = {m.group(1): m.group(2).strip("\n") for m in _PARAM.finditer(match.group(2))}
        calls.append(
            ToolCall(id=f"xml-{index}-{number}", tool_name=match.group(1), arguments_json=params)
        )
    return calls


def _texts(content: Any) -> list[Any]:
    return [content] if isinstance(content, str) else as_list(content)


def _text_of(block: Any) -> str | None:
    if isinstance(block, str):
        return block
    body = as_dict(block)
    return (
        body["text"] if body.get("type") == "text" and isinstance(body.get("text"), str) else None
    )


class _Task:
    """Builds the messages of one task from its API history, in order."""

    def __init__(self, history: list[Any], result: ImportResult) -> None:
        self.messages: list[Message] = []
        self.names: dict[str, str] = {}
        self.pending: list[ToolCall] = []  # XML calls waiting for their "[tool] Result:"
        self.model: str | None = None
        self.model_at: dict[int, str | None] = {}  # message index → model named before it
        self.workspace: str | None = None
        for index, entry in enumerate(history):
            if not isinstance(entry, dict) or entry.get("role") not in ("user", "assistant"):
                result.skipped["bad_record"] += 1
                continue
            time = parse_time(entry.get("ts"))
            extra = rest(entry, ("role", "content", "ts"))
            if entry["role"] == "assistant":
                self._assistant(entry, index, time, extra)
            else:
                self._user(entry.get("content"), time, extra)

    def _assistant(
        self, entry: dict[str, Any], index: int, time: datetime | None, extra: dict[str, Any]
    ) -> None:
        texts: list[str] = []
        calls: list[ToolCall] = []
        others: list[Any] = []
        for block in _texts(entry.get("content")):
            text, body = _text_of(block), as_dict(block)
            if text is not None:
                texts.append(text)
            elif body.get("type") == "tool_use":
                call_id, name = as_str(body.get("id")), as_str(body.get("name"))
                self.names[call_id or ""] = name or ""
                calls.append(ToolCall(id=call_id, tool_name=name, arguments_json=body.get("input")))
            else:
                others.append(block)
        content = "\n".join(texts)
        if not calls:
            calls = _xml_calls(content, index)
            self.pending = list(calls)
        if others:
            extra["blocks"] = others
        role: Role = "system" if entry.get("isSummary") is True else "assistant"
        self.model_at[len(self.messages)] = self.model
        self.messages.append(
            message(role, content, created_at=time, tool_calls=calls or None, extra=extra)
        )

    def _user(self, content: Any, time: datetime | None, extra: dict[str, Any]) -> None:
        env: list[str] = []
        kept: list[str] = []
        results: list[dict[str, Any]] = []
        for block in _texts(content):
            body = as_dict(block)
            text = _text_of(block)
            if body.get("type") == "tool_result":
                results.append(body)
            elif text is not None and text.lstrip().startswith(_ENV):
                env.append(text)
            elif text is not None:
                kept.append(text)
            elif body.get("type") == "image":
                kept.append("[image]")
        for text in env:
            self.model = (m.group(1).strip() if (m := _MODEL.search(text)) else None) or self.model
            self.workspace = (
                w.group(1) if (w := _WORKSPACE.search(text)) else None
            ) or self.workspace
        own: dict[str, Any] = {**extra, "environment_details": env} if env else extra
        for index, body in enumerate(results):
            call_id = as_str(body.get("tool_use_id"))
            more = rest(body, ("type", "tool_use_id", "content"))
            last = index == len(results) - 1 and not kept
            self.messages.append(
                message(
                    "tool",
                    tool_result_text(body.get("content")),
                    created_at=time,
                    tool_call_id=call_id,
                    tool_name=self.names.get(call_id or "") or None,
                    extra={**own, **more} if last else more,
                )
            )
        header = _RESULT.match(kept[0]) if kept else None
        if header:
            name = header.group(1)
            call = next((c for c in self.pending if c.tool_name == name), None)
            if call is not None:
                self.pending.remove(call)
            split = next((i for i, t in enumerate(kept) if i and _is_user_turn(t)), len(kept))
            self.messages.append(
                message(
                    "tool",
                    "\n".join(kept[:split]),
                    created_at=time,
                    tool_call_id=call.id if call is not None else None,
                    tool_name=name,
                    extra=own if split == len(kept) else None,
                )
            )
            kept = kept[split:]
        self.pending = []
        if kept or not (results or header):
            self.messages.append(message("user", "\n".join(kept), created_at=time, extra=own))


def _events(ui: list[Any]) -> tuple[list[tuple[int, dict[str, Any]]], list[Any], list[Any]]:
    """``(requests, resumes, compactions)`` from the UI events: each ``api_req_started``
    ``(ts, counts)``, each ``resume_task`` ask's ts, each ``condense_context`` event."""
    requests: list[tuple[int, dict[str, Any]]] = []
    resumes: list[Any] = []
    compactions: list[Any] = []
    for event in ui:
        event = as_dict(event)
        ts = event.get("ts")
        if event.get("say") == "api_req_started" and isinstance(ts, int):
            try:
                counts = jsontext.loads(event.get("text") or "")
            except (ValueError, RecursionError, TypeError):
                continue
            if isinstance(counts, dict):
                requests.append((ts, counts))
        elif event.get("ask") == "resume_task" or event.get("ask") == "resume_completed_task":
            resumes.append(ts)
        elif event.get("say") == "condense_context":
            compactions.append({"ts": ts, **as_dict(event.get("contextCondense"))})
    return requests, resumes, compactions


def _request_usage(counts: dict[str, Any], model: str | None) -> dict[str, Any] | None:
    tokens_in = counts.get("tokensIn")
    read, write = counts.get("cacheReads"), counts.get("cacheWrites")
    if counts.get("apiProtocol") == "openai" and isinstance(tokens_in, int):
        cached = sum(n for n in (read, write) if isinstance(n, int))
        tokens_in = tokens_in - cached if tokens_in >= cached else tokens_in
    return usage(
        input_tokens=tokens_in,
        output_tokens=counts.get("tokensOut"),
        cache_read_tokens=read,
        cache_write_tokens=write,
        model=model,
    )


def _with_usage(task: _Task, requests: list[tuple[int, dict[str, Any]]]) -> list[Message]:
    """Each request's usage on the first assistant message written after it (and before the
    next request), with the model the environment details named before that message."""
    out: list[Message] = []
    position = 0
    for index, item in enumerate(task.messages):
        model = task.model_at.get(index)
        if item.role == "assistant" and item.created_at is not None:
            stamp = int(item.created_at.timestamp() * 1000)
            latest: dict[str, Any] | None = None
            while position < len(requests) and requests[position][0] <= stamp:
                latest = requests[position][1]
                position += 1
            counted = _request_usage(latest, model) if latest is not None else None
            if counted:
                more = {k: v for k, v in latest.items() if k not in ("request",)} if latest else {}
                extra = {**as_dict(getattr(item, "extra", None)), "api_request": more}
                item = message(
                    item.role,
                    item.content,
                    created_at=item.created_at,
                    tool_calls=item.tool_calls,
                    usage=counted,
                    extra=extra,
                )
        out.append(item)
    return out


def _extension(path: Path) -> str | None:
    return next((EXTENSIONS[p] for p in path.parts if p in EXTENSIONS), None)


def parse(path: Path) -> ImportResult:
    """Read the task folder whose ``api_conversation_history.json`` is ``path`` (with its UI
    events, task metadata and history item) into one thread; id ``T-<taskId>`` for a UUID
    task id, else a UUIDv5 over ``roo-code`` and the folder's name. A damaged sibling file
    loses only what it held (one warning, one skipped count)."""
    result = ImportResult()
    history = read_json(path, result)
    if history is None:
        return result
    if not isinstance(history, list):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not a task's API history (not a JSON array)")
        return result
    task = _Task(history, result)
    if not task.messages:
        result.warnings.append(f"{path}: no messages in this task")
        return result
    folder = path.parent
    ui = (
        read_json(folder / "ui_messages.json", result)
        if (folder / "ui_messages.json").is_file()
        else None
    )
    requests, resumes, compactions = _events(as_list(ui))
    messages = _with_usage(task, requests)
    extra: dict[str, Any] = {}
    for key, value in (("resumes", resumes), ("compactions", compactions)):
        if value:
            extra[key] = value
    if ui is not None:
        extra["ui_messages"] = ui
    item: dict[str, Any] = {}
    for name in ("task_metadata.json", "history_item.json"):
        if (folder / name).is_file():
            value = read_json(folder / name, result)
            if value is not None:
                extra[name.removesuffix(".json")] = value
                item = as_dict(value) if name == "history_item.json" else item
    parent = as_str(item.get("parentTaskId"))
    if parent:
        extra["parent_thread_id"] = str(session_thread_id(NAME, parent))
    task_id = as_str(item.get("id")) or folder.name
    workspace = as_str(item.get("workspace")) or task.workspace
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            session_thread_id(NAME, task_id),
            messages,
            source={
                "agent": NAME,
                "extension": _extension(path),
                "file": path.name,
                "task_id": task_id,
            },
            title=clip_title(as_str(item.get("task")) or _TASK_TAGS.sub("", first_user or "")),
            extra=extra,
            cwd=workspace,
            workspace_root=workspace,
            model=task.model,
        )
    )
    return result


def detect(path: Path) -> bool:
    """An ``api_conversation_history.json`` holding a JSON array (its name is the mark: the
    generic ``.json`` of other tools is left alone)."""
    return path.name == UNIT and head(path, 256).lstrip().startswith(b"[")


def discover(path: Path) -> list[Path]:
    """The task folders' ``api_conversation_history.json`` files under ``path``, or the file."""
    return find_files(path, [UNIT], detect)


def unit_of(path: Path) -> Path | None:
    """``api_conversation_history.json`` of the task folder of a changed task file
    (``ui_messages.json``, ``task_metadata.json``, ``history_item.json`` or itself)."""
    return siblings_unit(path, UNIT, SIBLINGS)


def default_paths() -> list[Path]:
    """``globalStorage/<extension id>/tasks`` of Cline, Roo Code and Kilo Code in the user
    dirs of VS Code, VS Code Insiders, Cursor, VSCodium and Windsurf: under
    ``~/Library/Application Support`` on macOS; under ``$XDG_CONFIG_HOME`` (default
    ``~/.config``) and ``~/.vscode-server/data/User`` elsewhere."""
    if sys.platform == "darwin":
        base = home() / "Library" / "Application Support"
        users = [base / editor / "User" for editor in _EDITORS]
    else:
        config = os.environ.get("XDG_CONFIG_HOME")
        base = Path(config).expanduser() if config else home() / ".config"
        users = [base / editor / "User" for editor in _EDITORS]
        users.append(home() / ".vscode-server" / "data" / "User")
    return [user / "globalStorage" / ext / "tasks" for user in users for ext in EXTENSIONS]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Roo Code / Kilo Code / Cline",
    what="task",
    expects="expected a task's api_conversation_history.json (a JSON array of messages)",
    order=86,
    suffixes=(".json",),
    unit_of=unit_of,
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "subagents"),
)
