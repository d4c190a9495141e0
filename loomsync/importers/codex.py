"""OpenAI Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``.

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``turn_context``, ``response_item``, ``event_msg`` and ``compacted``. The conversation is
taken from the ``response_item`` lines (what went to and came back from the model):

- ``message`` (user / assistant) → user / assistant messages. Developer messages and the
  harness preambles inside user messages (``# AGENTS.md instructions``,
  ``<environment_context>``, ``<permissions instructions>``, …) are left out.
- ``function_call`` / ``custom_tool_call`` (any ``*_call`` with a ``call_id``) → tool calls
  on the assistant message they follow (or a new, empty assistant message);
  ``*_call_output`` → tool messages linked by ``call_id``.
- ``reasoning`` (encrypted content and summaries), ``web_search_call``, ``ghost_snapshot``
  and ``compacted`` (a summary of earlier items) are not content.

The same text is written twice, as a response item and as an ``event_msg``
(``user_message`` / ``agent_message``); events are only used for a role when the file holds
no response-item message of that role (trimmed or event-only files), so each message appears
once. ``event_msg`` ``token_count`` events give each model call's ``last_token_usage``
(``total_token_usage`` is a running total and is not stored), added to the ``usage``
(:mod:`loomsync.importers.usage`) of the assistant message of that turn. ``session_meta`` gives the id, cwd, git and CLI version; ``turn_context`` the model.
"""

from __future__ import annotations

import os
import re
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Thread, ToolCall
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
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
    tool_arguments,
)
from loomsync.importers.usage import COUNTS, note, usage
from loomsync.importers.usage import of as usage_of

NAME = "codex"

_FILE_ID = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$", re.IGNORECASE
)
_TAGGED = re.compile(
    r"^<([A-Za-z_ -]*(?:instructions|context|mode|INSTRUCTIONS))>.*</\1>$", re.DOTALL
)
_REQUEST = "## My request for Codex:"
# Tuples, not sets: membership of an untrusted (possibly unhashable) value must not raise.
_LINE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
_LEGACY_ITEMS = (
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "local_shell_call_output",
    "web_search_call",
)


def is_preamble(text: str) -> bool:
    """True for text the harness adds to user messages, which is not the user's: AGENTS.md
    instructions, or a whole ``<…instructions>``, ``<…context>`` or ``<…mode>`` block such as
    ``<environment_context>`` (``<user_shell_command>`` and the like are kept)."""
    stripped = text.strip()
    return stripped.startswith("# AGENTS.md instructions") or bool(_TAGGED.match(stripped))


def _user_text(payload: dict[str, Any]) -> str | None:
    """The user's own text of a response-item message, or None if it is all preamble."""
    parts = as_list(payload.get("content"))
    texts = [p.get("text") for p in parts if isinstance(p, dict)]
    kept = [t for t in texts if isinstance(t, str) and not is_preamble(t)]
    if not kept and (any(isinstance(t, str) for t in texts) or not parts):
        return None
    return "\n".join(kept)


def _assistant_text(payload: dict[str, Any]) -> str:
    parts = as_list(payload.get("content"))
    return "\n".join(
        p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def _title(text: str | None) -> str | None:
    """A title from a user prompt: None for tagged harness text; Codex Desktop puts attached
    files before ``## My request for Codex:``, so only the request is kept."""
    if text is None or text.lstrip().startswith("<"):
        return None
    return clip_title(text.split(_REQUEST, 1)[1] if _REQUEST in text else text)


class _Rollout:
    """Builds one thread from the lines of a rollout, in order."""

    def __init__(self, path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
        self.path = path
        self.result = result
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.cwd: str | None = None
        self.messages: list[Message] = []
        self.open: Message | None = None  # the assistant message later tool calls attach to
        self.tool_names: dict[str, str] = {}
        self.first_time: datetime | None = None
        self.last_time: datetime | None = None
        self.event_title: str | None = None
        self.turn: Message | None = None  # the last assistant message since the last user one
        self.usage_seen: Any = None  # the last token_count's running total (duplicates)
        self.pending_usage: dict[str, Any] | None = None
        lines = [line for r in records if (line := self._envelope(r)) is not None]
        roles = [
            p.get("role")
            for t, p, _ in lines
            if t == "response_item" and p.get("type") == "message"
        ]
        self.user_events = "user" not in roles
        self.agent_events = "assistant" not in roles
        for line_type, payload, time in lines:
            self._line(line_type, payload, time)

    def _envelope(
        self, record: dict[str, Any]
    ) -> tuple[str, dict[str, Any], datetime | None] | None:
        """``(type, payload, time)`` of a line; legacy un-enveloped lines are mapped too."""
        time = parse_time(record.get("timestamp"))
        line_type, payload = record.get("type"), record.get("payload")
        if line_type in _LINE_TYPES and isinstance(payload, dict):
            pass
        elif "record_type" in record:  # legacy state marker
            return None
        elif line_type in _LEGACY_ITEMS and payload is None:  # legacy bare response item
            line_type, payload, time = "response_item", record, None
        elif line_type is None and isinstance(record.get("id"), str):  # legacy header
            line_type, payload = "session_meta", record
        else:
            self.result.skipped["bad_record"] += 1
            return None
        if time is not None:
            self.first_time = self.first_time or time
            self.last_time = time
        return line_type, payload, time

    def _line(self, line_type: str, payload: dict[str, Any], time: datetime | None) -> None:
        kind = payload.get("type")
        if line_type == "session_meta":
            if not self.meta:
                self.meta = payload
        elif line_type == "turn_context":
            self.model = as_str(payload.get("model")) or self.model
            self.cwd = as_str(payload.get("cwd")) or self.cwd
        elif line_type == "response_item":
            self._item(payload, time)
        elif line_type == "event_msg" and kind == "user_message":
            text = payload.get("message")
            if isinstance(text, str):
                self.event_title = self.event_title or _title(text)
                if self.user_events:
                    self._add(Message(role="user", content=text, created_at=time))
        elif line_type == "event_msg" and kind == "token_count":
            self._token_count(as_dict(payload.get("info")))
        elif line_type == "event_msg" and kind == "agent_message" and self.agent_events:
            text = payload.get("message")
            if isinstance(text, str):
                self.open = self._add(Message(role="assistant", content=text, created_at=time))

    def _item(self, item: dict[str, Any], time: datetime | None) -> None:
        kind = item.get("type")
        if not isinstance(kind, str):
            return
        call_id = as_str(item.get("call_id"))
        if kind == "message" and item.get("role") == "user":
            text = _user_text(item)
            if text is not None:
                self._add(Message(role="user", content=text, created_at=time))
        elif kind == "message" and item.get("role") == "assistant":
            message = Message(role="assistant", content=_assistant_text(item), created_at=time)
            self.open = self._add(message)
        elif kind.endswith("_call_output") and call_id:
            output = item.get("output")
            self._add(
                Message(
                    role="tool",
                    content=json_text(output) if output is not None else "",
                    tool_call_id=call_id,
                    tool_name=self.tool_names.get(call_id),
                    created_at=time,
                )
            )
        elif kind.endswith("_call") and call_id:
            self._call(item, call_id, time)

    def _call(self, item: dict[str, Any], call_id: str, time: datetime | None) -> None:
        name = as_str(item.get("name")) or item["type"].removesuffix("_call")
        namespace = as_str(item.get("namespace"))
        if namespace and not name.startswith(namespace):
            name = namespace + name
        self.tool_names[call_id] = name
        if "arguments" in item:
            arguments = tool_arguments(item["arguments"])
        elif "input" in item:
            arguments = {"input": item["input"]}
        else:
            arguments = item.get("action")
        call = ToolCall(id=call_id, tool_name=name, arguments_json=arguments)
        if self.open is None:
            self.open = self._add(Message(role="assistant", content="", created_at=time))
        if self.open.tool_calls is None:
            self.open.tool_calls = []
        self.open.tool_calls.append(call)

    def _token_count(self, info: dict[str, Any]) -> None:
        """A ``token_count`` event: its ``last_token_usage`` (one model call) is added to the
        usage of the turn's last assistant message; an event repeating the running total of
        the one before (Codex writes some twice) is not counted again; one before any
        assistant message waits for the next one."""
        last, total = as_dict(info.get("last_token_usage")), info.get("total_token_usage")
        if not last or (total is not None and total == self.usage_seen):
            return
        self.usage_seen = total
        cached = last.get("cached_input_tokens")
        given = last.get("input_tokens")
        found = usage(
            input_tokens=given - cached
            if isinstance(given, int) and isinstance(cached, int) and given >= cached
            else given,
            output_tokens=last.get("output_tokens"),
            cache_read_tokens=cached,
            reasoning_tokens=last.get("reasoning_output_tokens"),
            model=self.model,
            provider=as_str(self.meta.get("model_provider")),
        )
        if found is None:
            return
        if self.turn is None:
            self.pending_usage = _summed(self.pending_usage, found)
        else:
            note(self.turn, _summed(usage_of(self.turn), found))

    def _add(self, message: Message) -> Message:
        self.messages.append(message)
        if message.role != "assistant":
            self.open = None
        if message.role == "user":
            self.turn = None
        elif message.role == "assistant":
            self.turn = message
            if self.pending_usage is not None:
                note(message, self.pending_usage)
                self.pending_usage = None
        return message

    def thread(self) -> Thread | None:
        """The thread, or None when the file holds no message (a session opened and left)."""
        if not self.messages:
            return None
        session_id = as_str(self.meta.get("id"))
        if session_id is None and (match := _FILE_ID.search(self.path.name)):
            session_id = match.group(1)
        thread_id = (
            session_thread_id(NAME, session_id)
            if session_id
            else name_thread_id(NAME, file_identity(self.path))
        )
        git = as_dict(self.meta.get("git"))
        sha, branch = as_str(git.get("commit_hash")), as_str(git.get("branch"))
        users = (_title(m.content) for m in self.messages if m.role == "user")
        root = as_str(self.meta.get("cwd"))
        return build_thread(
            thread_id,
            self.messages,
            source={
                "agent": "codex",
                "originator": as_str(self.meta.get("originator")),
                "cli_version": as_str(self.meta.get("cli_version")),
                "file": self.path.name,
            },
            title=self.event_title or next((t for t in users if t), None),
            created_at=self.first_time,
            last_activity_at=self.last_time,
            workspace_root=root,
            cwd=self.cwd or root,
            git_branch=branch,
            git_initial_branch=branch,
            git_remote_url=as_str(git.get("repository_url")),
            git_initial_commit_sha=sha,
            git_current_commit_sha=sha,
            git_commits=[sha] if sha else [],
            provider=as_str(self.meta.get("model_provider")),
            model=self.model,
        )


def _summed(before: dict[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """Two usage objects of one message added count by count (two model calls answered in
    one message: a tool call, then text); model and provider are the later call's."""
    if before is None:
        return more
    out = {**before, **more}
    for name in COUNTS:
        if name in before and name in more:
            out[name] = before[name] + more[name]
    return out


def parse(path: Path) -> ImportResult:
    """Read one rollout file into (at most) one thread; see the module docstring.

    Damaged lines are skipped and counted; an unreadable file gives a warning and no thread.
    """
    result = ImportResult()
    records = read_jsonl(path, result)
    if records is not None:
        from_records(path, records, result)
    return result


def from_records(path: Path, records: list[dict[str, Any]], result: ImportResult) -> None:
    """:func:`parse` of the records of ``path`` already read (``loomsync watch``): its thread
    or a warning, added to ``result``."""
    thread = _Rollout(path, records, result).thread()
    if thread is None:
        result.warnings.append(f"{path}: no Codex conversation in this file")
    else:
        result.threads.append(thread)


def detect(path: Path) -> bool:
    """A ``.jsonl`` file whose first lines are Codex rollout lines (or a legacy header)."""
    if path.suffix != ".jsonl":
        return False
    for record in first_objects(path, 3):
        if record.get("type") in _LINE_TYPES and isinstance(record.get("payload"), dict):
            return True
    return path.name.startswith("rollout-") and bool(_FILE_ID.search(path.name))


def discover(path: Path) -> list[Path]:
    """Rollout files under ``path`` (``rollout-*.jsonl`` and other Codex JSONL), or the file."""
    return find_files(path, ["*.jsonl"], detect)


def default_paths() -> list[Path]:
    """``sessions`` and ``archived_sessions`` in ``$CODEX_HOME``, by default ``~/.codex``."""
    configured = os.environ.get("CODEX_HOME")
    root = Path(configured).expanduser() if configured else home() / ".codex"
    return [root / "sessions", root / "archived_sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    from_records=from_records,
    agent="Codex CLI",
    what="rollout",
    expects='expected JSON Lines of {"timestamp", "type", "payload"} records, such as session_meta, in a .jsonl file',
    order=10,
    suffixes=(".jsonl",),
    live="append",
    watch_by_default=True,
    records=("messages", "tool calls", "usage", "git"),
)
