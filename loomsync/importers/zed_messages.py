"""The messages of a Zed thread document, in its current (``0.3.0``: externally tagged
``User``/``Agent``/``Resume``) and legacy (``0.2.0``/``0.1.0``: role and segments) shapes; the
format and the mapping are described in :mod:`loomsync.importers.zed`."""

from __future__ import annotations

from typing import Any

from loomsync.core.document.model import Message, ToolCall
from loomsync.importers.common import ImportResult, as_dict, as_list, as_str, json_text
from loomsync.importers.usage import usage


def _usage(counts: Any, model: dict[str, Any]) -> dict[str, Any] | None:
    counts = as_dict(counts)
    return (
        usage(
            input_tokens=counts.get("input_tokens", 0),
            output_tokens=counts.get("output_tokens", 0),
            cache_read_tokens=counts.get("cache_read_input_tokens", 0),
            cache_write_tokens=counts.get("cache_creation_input_tokens", 0),
            model=model.get("model"),
            provider=model.get("provider"),
        )
        if counts
        else None
    )


def _variant(value: Any) -> tuple[str | None, Any]:
    """``("Text", "hi")`` for ``{"Text": "hi"}``; ``("Resume", None)`` for ``"Resume"``."""
    if isinstance(value, str):
        return value, None
    if isinstance(value, dict) and len(value) == 1:
        [(key, inner)] = value.items()
        return key, inner
    return None, value


def _result_text(content: Any) -> str:
    kind, inner = _variant(content)
    if isinstance(content, str):
        return content
    if kind in ("Text", "text") and isinstance(inner, str):
        return inner
    if kind in ("Image", "image"):
        return "[image]"
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return json_text(content)


def _tool_messages(results: list[dict[str, Any]], names: dict[str, str]) -> list[Message]:
    out = []
    for item in results:
        call_id = as_str(item.get("tool_use_id"))
        extra = {k: v for k, v in item.items() if k in ("output",) and v is not None}
        if item.get("is_error"):
            extra["is_error"] = True
        out.append(
            Message(
                role="tool",
                content=_result_text(item.get("content")),
                tool_call_id=call_id,
                tool_name=as_str(item.get("tool_name")) or names.get(call_id or ""),
                **({"extra": extra} if extra else {}),
            )
        )
    return out


def current(document: dict[str, Any], model: dict[str, Any], result: ImportResult) -> list[Message]:
    """The messages of a ``0.3.0`` thread document (``model``: its ``{provider, model}``, for
    the usage of each answered turn); damaged messages are counted in ``result``."""
    messages: list[Message] = []
    spent = as_dict(document.get("request_token_usage"))
    turn: str | None = None
    last_agent: dict[str | None, Message] = {}
    for item in as_list(document.get("messages")):
        kind, body = _variant(item)
        body = as_dict(body)
        if kind == "User":
            turn = as_str(body.get("id"))
            texts: list[str] = []
            kept: list[Any] = []
            for part in as_list(body.get("content")):
                name, inner = _variant(part)
                if name == "Text" and isinstance(inner, str):
                    texts.append(inner)
                elif name == "Mention":
                    texts.append(json_text(as_dict(inner).get("content", "")))
                    kept.append({"mention": as_dict(inner).get("uri")})
                else:
                    if name == "Image":
                        texts.append("[image]")
                    kept.append(part)
            messages.append(
                Message(
                    role="user",
                    content="\n".join(texts),
                    id=turn,
                    **({"extra": {"content": kept}} if kept else {}),
                )
            )
        elif kind == "Agent":
            texts = []
            calls: list[ToolCall] = []
            extra_parts: list[Any] = []
            names: dict[str, str] = {}
            for part in as_list(body.get("content")):
                name, inner = _variant(part)
                if name == "Text" and isinstance(inner, str):
                    texts.append(inner)
                elif name == "ToolUse":
                    use = as_dict(inner)
                    call_id = as_str(use.get("id"))
                    if call_id and as_str(use.get("name")):
                        names[call_id] = str(use["name"])
                    arguments = use.get("input")
                    if arguments is None:
                        arguments = {"raw": use.get("raw_input")}
                    calls.append(
                        ToolCall(
                            id=call_id, tool_name=as_str(use.get("name")), arguments_json=arguments
                        )
                    )
                else:
                    extra_parts.append(part)
            extra: dict[str, Any] = {"content": extra_parts} if extra_parts else {}
            if body.get("reasoning_details") is not None:
                extra["reasoning_details"] = body["reasoning_details"]
            message = Message(
                role="assistant",
                content="\n".join(texts),
                tool_calls=calls or None,
                **({"extra": extra} if extra else {}),
            )
            messages.append(message)
            last_agent[turn] = message
            results = [as_dict(r) for r in as_dict(body.get("tool_results")).values()]
            messages.extend(_tool_messages(results, names))
        elif kind == "Resume":
            messages.append(Message(role="system", content="[resumed]", extra={"kind": "Resume"}))
        else:
            result.skipped["bad_record"] += 1
    for turn_id, counts in spent.items():
        answer = last_agent.get(turn_id)
        if answer is not None and (found := _usage(counts, model)):
            answer.usage = found  # type: ignore[attr-defined]  # an unknown field, kept
    return messages


def legacy(document: dict[str, Any], result: ImportResult) -> list[Message]:
    """The messages of a ``0.2.0``/``0.1.0`` thread document (role, segments, tool uses and
    results); damaged messages are counted in ``result``."""
    messages: list[Message] = []
    for item in as_list(document.get("messages")):
        item = as_dict(item)
        role = item.get("role")
        if role not in ("user", "assistant", "system"):
            result.skipped["bad_record"] += 1
            continue
        texts, extra_segments = [], []
        for segment in as_list(item.get("segments")):
            segment = as_dict(segment)
            if segment.get("type") == "text" and isinstance(segment.get("text"), str):
                texts.append(segment["text"])
            else:
                extra_segments.append(segment)
        uses = [as_dict(u) for u in as_list(item.get("tool_uses"))]
        calls = [
            ToolCall(
                id=as_str(u.get("id")),
                tool_name=as_str(u.get("name")),
                arguments_json=u.get("input"),
            )
            for u in uses
        ]
        extra = {"segments": extra_segments} if extra_segments else {}
        if item.get("context"):
            extra["context"] = item["context"]
        results = [as_dict(r) for r in as_list(item.get("tool_results"))]
        names = {str(u.get("id")): str(u.get("name")) for u in uses}
        if texts or calls or not results:
            messages.append(
                Message(
                    role=role,
                    content="\n".join(texts),
                    id=str(item["id"]) if item.get("id") is not None else None,
                    tool_calls=calls or None,
                    **({"extra": extra} if extra else {}),
                )
            )
        if results:  # a legacy user message carries the results of the previous calls
            known = {c.id: c.tool_name for m in messages for c in m.tool_calls or [] if c.id}
            messages.extend(
                _tool_messages(results, {**names, **{k: v for k, v in known.items() if v}})
            )
    return messages


__all__ = ["current", "legacy"]
