"""The session store Charmbracelet Crush inherited from the original Go OpenCode
(opencode-ai/opencode): one SQLite database per project, read by :mod:`.crush` and
:mod:`.opencode_go`.

Tables (migrations by pressly/goose; ``goose_db_version`` says which):

- ``sessions(id uuid, parent_session_id, title, message_count, prompt_tokens,
  completion_tokens, cost, updated_at, created_at [, summary_message_id] [, summary,
  summarized_at] [, todos])``: token counts and cost are per-session totals only;
  ``parent_session_id`` links a sub-agent ("agent" tool) or title session to its parent.
- ``messages(id uuid, session_id, role user|assistant|tool, parts JSON, model [, provider],
  created_at, updated_at, finished_at [, is_summary_message])``.
- ``parts``: a JSON array of ``{type, data}``: ``text{text}``, ``reasoning{thinking,
  signature?, started_at?, finished_at?}``, ``image_url{url, detail}``, ``binary{Path,
  MIMEType, Data (base64)}`` (Go field names), ``tool_call{id, name, input (a JSON
  *string*), type, provider_executed?, finished}``, ``tool_result{tool_call_id, name,
  content, metadata (JSON string), is_error}``, ``finish{reason, time, message?, details?}``.
- ``files`` (every version of every file the agent read or wrote), ``read_files`` (Crush
  v8), ``logs`` (OpenCode-Go goose v2: the app's log lines).

Timestamps are Unix **seconds** in integer columns although the DDL comments say
milliseconds (both the corpus' Crush databases); the oldest OpenCode-Go schema (goose v2)
writes ISO-8601 text instead. :func:`go_time` reads all three (milliseconds by size).

Mapping: one thread per session (``T-<session uuid>``); user rows → user messages (a pasted
``text/*`` file is appended to the text, other attachments are kept under the message's
``extra``); assistant rows → assistant messages with their ``tool_call`` parts as tool
calls, ``reasoning`` and ``finish`` under ``extra``; each ``tool_result`` part of a tool row
→ a tool message linked by ``tool_call_id``. Per-message token usage is not recorded by
these agents (only session totals, kept as ``metadata.extra.session_usage``), so messages
carry no ``usage``. The working folder is the folder holding ``.crush``/``.opencode``; git
is not recorded. Files keep their path, version and times (not their content: a copy of the
project's files, not the conversation); logs of a session are kept whole.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Thread
from loomsync.importers import goparts, sqlite
from loomsync.importers.common import (
    ImportResult,
    as_str,
    build_thread,
    clip_title,
    session_thread_id,
)

SESSION_COLUMNS = (
    "id",
    "parent_session_id",
    "title",
    "message_count",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "updated_at",
    "created_at",
    "summary_message_id",
    "summary",
    "summarized_at",
    "todos",
)
FILE_COLUMNS = (
    "id",
    "session_id",
    "path",
    "content",
    "version",
    "is_new",
    "created_at",
    "updated_at",
)
LOG_COLUMNS = (
    "id",
    "session_id",
    "timestamp",
    "level",
    "message",
    "attributes",
    "created_at",
    "updated_at",
)

SCHEMA = sqlite.Schema(
    tables={
        "sessions": SESSION_COLUMNS,
        "messages": goparts.MESSAGE_COLUMNS,
        "files": FILE_COLUMNS,
        "read_files": ("session_id", "path", "read_at"),
        "logs": LOG_COLUMNS,
    },
    ignored=("goose_db_version",),
)


@dataclass(frozen=True)
class Flavor:
    """Which agent wrote the store: importer ``name``, ``agent`` name, the project folder it
    keeps the database in (``.crush``) and the database's file name (``crush.db``)."""

    name: str
    agent: str
    folder: str
    database: str


@dataclass
class Capture:
    """What :func:`read` found: the ``result`` and the ``mark`` to pass as ``since`` next
    time (the largest ``updated_at`` of sessions and messages)."""

    result: ImportResult = field(default_factory=ImportResult)
    mark: dict[str, Any] = field(default_factory=dict)


def is_store(path: Path) -> bool:
    """True when ``path`` is an SQLite database with this store's ``sessions`` and
    ``messages`` tables and a ``parts`` column (:func:`loomsync.importers.sqlite.peek`)."""
    found = sqlite.peek(path)
    return "sessions" in found and "parts" in found.get("messages", [])


def has_column(path: Path, table: str, column: str) -> bool:
    """True when the database ``path`` has ``table.column`` (Crush's ``messages.provider``
    tells its store from OpenCode-Go's)."""
    return column in sqlite.peek(path).get(table, [])


class _Session:
    """Builds the thread of one session from its rows."""

    def __init__(self, flavor: Flavor, path: Path, session: dict[str, Any]) -> None:
        self.flavor = flavor
        self.path = path
        self.session = session
        self.rows = goparts.Messages(as_str(session.get("summary_message_id")))

    def add(self, row: dict[str, Any], result: ImportResult) -> None:
        """Add the message(s) of one ``messages`` row."""
        self.rows.add(row, result)

    def thread(self, files: list[dict[str, Any]], logs: list[dict[str, Any]]) -> Thread:
        row = self.session
        session_id = str(row["id"])
        extra: dict[str, Any] = {}
        parent = as_str(row.get("parent_session_id"))
        if parent:
            extra["parent_thread_id"] = str(session_thread_id(self.flavor.name, parent))
        usage = {
            "input_tokens": row.get("prompt_tokens"),
            "output_tokens": row.get("completion_tokens"),
            "cost_usd": row.get("cost"),
        }
        extra["session_usage"] = {k: v for k, v in usage.items() if v is not None}
        for key in ("summary", "summary_message_id"):
            if row.get(key):
                extra[key] = row[key]
        if row.get("summarized_at"):
            extra["summarized_at"] = goparts.iso(goparts.go_time(row["summarized_at"]))
        if row.get("todos"):
            extra["todos"] = goparts.loads(row["todos"])
        extra.update(sqlite.unknown(row, SESSION_COLUMNS))
        if files:
            extra["files"] = [
                {k: v for k, v in f.items() if k not in ("content", "session_id")}
                | {"created_at": goparts.iso(goparts.go_time(f.get("created_at")))}
                | {"updated_at": goparts.iso(goparts.go_time(f.get("updated_at")))}
                for f in files
            ]
        if logs:
            extra["logs"] = [{k: v for k, v in log.items() if k != "session_id"} for log in logs]
        model, provider = self.rows.models[-1] if self.rows.models else (None, None)
        cwd = _project_of(self.path, self.flavor)
        users = (m.content for m in self.rows.messages if m.role == "user")
        return build_thread(
            session_thread_id(self.flavor.name, session_id),
            self.rows.messages,
            source={
                "agent": self.flavor.name,
                "file": self.path.name,
                "session_id": session_id,
            },
            title=clip_title(as_str(row.get("title")))
            or next((t for u in users if (t := clip_title(u))), None),
            created_at=goparts.go_time(row.get("created_at")),
            last_activity_at=goparts.go_time(row.get("updated_at")),
            extra=extra,
            workspace_root=cwd,
            cwd=cwd,
            model=model,
            provider=provider,
        )


def read(path: Path, flavor: Flavor, since: dict[str, Any] | None = None) -> Capture:
    """Read a store into one thread per session that has messages, from a private copy
    (:func:`loomsync.importers.sqlite.snapshot`).

    ``since``: a previous :attr:`Capture.mark`; only the sessions with a session or message
    row updated at or after it are rebuilt (each whole, so identical to a full read's). A
    database that cannot be read gives a warning, never an exception; a newer schema gives
    one warning and is read as far as it is understood.
    """
    capture = Capture()
    sqlite.read_into(
        capture.result,
        path,
        flavor.agent,
        lambda connection: _read(connection, path, flavor, since, capture),
    )
    return capture


def _read(
    connection: sqlite3.Connection,
    path: Path,
    flavor: Flavor,
    since: dict[str, Any] | None,
    capture: Capture,
) -> None:
    result = capture.result
    present = sqlite.tables(connection)
    if not {"sessions", "messages"} <= present:
        result.warnings.append(f"{path}: not a {flavor.agent} database (no sessions/messages)")
        return
    note = sqlite.schema_note(connection, SCHEMA)
    if note:
        result.warnings.append(f"{path}: {note}")
    capture.mark = {
        "sessions": sqlite.high_water(connection, "sessions", "updated_at"),
        "messages": sqlite.high_water(connection, "messages", "updated_at"),
    }
    wanted: set[Any] | None = None
    if since is not None:
        wanted = sqlite.changed_keys(
            connection, "messages", "session_id", "updated_at", since.get("messages")
        ) | sqlite.changed_keys(connection, "sessions", "id", "updated_at", since.get("sessions"))
    messages: dict[Any, list[dict[str, Any]]] = {}
    for row in sqlite.rows(connection, "messages", order=("created_at",)):
        messages.setdefault(row.get("session_id"), []).append(row)
    files = _by_session(sqlite.rows(connection, "files", order=("created_at", "path", "version")))
    logs = _by_session(sqlite.rows(connection, "logs", order=("timestamp",)))
    for session in sqlite.rows(connection, "sessions", order=("created_at", "id")):
        if not session.get("id") or (wanted is not None and session["id"] not in wanted):
            continue
        builder = _Session(flavor, path, session)
        for row in messages.get(session["id"], []):
            builder.add(row, result)
        if builder.rows.messages:
            result.threads.append(
                builder.thread(files.get(session["id"], []), logs.get(session["id"], []))
            )


def _by_session(found: list[dict[str, Any]]) -> dict[Any, list[dict[str, Any]]]:
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for row in found:
        grouped.setdefault(row.get("session_id"), []).append(
            {k: sqlite.plain(v) for k, v in row.items()}
        )
    return grouped


def _project_of(path: Path, flavor: Flavor) -> str | None:
    """The project folder of the database ``path``: the folder holding ``.crush`` /
    ``.opencode``, absolute and with links resolved whatever form ``path`` was given in
    (``loomsync import ../x`` and ``loomsync import /abs/x`` give one workspace; newcomer
    finding 2); None for a database kept elsewhere (moved by ``data.directory``)."""
    folder = path.resolve().parent
    return str(folder.parent) if folder.name == flavor.folder else None


def unit_of(path: Path, flavor: Flavor) -> Path | None:
    """The database a changed file belongs to: ``crush.db`` for itself and its ``-wal`` /
    ``-journal``; None for any other file (:func:`loomsync.importers.sqlite.unit_of`)."""
    return sqlite.unit_of(path, (flavor.database,))


__all__ = ["Capture", "Flavor", "has_column", "is_store", "read", "unit_of"]
