"""Zed's agent panel: threads in ``threads/threads.db`` under Zed's data folder
(``$XDG_DATA_HOME/zed`` = ``~/.local/share/zed`` on Linux, ``~/Library/Application
Support/Zed`` on macOS, ``%LOCALAPPDATA%\\Zed`` on Windows).

**No sample file**: the corpus has none (the one public ``threads.db`` found is under a
non-commercial licence). The format was learned from Zed's source as documented by public
readers of it (``crates/agent/src/db.rs``, ``thread.rs``, ``legacy_thread.rs``, 2025-2026),
and the tests build databases that follow it:

- ``threads(id TEXT PRIMARY KEY, summary, updated_at (RFC 3339), data_type ("json" or
  "zstd"), data BLOB [, parent_id] [, folder_paths, folder_paths_order])``; ``data`` is the
  thread as JSON, zstd-compressed in current versions (decompressed with ``zstandard``).
- Thread JSON ``0.3.0``: ``{version, title, updated_at, messages, detailed_summary,
  initial_project_snapshot{worktree_snapshots[{worktree_path, git_state{remote_url,
  head_sha, current_branch, diff}}], timestamp}, cumulative_token_usage, request_token_usage
  {<user message id>: TokenUsage}, model{provider, model}, profile, imported,
  subagent_context{parent_thread_id, depth}, …}``; a message is ``{"User": {id, content:
  [{"Text": s} | {"Mention": {uri, content}} | {"Image": …}]}}``, ``{"Agent": {content:
  [{"Text": s} | {"Thinking": {text, signature}} | {"RedactedThinking": s} | {"ToolUse":
  {id, name, raw_input, input, is_input_complete}}], tool_results: {<id>: {tool_use_id,
  tool_name, is_error, content: "…" | {"Text": s} | {"Image": …}, output}}}}`` or
  ``"Resume"``. ``TokenUsage`` is ``{input_tokens, output_tokens,
  cache_creation_input_tokens, cache_read_input_tokens}`` (zeros omitted).
- Legacy JSON ``0.2.0`` (and ``0.1.0``): ``{version, summary, updated_at, messages: [{id, role,
  segments[{type: text|thinking, text}], tool_uses[{id, name, input}], tool_results
  [{tool_use_id, is_error, content, output}], context}], cumulative_token_usage,
  request_token_usage: [TokenUsage…], model, …}``.

Mapping: one thread per row (``T-<id>``): user and agent messages, each ``ToolUse`` a tool
call followed by a tool message with its result; a user message's ``request_token_usage``
(what its last model request consumed) → the usage of the last agent message answering it;
thinking under the message's ``extra``; ``Resume`` → a system message marking the resume;
the first worktree → ``cwd`` and git; ``subagent_context.parent_thread_id`` / ``parent_id`` →
``metadata.extra.parent_thread_id``; everything else under ``metadata.extra``. Zed keeps no
per-message times: messages carry none, the thread has ``updated_at`` (and the project
snapshot's time as ``created_at``).
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import zstandard

from loomsync.core.document import jsontext
from loomsync.core.document.model import Thread
from loomsync.importers import places, sqlite, zed_messages
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    build_thread,
    clip_title,
    find_files,
    parse_time,
    session_thread_id,
)

NAME = "zed"
COLUMNS = (
    "id",
    "parent_id",
    "summary",
    "updated_at",
    "data_type",
    "data",
    "folder_paths",
    "folder_paths_order",
)
SCHEMA = sqlite.Schema(tables={"threads": COLUMNS})
_MAPPED = (
    "version",
    "title",
    "summary",
    "updated_at",
    "messages",
    "initial_project_snapshot",
    "request_token_usage",
    "model",
    "subagent_context",
)


def decode(data_type: Any, data: Any) -> Any:
    """The thread JSON of a row: ``data`` decompressed when ``data_type`` is ``zstd``.

    Raises:
        ValueError: not decodable (unknown ``data_type``, damaged zstd frame, not JSON).
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if not isinstance(raw, bytes):
        raise ValueError("no data")
    if data_type == "zstd":
        try:
            raw = zstandard.ZstdDecompressor().decompressobj().decompress(raw)
        except zstandard.ZstdError as exc:
            raise ValueError(f"damaged zstd data ({exc})") from exc
    elif data_type != "json":
        raise ValueError(f"unknown data_type {data_type!r}")
    try:
        return jsontext.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, RecursionError) as exc:
        raise ValueError("not JSON") from exc


def _thread(
    path: Path, row: dict[str, Any], document: dict[str, Any], result: ImportResult
) -> Thread | None:
    model = as_dict(document.get("model"))
    current = any(
        item == "Resume" or (isinstance(item, dict) and ("User" in item or "Agent" in item))
        for item in as_list(document.get("messages"))
    )
    if current or document.get("version") == "0.3.0":
        messages = zed_messages.current(document, model, result)
    else:
        messages = zed_messages.legacy(document, result)
    if not messages:
        return None
    thread_id = str(row["id"])
    extra = {
        k: v for k, v in document.items() if k not in _MAPPED and v not in (None, False, {}, [])
    }
    if document.get("version"):
        extra["format_version"] = document["version"]
    if isinstance(document.get("request_token_usage"), list):
        extra["request_token_usage"] = document["request_token_usage"]
    parent = as_str(as_dict(document.get("subagent_context")).get("parent_thread_id")) or as_str(
        row.get("parent_id")
    )
    if parent:
        extra["parent_thread_id"] = str(session_thread_id(NAME, parent))
        extra["subagent_context"] = document.get("subagent_context")
    for key in ("folder_paths", "folder_paths_order"):
        if row.get(key):
            extra[key] = row[key]
    extra.update(sqlite.unknown(row, COLUMNS))
    snapshot = as_dict(document.get("initial_project_snapshot"))
    worktrees = [as_dict(w) for w in as_list(snapshot.get("worktree_snapshots"))]
    first = worktrees[0] if worktrees else {}
    git = as_dict(first.get("git_state"))
    if worktrees:
        extra["worktrees"] = worktrees
    root = as_str(first.get("worktree_path"))
    sha, branch = as_str(git.get("head_sha")), as_str(git.get("current_branch"))
    title = (
        as_str(document.get("title"))
        or as_str(document.get("summary"))
        or as_str(row.get("summary"))
    )
    return build_thread(
        session_thread_id(NAME, thread_id),
        messages,
        source={"agent": NAME, "file": path.name, "thread_id": thread_id},
        title=clip_title(title),
        created_at=parse_time(snapshot.get("timestamp")),
        last_activity_at=parse_time(document.get("updated_at"))
        or parse_time(row.get("updated_at")),
        extra=extra,
        workspace_root=root,
        cwd=root,
        git_branch=branch,
        git_initial_branch=branch,
        git_remote_url=as_str(git.get("remote_url")),
        git_initial_commit_sha=sha,
        git_current_commit_sha=sha,
        git_commits=[sha] if sha else [],
        provider=as_str(model.get("provider")),
        model=as_str(model.get("model")),
    )


def parse(path: Path) -> ImportResult:
    """Every thread of a Zed ``threads.db`` with messages, read from a private copy; a row
    whose data cannot be decoded is skipped and counted (``bad_record``) with a warning;
    never raises for bad input."""
    result = ImportResult()
    found: list[dict[str, Any]] = []

    def read(connection: sqlite3.Connection) -> None:
        if "threads" not in sqlite.tables(connection):
            result.warnings.append(f"{path}: not a Zed threads database (no threads table)")
            return
        note = sqlite.schema_note(connection, SCHEMA)
        if note:
            result.warnings.append(f"{path}: {note}")
        found.extend(sqlite.rows(connection, "threads", order=("updated_at", "id")))

    sqlite.read_into(result, path, "Zed", read)
    for row in found:
        try:
            document = decode(row.get("data_type"), row.get("data"))
        except ValueError as exc:
            result.skipped["bad_record"] += 1
            result.warnings.append(f"{path}: thread {row.get('id')}: {exc}")
            continue
        if not isinstance(document, dict) or row.get("id") is None:
            result.skipped["bad_record"] += 1
            continue
        thread = _thread(path, row, document, result)
        if thread is not None:
            result.threads.append(thread)
    return result


def detect(path: Path) -> bool:
    """An SQLite database whose ``threads`` table has ``data_type`` and ``data`` columns."""
    found = sqlite.peek(path).get("threads", [])
    return "data_type" in found and "data" in found


def discover(path: Path) -> list[Path]:
    """``threads.db`` files under ``path``, or the file."""
    return find_files(path, ["threads.db", "*.db"], detect)


def default_paths() -> list[Path]:
    """Zed's ``threads`` folder for this OS (``$XDG_DATA_HOME`` and ``%LOCALAPPDATA%``
    honoured)."""
    if sys.platform == "darwin":
        return [places.application_support() / "Zed" / "threads"]
    if sys.platform == "win32":
        return [places.appdata(local=True) / "Zed" / "threads"]
    return [places.data_home() / "zed" / "threads"]


def unit_of(path: Path) -> Path | None:
    """``threads.db`` for a change of it or its ``-wal``/``-journal``."""
    return sqlite.unit_of(path, ("threads.db",))


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Zed",
    what="threads database",
    expects="expected Zed's threads.db (an SQLite database with a threads table of JSON/zstd data)",
    order=45,
    suffixes=(".db", ".db-wal", ".db-journal"),
    unit_of=unit_of,
    live="sqlite",
    watch_by_default=False,
    records=("messages", "tool calls", "usage", "git", "subagents"),
)
