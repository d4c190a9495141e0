"""OpenHands event streams exported as one JSON array (trajectory / event-log files).

Events are actions ``{id, timestamp, source, action, args, message, tool_call_metadata?}``
or observations ``{id, timestamp, source, observation, cause, content, extras,
tool_call_metadata?}``:

- ``message`` actions → user or assistant messages (``args.content``);
- agent actions with ``tool_call_metadata`` (``run``, ``edit``, ``read``, ``browse``, MCP …)
  → tool calls, grouped into one assistant message per model response (its text is the
  response's content, else the action's ``thought``); arguments come from the model
  response's tool call, else from ``args``;
- observations with ``tool_call_metadata`` → tool messages (``content``, else ``message``);
- ``finish`` → an assistant message with its final text; a ``system`` action → a system
  message; state changes, ``null`` observations and other environment events are not content.

Timestamps are naive and read as UTC. The export has no session id: the thread id is a UUIDv5
over the file's identity (folder and file name).
"""

from __future__ import annotations

import re
from datetime import datetime
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
    file_identity,
    find_files,
    head,
    json_text,
    name_thread_id,
    parse_time,
    read_json,
    tool_arguments,
)

NAME = "openhands"

_SOURCE = re.compile(rb'"source"\s*:\s*"(user|agent|environment)"')


def _response_call(response: dict[str, Any], call_id: str) -> dict[str, Any]:
    """The model response's tool call with id ``call_id`` ({} if absent)."""
    for choice in as_list(response.get("choices")):
        for call in as_list(as_dict(as_dict(choice).get("message")).get("tool_calls")):
            if as_dict(call).get("id") == call_id:
                return as_dict(call)
    return {}


def _response_text(response: dict[str, Any]) -> str | None:
    for choice in as_list(response.get("choices")):
        if text := as_str(as_dict(as_dict(choice).get("message")).get("content")):
            return text
    return None


class _Stream:
    """Builds the messages of an event list, in order."""

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.by_response: dict[str, Message] = {}
        self.model: str | None = None

    def event(self, event: dict[str, Any]) -> None:
        """Add the messages one event makes (none for state changes and the like)."""
        time = parse_time(event.get("timestamp"))
        source, action = event.get("source"), event.get("action")
        args, meta = as_dict(event.get("args")), as_dict(event.get("tool_call_metadata"))
        call_id = as_str(meta.get("tool_call_id"))
        if action == "message" and source in ("user", "agent"):
            text = args.get("content", event.get("message"))
            role = "user" if source == "user" else "assistant"
            self.messages.append(Message(role=role, content=json_text(text or ""), created_at=time))
        elif action == "system":
            text = args.get("content", event.get("message"))
            self.messages.append(
                Message(role="system", content=json_text(text or ""), created_at=time)
            )
        elif action == "finish" and source == "agent":
            text = args.get("final_thought") or event.get("message") or args.get("thought") or ""
            self.messages.append(
                Message(role="assistant", content=json_text(text), created_at=time)
            )
        elif action and source == "agent" and call_id:
            self._call(args, meta, call_id, time)
        elif event.get("observation") and call_id:
            content = event.get("content") or event.get("message") or ""
            name = as_str(meta.get("function_name"))
            self.messages.append(
                Message(
                    role="tool",
                    content=json_text(content),
                    tool_call_id=call_id,
                    tool_name=name,
                    created_at=time,
                )
            )

    def _call(
        self,
        args: dict[str, Any],
        meta: dict[str, Any],
        call_id: str,
        time: datetime | None,
    ) -> None:
        response = as_dict(meta.get("model_response"))
        self.model = as_str(response.get("model")) or self.model
        function = as_dict(_response_call(response, call_id).get("function"))
        if "arguments" in function:
            arguments = tool_arguments(function["arguments"])
        else:
            arguments = {k: v for k, v in args.items() if k != "thought"}
        call = ToolCall(
            id=call_id, tool_name=as_str(meta.get("function_name")), arguments_json=arguments
        )
        key = as_str(response.get("id"))
        message = self.by_response.get(key) if key else None
        if message is None:
            text = _response_text(response) or as_str(args.get("thought")) or ""
            message = Message(role="assistant", content=text, created_at=time, tool_calls=[])
            self.messages.append(message)
            if key:
                self.by_response[key] = message
        message.tool_calls = [*(message.tool_calls or []), call]


def parse(path: Path) -> ImportResult:
    """Read one exported event list into one thread. A damaged file gives a warning and a
    skipped count; an event that is not an object is skipped and counted."""
    result = ImportResult()
    document = read_json(path, result)
    if document is None:
        return result
    events = document if isinstance(document, list) else as_dict(document).get("events")
    if not isinstance(events, list):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not an OpenHands event list")
        return result
    stream = _Stream()
    times: list[datetime] = []
    for event in events:
        if not isinstance(event, dict):
            result.skipped["bad_record"] += 1
            continue
        stream.event(event)
        if (time := parse_time(event.get("timestamp"))) is not None:
            times.append(time)
    if not stream.messages:
        result.warnings.append(f"{path}: no messages in this event list")
        return result
    first_user = next((m.content for m in stream.messages if m.role == "user"), None)
    result.threads.append(
        build_thread(
            name_thread_id(NAME, file_identity(path)),
            stream.messages,
            source={"agent": "openhands", "file": path.name},
            title=clip_title(first_user),
            created_at=times[0] if times else None,
            last_activity_at=times[-1] if times else None,
            model=stream.model,
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``.json`` file holding an array of events (``source`` with ``action`` or
    ``observation``)."""
    if path.suffix != ".json":
        return False
    data = head(path)
    return (
        data.lstrip().startswith(b"[")
        and _SOURCE.search(data) is not None
        and (b'"action"' in data or b'"observation"' in data)
    )


def discover(path: Path) -> list[Path]:
    """Event-list ``.json`` files under ``path``, or the file itself."""
    return find_files(path, ["*.json"], detect)


def default_paths() -> list[Path]:
    """None: OpenHands keeps live sessions as one file per event; import exported lists."""
    return []


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="OpenHands",
    what="event stream",
    expects="expected a JSON array of events with source and action or observation, in a .json file",
    order=60,
    suffixes=(".json", ".jsonl"),
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls"),
)
