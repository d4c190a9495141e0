"""Cline CLI / SDK sessions (cline/cline ``sdk``, 2026+):
``$CLINE_DIR/data/sessions/<session_id>/`` (by default ``~/.cline``) holding a manifest
``<session_id>.json`` and the messages ``<session_id>.messages.json``; both are rewritten in
place. (Cline's VS Code extension still writes the legacy task folders: see
:mod:`loomsync.importers.roo_code`.)

- Manifest ``{version, session_id ("<ms>_<5 chars>"), source, pid, started_at, ended_at,
  exit_code, status, interactive, provider, model, cwd, workspace_root, team_name,
  enable_*, metadata{mode, title, checkpointEnabled, messagesPath, fork{forkedFromSessionId,
  forkedAt, source}}, messages_path}``: the file ``discover`` returns (the unit); a change
  to the messages file maps to it (:func:`unit_of`).
- Messages ``{version, updated_at, agent, sessionId, system_prompt, messages: [{id, role,
  ts (ms), content: [text | file{path, content} | tool_use{id, name, input} |
  tool_result{tool_use_id, name, content}], modelInfo{id, provider, family},
  metrics{inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, cost}}]}``.

Mapping (:class:`~loomsync.importers.blocks.BlockConversation`): ``tool_use`` blocks → tool
calls, each ``tool_result`` → a tool message paired by ``tool_use_id``; ``file`` blocks (files
the user attached with ``@``) → the user message's ``extra.files``; ``modelInfo`` +
``metrics`` → ``usage`` (Cline's ``inputTokens`` counts cache reads and writes, which are
subtracted), ``cost`` in ``extra``. A fork (``metadata.fork``) is a session of its own whose
``metadata.extra.forked_from`` names the session it was forked from; the thread's model is
the last message's ``modelInfo.id`` (the manifest's ``model`` is the one configured at
start, which may differ, kept in ``extra.manifest``). ``system_prompt`` is kept in
``metadata.extra``. Compaction rewrites the first user message with a ``<SYSTEM_NOTICE>``
summary; it is imported as written. No git data is recorded.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from loomsync.importers.blocks import BlockConversation, read_session, rest
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
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

NAME = "cline-sdk"
MESSAGES = ".messages.json"

_SESSION_ID = re.compile(r"^\d{10,}_[A-Za-z0-9]+$")


def _metrics(entry: dict[str, Any]) -> dict[str, Any] | None:
    metrics, info = as_dict(entry.get("metrics")), as_dict(entry.get("modelInfo"))
    total = metrics.get("inputTokens")
    read, write = metrics.get("cacheReadTokens"), metrics.get("cacheWriteTokens")
    cached = sum(n for n in (read, write) if isinstance(n, int) and not isinstance(n, bool))
    billed = total - cached if isinstance(total, int) and total >= cached else total
    return usage(
        input_tokens=billed,
        output_tokens=metrics.get("outputTokens"),
        cache_read_tokens=read,
        cache_write_tokens=write,
        model=info.get("id"),
        provider=info.get("provider"),
    )


def _pair(path: Path) -> tuple[Path, Path]:
    """``(manifest, messages file)`` of a session, from either of its two files."""
    if path.name.endswith(MESSAGES):
        stem = path.name.removesuffix(MESSAGES)
        return path.with_name(f"{stem}.json"), path
    return path, path.with_name(f"{path.stem}{MESSAGES}")


def parse(path: Path) -> ImportResult:
    """Read the session whose manifest (or messages file) is ``path`` into one thread (id a
    UUIDv5 over ``cline-sdk`` and the session id). A missing manifest loses only the session's
    settings; a damaged messages file gives a warning and no thread."""
    result = ImportResult()
    manifest_path, messages_path = _pair(path)
    if path == manifest_path:
        manifest = read_json(path, result)
        if manifest is None:
            return result
    else:
        manifest = read_json(manifest_path, result) if manifest_path.is_file() else {}
    manifest = as_dict(manifest)
    log = read_session(messages_path, result, "messages", "Cline")
    if log is None:
        return result
    conversation = BlockConversation()
    model = provider = None
    for entry in log["messages"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("role"), str):
            result.skipped["bad_record"] += 1
            continue
        counted = _metrics(entry)
        if counted:
            model, provider = counted.get("model", model), counted.get("provider", provider)
        conversation.add(
            entry["role"],
            entry.get("content"),
            created_at=parse_time(entry.get("ts")),
            usage=counted,
            extra=rest(entry, ("role", "content", "ts")),
        )
    messages = conversation.messages
    if not messages:
        result.warnings.append(f"{path}: no messages in this Cline session")
        return result
    session_id = (
        as_str(manifest.get("session_id")) or as_str(log.get("sessionId")) or manifest_path.stem
    )
    meta = as_dict(manifest.get("metadata"))
    extra: dict[str, Any] = {"manifest": rest(manifest, ("session_id", "cwd", "workspace_root"))}
    extra["messages_file"] = rest(log, ("messages", "sessionId"))
    forked = as_str(as_dict(meta.get("fork")).get("forkedFromSessionId"))
    if forked:
        extra["forked_from"] = str(session_thread_id(NAME, forked))
    ends = (parse_time(log.get("updated_at")), parse_time(manifest.get("ended_at")))
    stamps = [t for t in (*ends, *(m.created_at for m in messages)) if t is not None]
    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    result.threads.append(
        build_thread(
            session_thread_id(NAME, session_id),
            messages,
            source={"agent": NAME, "file": path.name, "session_id": session_id},
            title=clip_title(as_str(meta.get("title")) or first_user),
            created_at=parse_time(manifest.get("started_at")),
            last_activity_at=max(stamps) if stamps else None,
            extra=extra,
            cwd=as_str(manifest.get("cwd")),
            workspace_root=as_str(manifest.get("workspace_root")),
            model=model or as_str(manifest.get("model")),
            provider=provider or as_str(manifest.get("provider")),
        )
    )
    return result


def detect(path: Path) -> bool:
    """A session manifest: ``<session_id>.json`` holding ``session_id`` and
    ``messages_path``, or a ``<session_id>.messages.json`` with no manifest beside it."""
    if path.suffix != ".json":
        return False
    if path.name.endswith(MESSAGES):
        data = head(path, 4096)
        return (
            not _pair(path)[0].is_file()
            and data.lstrip().startswith(b"{")
            and b'"sessionId"' in data
            and b'"messages"' in data
        )
    data = head(path, 8192)
    return data.lstrip().startswith(b"{") and b'"session_id"' in data and b'"messages_path"' in data


def discover(path: Path) -> list[Path]:
    """Session manifests (and messages files without one) under ``path``, or the file."""
    return find_files(path, ["*.json"], detect)


def unit_of(path: Path) -> Path | None:
    """The manifest of a session whose messages file changed (the messages file itself when
    it has no manifest); the manifest for itself; None for other files."""
    if path.name.endswith(MESSAGES):
        manifest = _pair(path)[0]
        return manifest if manifest.is_file() else path
    if path.suffix == ".json" and _SESSION_ID.match(path.stem):
        return path
    return None


def default_paths() -> list[Path]:
    """``$CLINE_DATA_DIR/sessions`` when set, else ``$CLINE_DIR/data/sessions``, by default
    ``~/.cline/data/sessions`` (Linux, macOS; Cline's own two variables)."""
    data = os.environ.get("CLINE_DATA_DIR")
    if data:
        return [Path(data).expanduser() / "sessions"]
    configured = os.environ.get("CLINE_DIR")
    root = Path(configured).expanduser() if configured else home() / ".cline"
    return [root / "data" / "sessions"]


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Cline CLI",
    what="session",
    expects="expected a Cline session manifest (session_id, messages_path) in a .json file",
    order=84,
    suffixes=(".json",),
    unit_of=unit_of,
    live="rewrite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "lineage"),
)
