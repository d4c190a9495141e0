"""Gemini CLI chats: ``~/.gemini/tmp/<project hash or name>/chats/session-<time>-<id>.json``.

One JSON object ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``; each
message is ``{id, timestamp, type, content, thoughts?, toolCalls?, tokens?, model?}``:

- ``user`` → a user message; ``gemini`` → an assistant message whose ``toolCalls`` become
  tool calls, each followed by a tool message with its result (``functionResponse.response``
  output or error, else ``resultDisplay``);
- ``info`` / ``warning`` / ``error`` (notices from the CLI) → system messages;
- ``tokens`` becomes the message's ``usage`` (:mod:`loomsync.importers.usage`);
- ``thoughts`` are not content. The file records no working folder (only a hash of it) and
  no CLI version.
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
    blocks_text,
    build_thread,
    clip_title,
    find_files,
    head,
    home,
    json_text,
    name_thread_id,
    parse_time,
    read_json,
    session_thread_id,
)
from loomsync.importers.usage import note, usage

NAME = "gemini-cli"

# Tuples, not sets: membership of an untrusted (possibly unhashable) value must not raise.
_ASSISTANT = ("gemini", "model", "assistant")
_NOTICES = ("info", "warning", "error")


def _content(value: Any) -> str:
    """Message content: a string, or a list of parts with ``text``."""
    return blocks_text(value, image="[image]") if value is not None else ""


def result_text(call: dict[str, Any]) -> str:
    """The text a tool call returned: each ``functionResponse.response`` output (or error, or
    the whole response as JSON), or text parts; else the ``resultDisplay``; else ""."""
    texts: list[str] = []
    for part in as_list(call.get("result")):
        part = as_dict(part)
        if "functionResponse" in part:
            response = as_dict(part["functionResponse"]).get("response")
            body = as_dict(response)
            value = body.get("output", body.get("error", response))
            if value is not None:
                texts.append(json_text(value))
        elif isinstance(part.get("text"), str):
            texts.append(part["text"])
    if texts:
        return "\n".join(texts)
    display = call.get("resultDisplay")
    return display if isinstance(display, str) else ""


def _messages(items: list[Any], result: ImportResult) -> tuple[list[Message], str | None]:
    messages: list[Message] = []
    model: str | None = None
    for item in items:
        if not isinstance(item, dict):
            result.skipped["bad_record"] += 1
            continue
        kind, time = item.get("type"), parse_time(item.get("timestamp"))
        text = _content(item.get("content"))
        if kind == "user":
            messages.append(Message(role="user", content=text, created_at=time))
        elif kind in _NOTICES:
            messages.append(Message(role="system", content=text, created_at=time))
        elif kind in _ASSISTANT:
            model = as_str(item.get("model")) or model
            calls = [c for c in as_list(item.get("toolCalls")) if isinstance(c, dict)]
            tool_calls = [
                ToolCall(
                    id=as_str(c.get("id")),
                    tool_name=as_str(c.get("name")),
                    arguments_json=c.get("args"),
                )
                for c in calls
            ]
            reply = Message(
                role="assistant", content=text, created_at=time, tool_calls=tool_calls or None
            )
            _note_usage(reply, item)
            messages.append(reply)
            messages.extend(
                Message(
                    role="tool",
                    content=result_text(c),
                    tool_call_id=as_str(c.get("id")),
                    tool_name=as_str(c.get("name")),
                    created_at=parse_time(c.get("timestamp")) or time,
                )
                for c in calls
            )
    return messages, model


def _note_usage(message: Message, item: dict[str, Any]) -> None:
    """Set ``message.usage`` (:mod:`loomsync.importers.usage`) from a Gemini message's
    ``tokens`` ``{input, output, cached, thoughts, tool, total}`` (the API's
    ``usageMetadata``): ``input`` counts the cached tokens and ``output`` leaves the thoughts
    out, so input = input - cached, output = output + thoughts, reasoning = thoughts."""
    tokens = as_dict(item.get("tokens"))
    count = {k: v for k, v in tokens.items() if isinstance(v, int) and not isinstance(v, bool)}
    cached, thoughts = count.get("cached", 0), count.get("thoughts", 0)
    found = usage(
        input_tokens=count["input"] - cached if "input" in count else None,
        output_tokens=count["output"] + thoughts if "output" in count else None,
        cache_read_tokens=count.get("cached"),
        reasoning_tokens=count.get("thoughts"),
        model=item.get("model"),
        provider="google",
    )
    note(message, found)


def parse(path: Path) -> ImportResult:
    """Read one chat file into one thread (id ``T-<sessionId>``). A damaged file gives a
    warning and a skipped count; a damaged message is skipped and counted."""
    result = ImportResult()
    document = read_json(path, result)
    if document is None:
        return result
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not a Gemini CLI chat (no messages list)")
        return result
    messages, model = _messages(document["messages"], result)
    if not messages:
        result.warnings.append(f"{path}: no messages in this chat")
        return result
    session_id = as_str(document.get("sessionId"))
    thread_id = (
        session_thread_id(NAME, session_id) if session_id else name_thread_id(NAME, path.name)
    )
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            thread_id,
            messages,
            source={
                "agent": "gemini-cli",
                "file": path.name,
                "session_id": session_id,
                "project_hash": as_str(document.get("projectHash")),
            },
            title=clip_title(first_user),
            created_at=parse_time(document.get("startTime")),
            last_activity_at=parse_time(document.get("lastUpdated")),
            provider="google",
            model=model,
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``.json`` file that starts like a Gemini CLI chat object."""
    if path.suffix != ".json":
        return False
    data = head(path)
    return (
        data.lstrip().startswith(b"{")
        and b'"sessionId"' in data
        and b'"messages"' in data
        and (b'"projectHash"' in data or b'"startTime"' in data)
    )


def discover(path: Path) -> list[Path]:
    """Chat files under ``path`` (``chats/session-*.json``), or the file itself."""
    return find_files(path, ["*.json"], detect)


def default_paths() -> list[Path]:
    """``~/.gemini/tmp`` (one folder per project, chats inside)."""
    return [home() / ".gemini" / "tmp"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Gemini CLI",
    what="chat",
    expects="expected a JSON object with sessionId, startTime and messages, in a .json file",
    order=30,
    suffixes=(".json",),
    live="rewrite",
    watch_by_default=True,
    records=("messages", "tool calls", "usage"),
)
