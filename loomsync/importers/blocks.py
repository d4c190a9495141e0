"""Helpers the JSON-file importers share (opencode, Pi, Continue, Cline SDK, Roo Code): a
message with ``usage`` and ``extra`` members, what is left of a record once its mapped keys
are taken, and Anthropic-style content blocks (``text`` / ``tool_use`` / ``tool_result`` /
``image``) turned into messages with every tool call paired with its result.

A message keeps what its agent wrote beyond role, text, time and tool calls in an ``extra``
member (the document keeps unknown message fields, API.md section 2), and the tokens its
model call consumed in ``usage`` (:mod:`loomsync.importers.usage`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Role, ToolCall
from loomsync.importers.common import (
    ImportResult,
    as_dict,
    as_list,
    as_str,
    blocks_text,
    json_text,
    read_json,
)


def message(
    role: Role,
    content: str,
    *,
    created_at: datetime | None = None,
    usage: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
    **fields: Any,
) -> Message:
    """A :class:`Message`; ``usage`` and a non-empty ``extra`` become members of it (None and
    ``{}`` are left out, so a message without either has no such member)."""
    members: dict[str, Any] = {"role": role, "content": content, "created_at": created_at}
    members.update(fields)
    if usage:
        members["usage"] = usage
    if extra:
        members["extra"] = extra
    return Message.model_validate(members)


def rest(record: dict[str, Any], used: Iterable[str]) -> dict[str, Any]:
    """The members of ``record`` not named in ``used`` (what goes to ``extra``)."""
    taken = set(used)
    return {key: value for key, value in record.items() if key not in taken}


def read_session(path: Path, result: ImportResult, key: str, agent: str) -> dict[str, Any] | None:
    """The JSON object in ``path`` when it holds a list under ``key`` (the session's messages);
    else None, after :func:`read_json`'s warning for an unreadable or damaged file, or a
    ``bad_record`` count and ``PATH: not a <agent> session (no <key> list)``."""
    document = read_json(path, result)
    if document is None:
        return None
    if not isinstance(document, dict) or not isinstance(document.get(key), list):
        result.skipped["bad_record"] += 1
        result.warnings.append(f"{path}: not a {agent} session (no {key} list)")
        return None
    return document


def siblings_unit(path: Path, unit_name: str, names: tuple[str, ...]) -> Path | None:
    """``path``'s folder's ``unit_name`` when ``path`` is named one of ``names`` (or is that
    unit); None otherwise. For task folders whose files change separately (Roo Code)."""
    if path.name != unit_name and path.name not in names:
        return None
    return path.parent / unit_name


def tool_result_text(content: Any) -> str:
    """The text of a ``tool_result`` block's ``content``: a string, text blocks joined, or
    anything else (Cline's ``[{query, result, success}]``) as compact JSON."""
    if isinstance(content, str):
        return content
    blocks = as_list(content)
    if blocks and all(as_dict(b).get("type") in ("text", "image") for b in blocks):
        return blocks_text(blocks, image="[image]")
    return json_text(content) if content is not None else ""


class BlockConversation:
    """Builds messages from Anthropic-style ``{role, content}`` entries, in order.

    - assistant: ``text`` blocks → content; ``tool_use`` blocks → tool calls;
      ``thinking`` / ``reasoning`` and other blocks → the message's ``extra.blocks``;
    - user: ``tool_result`` blocks → one tool message each (``tool_call_id``, the name of the
      call it answers, ``extra.is_error``); the remaining text/image blocks → one user message
      (``file`` blocks, ``{path, content}``, go to ``extra.files``), none when only results.

    ``add`` returns the messages made for one entry, so a caller can attach ``usage`` and
    ``extra`` of its own.
    """

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.tool_names: dict[str, str] = {}

    def add(
        self,
        role: str,
        content: Any,
        *,
        created_at: datetime | None,
        usage: dict[str, Any] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> list[Message]:
        """Append the messages of one entry (``role`` ``user`` / ``assistant`` / ``system``)
        and return them; an entry of another role makes nothing."""
        if role == "assistant":
            made = [self._assistant(content, created_at, usage, extra or {})]
        elif role in ("user", "system"):
            made = self._user(role, content, created_at, extra or {})
        else:
            return []
        self.messages.extend(made)
        return made

    def _assistant(
        self,
        content: Any,
        time: datetime | None,
        usage: dict[str, Any] | None,
        extra: dict[str, Any],
    ) -> Message:
        texts: list[str] = []
        calls: list[ToolCall] = []
        others: list[Any] = []
        blocks = [content] if isinstance(content, str) else as_list(content)
        for block in blocks:
            kind = as_dict(block).get("type")
            if isinstance(block, str):
                texts.append(block)
            elif kind == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif kind == "tool_use":
                call_id, name = as_str(block.get("id")), as_str(block.get("name"))
                if call_id and name:
                    self.tool_names[call_id] = name
                calls.append(
                    ToolCall(id=call_id, tool_name=name, arguments_json=block.get("input"))
                )
            else:
                others.append(block)
        if others:
            extra = {**extra, "blocks": others}
        return message(
            "assistant",
            "\n".join(texts),
            created_at=time,
            tool_calls=calls or None,
            usage=usage,
            extra=extra,
        )

    def _user(
        self, role: str, content: Any, time: datetime | None, extra: dict[str, Any]
    ) -> list[Message]:
        results: list[dict[str, Any]] = []
        kept: list[Any] = []
        files: list[Any] = []
        blocks = [content] if isinstance(content, str) else as_list(content)
        for block in blocks:
            kind = as_dict(block).get("type")
            if kind == "tool_result":
                results.append(as_dict(block))
            elif kind == "file":
                files.append(block)
            else:
                kept.append(block)
        own = bool(kept or files or not results)
        made: list[Message] = []
        for index, body in enumerate(results):
            call_id = as_str(body.get("tool_use_id"))
            name = self.tool_names.get(call_id or "") or as_str(body.get("name"))
            more = rest(body, ("type", "tool_use_id", "name", "content"))
            if index == 0 and not own:
                more = {**extra, **more}
            made.append(
                message(
                    "tool",
                    tool_result_text(body.get("content")),
                    created_at=time,
                    tool_call_id=call_id,
                    tool_name=name,
                    extra=more,
                )
            )
        if own:
            more = {**extra, "files": files} if files else extra
            made.append(
                message(
                    "system" if role == "system" else "user",
                    blocks_text(kept, image="[image]"),
                    created_at=time,
                    extra=more,
                )
            )
        return made


__all__ = [
    "BlockConversation",
    "message",
    "read_session",
    "rest",
    "siblings_unit",
    "tool_result_text",
]
