"""Codex TUI session logs: what ``CODEX_TUI_RECORD_SESSION=1`` makes the Codex terminal UI
write (``$CODEX_HOME/log/session-*.jsonl``, or ``CODEX_TUI_SESSION_LOG_PATH``).

Not a conversation format but a recording of the terminal: one JSON object per line,
``{"ts", "dir": "meta" | "to_tui" | "from_tui", "kind", …}``. Most lines are redraws
(``app_event``) and streaming deltas; the conversation is rebuilt from:

- ``codex_event`` with ``msg.type`` ``session_configured``: a session starts (its
  ``session_id`` is the thread id; ``/new`` starts another one in the same log, so one file
  may hold several threads), with the model;
- ``key_event`` presses: what the person typed, up to Enter → a user message (Backspace
  edits it; a line starting with ``/`` is a slash command, not a message; keys pressed while
  a command waits for approval answer the approval, not the composer);
- ``agent_message`` → assistant messages; ``exec_command_begin`` / ``patch_apply_begin`` →
  tool calls (``shell``, ``apply_patch``) on the assistant message they follow, and their
  ``*_end`` → tool messages linked by ``call_id``. Reasoning, deltas, token counts and diffs
  are not content (the whole message or output is written once at its end).

``meta``/``session_start`` gives the working folder. Times are the lines' ``ts`` (UTC).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_str,
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

NAME = "codex-tui"

_DIRECTIONS = ("meta", "to_tui", "from_tui")
_CODE = re.compile(r"code: (Char\('((?:\\.|[^\\])+?)'\)|\w+)")
_KIND = re.compile(r"kind: (\w+)")
_MODIFIERS = re.compile(r"modifiers: KeyModifiers\(([^)]*)\)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}


@dataclass
class _Session:
    session_id: str | None
    model: str | None
    started: datetime | None
    messages: list[Message] = field(default_factory=list)
    open: Message | None = None  # the assistant message new tool calls attach to

    def add(self, message: Message) -> Message:
        self.messages.append(message)
        self.open = message if message.role == "assistant" else None
        return message

    def call(self, call_id: str, name: str, arguments: Any, time: datetime | None) -> None:
        if self.open is None:
            self.add(Message(role="assistant", content="", created_at=time))
        assert self.open is not None
        if self.open.tool_calls is None:
            self.open.tool_calls = []
        self.open.tool_calls.append(ToolCall(id=call_id, tool_name=name, arguments_json=arguments))


def _char(raw: str) -> str:
    """The character of Rust's ``Char('x')`` debug form (``'\\''``, ``'\\n'``, …)."""
    if raw.startswith("\\") and len(raw) == 2:
        return _ESCAPES.get(raw[1], raw[1])
    return raw


@dataclass
class _Composer:
    """What the person types into the TUI, rebuilt from key presses."""

    text: list[str] = field(default_factory=list)

    def key(self, event: str) -> str | None:
        """Apply one key event; the line submitted when it is an Enter press, else None."""
        kind = _KIND.search(event)
        if kind is not None and kind.group(1) == "Release":
            return None
        code = _CODE.search(event)
        if code is None:
            return None
        modifiers = _MODIFIERS.search(event)
        if modifiers is not None and (
            "CONTROL" in modifiers.group(1) or "ALT" in modifiers.group(1)
        ):
            return None
        if code.group(2) is not None:
            self.text.append(_char(code.group(2)))
        elif code.group(1) == "Backspace" and self.text:
            self.text.pop()
        elif code.group(1) == "Enter":
            line, self.text = "".join(self.text), []
            return line
        return None


def _output(msg: dict[str, Any]) -> str:
    out = [text for key in ("stdout", "stderr") if (text := as_str(msg.get(key)))]
    return "\n".join(out) or (as_str(msg.get("aggregated_output")) or "")


def parse(path: Path) -> ImportResult:
    """Read one TUI session log into one thread per session it records (module docstring).
    Damaged lines are skipped and counted; an unreadable file gives a warning."""
    result = ImportResult()
    records = read_jsonl(path, result)
    if records is None:
        return result
    cwd: str | None = None
    sessions: list[_Session] = []
    composer = _Composer()
    approving = False
    for record in records:
        kind, time = record.get("kind"), parse_time(record.get("ts"))
        if kind == "session_start":
            cwd = as_str(record.get("cwd")) or cwd
            continue
        if kind == "key_event" and isinstance(record.get("event"), str):
            if approving:
                continue
            line = composer.key(record["event"])
            if line is not None and line.strip() and not line.lstrip().startswith("/"):
                if not sessions:
                    sessions.append(_Session(None, None, time))
                sessions[-1].add(Message(role="user", content=line.strip(), created_at=time))
            continue
        if kind == "op" and as_dict(record.get("payload")).get("type") == "exec_approval":
            approving = False
            continue
        if kind != "codex_event":
            continue
        msg = as_dict(as_dict(record.get("payload")).get("msg"))
        event = msg.get("type")
        if event == "session_configured":
            sessions.append(_Session(as_str(msg.get("session_id")), as_str(msg.get("model")), time))
            continue
        if event == "exec_approval_request":
            approving = True
            continue
        if not sessions:
            sessions.append(_Session(None, None, time))
        session = sessions[-1]
        call_id = as_str(msg.get("call_id"))
        if event == "agent_message" and isinstance(msg.get("message"), str):
            session.add(Message(role="assistant", content=msg["message"], created_at=time))
        elif event == "exec_command_begin" and call_id:
            arguments = {"command": msg.get("command"), "cwd": msg.get("cwd")}
            session.call(call_id, "shell", arguments, time)
        elif event == "patch_apply_begin" and call_id:
            session.call(call_id, "apply_patch", {"changes": msg.get("changes")}, time)
        elif event in ("exec_command_end", "patch_apply_end") and call_id:
            name = "shell" if event == "exec_command_end" else "apply_patch"
            session.add(
                Message(
                    role="tool",
                    content=_output(msg),
                    tool_call_id=call_id,
                    tool_name=name,
                    created_at=time,
                )
            )
    for ordinal, session in enumerate(sessions):
        if not any(m.role in ("user", "assistant") for m in session.messages):
            continue
        if session.session_id:
            thread_id = session_thread_id(NAME, session.session_id)
        else:
            thread_id = name_thread_id(NAME, file_identity(path), str(ordinal))
        title = next((m.content for m in session.messages if m.role == "user"), None)
        result.threads.append(
            build_thread(
                thread_id,
                session.messages,
                source={"agent": "codex-tui", "file": path.name, "session_id": session.session_id},
                title=clip_title(title),
                created_at=session.started,
                workspace_root=cwd,
                cwd=cwd,
                model=session.model,
            )
        )
    if not result.threads:
        result.warnings.append(f"{path}: no Codex TUI session with messages in this log")
    return result


def detect(path: Path) -> bool:
    """A ``.jsonl`` file whose first lines are TUI log records (``ts``, ``dir``, ``kind``)."""
    if path.suffix != ".jsonl":
        return False
    return any(
        record.get("dir") in _DIRECTIONS and isinstance(record.get("kind"), str) and "ts" in record
        for record in first_objects(path, 3)
    )


def discover(path: Path) -> list[Path]:
    """TUI session logs under ``path`` (``*.jsonl`` that look like one), or the file."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``log`` in ``$CODEX_HOME`` (default ``~/.codex``), where the TUI writes its logs."""
    configured = os.environ.get("CODEX_HOME")
    root = Path(configured).expanduser() if configured else home() / ".codex"
    return [root / "log"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Codex TUI",
    what="session log",
    expects='expected JSON Lines of {"ts", "dir", "kind"} records, in a .jsonl file',
    order=70,
    suffixes=(".jsonl",),
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
