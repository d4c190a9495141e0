"""Sourcegraph Amp threads: ``$XDG_DATA_HOME/amp/threads/T-<uuid>.json`` (default
``~/.local/share/amp/threads``), and the VS Code extension's older
``<User>/globalStorage/sourcegraph.amp/threads3/T-<uuid>.json``.

NO SAMPLE FILE: no real Amp thread with a usable licence was found (SOURCES.md), so this
format was learned from public code that reads it (kenn-io/agentsview's Amp parser and its
tests, MIT; the notes of noamsto/houston and of an Amp session manager), read, not copied; the
tests build their threads from that knowledge. What is not known for certain is kept, never
interpreted.

One JSON object, rewritten by Amp as the thread goes on (``live="rewrite"``): ``{v, id,
created (ms), title?, agentMode?, messages: [...], env.initial: {trees: [{displayName, uri,
repository: {type, url, ref, sha}}], platform}, meta: {traces}, relationships?: [{type,
role, threadID, comment?}]}``. Each message is ``{role, messageId, content: [blocks], state?,
usage?, meta?: {sentAt}}``; blocks are Anthropic-style: ``text``, ``thinking``, ``tool_use{id,
name, input}``, and Amp's ``tool_result{toolUseID, run: {status: done|error|cancelled, result,
error{message}}}`` (or the canonical ``{tool_use_id, content}``). What comes out:

- a user message for the text of each ``user`` message, and a tool message per tool result
  (``run.result``: its ``output``, ``content`` or ``diff`` when it is an object; the error
  message; ``[cancelled]``);
- an assistant message per ``assistant`` message (``thinking`` under ``extra.thinking``),
  its ``usage`` (``inputTokens``, ``outputTokens``, ``cacheReadInputTokens``,
  ``cacheCreationInputTokens``, ``model``) as usage; for ``gpt-*`` models Amp files the
  uncached prompt as cache creation, so it is counted as input there (as agentsview does);
- times: ``usage.timestamp`` or ``meta.sentAt``; the thread starts at ``created``;
- ``relationships`` of ``type: handoff`` with ``role: child`` (this thread was handed off
  from ``threadID``) → ``metadata.extra.resumed_from``; all of them are kept as they are;
- ``env.initial.trees[0]``: the cwd (``uri``) and git (``repository``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from loomsync.core.document.model import Message, Role
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
    session_thread_id,
)
from loomsync.importers.copilot_chat import user_folders
from loomsync.importers.parts import message, read_document, tool_uses, without
from loomsync.importers.usage import usage

NAME = "amp"
_THREAD_FILE = re.compile(r"^T-[0-9A-Za-z-]+\.json$")


def thread_id_of(amp_id: str) -> Any:
    """The loomsync id of the Amp thread ``T-<uuid>`` (``T-<uuid>``; a name-based id for an
    id that is not a UUID)."""
    return session_thread_id(NAME, amp_id.removeprefix("T-"))


def _result_text(value: Any) -> str:
    if isinstance(value, dict):
        for key in ("output", "content", "diff"):
            if value.get(key) not in (None, ""):
                return _result_text(value[key])
        if isinstance(value.get("success"), bool):
            return "success" if value["success"] else "failed"
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    return json_text(value) if value is not None else ""


def _tool_result(block: dict[str, Any]) -> tuple[str | None, str, dict[str, Any]]:
    """``(call id, text, extra)`` of a tool result block, in Amp's or the canonical shape."""
    if as_str(block.get("tool_use_id")):
        text = blocks_text(block.get("content"), image="[image]")
        return as_str(block.get("tool_use_id")), text, without(block, "tool_use_id", "content")
    run = as_dict(block.get("run"))
    status = as_str(run.get("status"))
    if run.get("result") is not None:
        text = _result_text(run["result"])
    elif status == "error":
        text = as_str(as_dict(run.get("error")).get("message")) or "[unknown error]"
    else:
        text = f"[{status}]" if status else ""
    return as_str(block.get("toolUseID")), text, {"run": without(run, "result")}


def _usage(raw: dict[str, Any]) -> dict[str, Any] | None:
    model = as_str(raw.get("model"))
    created, uncached = raw.get("cacheCreationInputTokens"), raw.get("inputTokens")
    if model and model.startswith("gpt-") and isinstance(created, int):
        return usage(
            input_tokens=(uncached if isinstance(uncached, int) else 0) + created,
            output_tokens=raw.get("outputTokens"),
            cache_read_tokens=raw.get("cacheReadInputTokens"),
            model=model,
            provider="amp",
        )
    return usage(
        input_tokens=uncached,
        output_tokens=raw.get("outputTokens"),
        cache_read_tokens=raw.get("cacheReadInputTokens"),
        cache_write_tokens=created,
        model=model,
        provider="amp",
    )


def _messages(items: list[Any], result: ImportResult) -> tuple[list[Message], list[str]]:
    messages: list[Message] = []
    models: list[str] = []
    tools: dict[str, str] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("role"), str):
            result.skipped["bad_record"] += 1
            continue
        raw_usage = as_dict(item.get("usage"))
        time = parse_time(raw_usage.get("timestamp")) or parse_time(
            as_dict(item.get("meta")).get("sentAt")
        )
        content = item.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [as_dict(b) for b in as_list(blocks)]
        texts = [str(b["text"]) for b in blocks if b.get("type") == "text" and "text" in b]
        text = "\n\n".join(t.strip() for t in texts if t.strip())
        kept = without(item, "role", "content", "usage")
        number = item.get("messageId")
        own_id = f"message-{number}" if isinstance(number, int) else None
        if item["role"] == "assistant":
            calls = tool_uses(blocks, tools)
            if thinking := [b.get("thinking") for b in blocks if b.get("type") == "thinking"]:
                kept["thinking"] = thinking
            if model := as_str(raw_usage.get("model")):
                models.append(model)
            messages.append(
                message(
                    "assistant",
                    text,
                    created_at=time,
                    id=own_id,
                    tool_calls=calls,
                    usage=_usage(raw_usage),
                    extra=kept,
                )
            )
            continue
        for index, block in enumerate(blocks):
            if block.get("type") == "tool_result":
                call_id, answer, extra = _tool_result(block)
                messages.append(
                    message(
                        "tool",
                        answer,
                        created_at=time,
                        id=f"{own_id}:{index}" if own_id else None,
                        tool_call_id=call_id,
                        tool_name=tools.get(call_id or ""),
                        extra=extra,
                    )
                )
        if text or not any(b.get("type") == "tool_result" for b in blocks):
            own: Role = "user" if item["role"] == "user" else "system"  # info / notices
            messages.append(message(own, text, created_at=time, id=own_id, extra=kept))
    return messages, models


def _tree(document: dict[str, Any]) -> dict[str, Any]:
    """The first workspace tree of ``env.initial`` ({} when none)."""
    trees = as_list(as_dict(as_dict(document.get("env")).get("initial")).get("trees"))
    return as_dict(trees[0]) if trees else {}


def _path_of(uri: str | None) -> str | None:
    if not uri:
        return None
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


def parse(path: Path) -> ImportResult:
    """Read one thread file into one thread (``T-<uuid>`` of its ``id``). A damaged file
    gives a warning and a skipped count; a damaged message is skipped and counted."""
    result = ImportResult()
    document = read_document(path, result, "messages", "an Amp thread")
    if document is None:
        return result
    messages, models = _messages(document["messages"], result)
    if not messages:
        result.warnings.append(f"{path}: no messages in this thread")
        return result
    amp_id = as_str(document.get("id")) or path.stem
    tree = _tree(document)
    repository = as_dict(tree.get("repository"))
    ref = as_str(repository.get("ref"))
    branch = ref.removeprefix("refs/heads/") if ref else None
    sha = as_str(repository.get("sha"))
    extra: dict[str, Any] = {"thread": without(document, "messages")}
    for relation in as_list(document.get("relationships")):
        relation = as_dict(relation)
        other = as_str(relation.get("threadID"))
        if other and relation.get("type") == "handoff" and relation.get("role") == "child":
            extra["resumed_from"] = str(thread_id_of(other))
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            thread_id_of(amp_id) if amp_id else name_thread_id(NAME, path.name),
            messages,
            source={"agent": NAME, "file": path.name, "thread_id": amp_id, "v": document.get("v")},
            title=clip_title(as_str(document.get("title")) or first_user),
            created_at=parse_time(document.get("created")),
            extra=extra,
            cwd=_path_of(as_str(tree.get("uri"))),
            workspace_root=_path_of(as_str(tree.get("uri"))),
            git_remote_url=as_str(repository.get("url")),
            git_branch=branch,
            git_initial_branch=branch,
            git_initial_commit_sha=sha,
            git_commits=[sha] if sha else [],
            provider="amp",
            model=models[-1] if models else None,
        )
    )
    return result


def detect(path: Path) -> bool:
    """A ``T-*.json`` file that starts like an Amp thread (``"v"``, ``"id": "T-…"``,
    ``messages``)."""
    if not _THREAD_FILE.match(path.name):
        return False
    data = head(path)
    return (
        data.lstrip().startswith(b"{")
        and b'"messages"' in data
        and re.search(rb'"id"\s*:\s*"T-', data) is not None
    )


def discover(path: Path) -> list[Path]:
    """Thread files under ``path`` (``threads/T-*.json``), or the file itself."""
    return find_files(path, ["T-*.json"], detect)


def default_paths() -> list[Path]:
    """``$XDG_DATA_HOME/amp/threads`` (default ``~/.local/share/amp/threads``, on every OS),
    and ``globalStorage/sourcegraph.amp/threads3`` of each VS Code-like user folder."""
    data = Path(os.environ.get("XDG_DATA_HOME") or home() / ".local" / "share")
    legacy = [u / "globalStorage" / "sourcegraph.amp" / "threads3" for u in user_folders()]
    return [data / "amp" / "threads", *legacy]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Amp",
    what="thread",
    expects="expected an Amp thread: a T-<id>.json object with id and messages",
    order=35,
    suffixes=(".json",),
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "git", "lineage"),
)
