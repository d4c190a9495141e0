"""The original Go OpenCode (opencode-ai/opencode, 2025; it became Crush, and is unrelated to
sst/opencode): ``<project>/.opencode/opencode.db``, SQLite in WAL mode (format:
:mod:`loomsync.importers.gostore`).

Two schema versions are in the corpus: goose v3 (integer Unix-second timestamps,
``sessions.summary_message_id``) and goose v2 (May 2025: ISO-8601 **text** timestamps,
``sessions.summary``/``summarized_at``, and a ``logs`` table whose lines of a session are kept
under ``metadata.extra.logs``). Messages have no ``provider`` column; the provider is not
recorded. OpenCode keeps its database inside each project (``data.directory`` in
``.opencode.json`` can move it) and keeps no list of projects, so :func:`default_paths` is
empty: import or watch a project's ``.opencode`` folder by path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loomsync.importers import gostore
from loomsync.importers.common import Importer, ImportResult, find_files

NAME = "opencode-go"
FLAVOR = gostore.Flavor(
    name=NAME, agent="OpenCode (Go)", folder=".opencode", database="opencode.db"
)


def parse(path: Path) -> ImportResult:
    """Every session of the OpenCode-Go database ``path`` with messages, one thread each
    (``T-<session uuid>``); never raises for bad input."""
    return gostore.read(path, FLAVOR).result


def read_changed(path: Path, since: dict[str, Any] | None) -> gostore.Capture:
    """The threads of the sessions changed at or after ``since`` and the next mark."""
    return gostore.read(path, FLAVOR, since)


def detect(path: Path) -> bool:
    """An SQLite file with the store's tables and no ``messages.provider`` column (Crush's),
    or one named ``opencode.db``."""
    if not gostore.is_store(path):
        return False
    return path.name == FLAVOR.database or not gostore.has_column(path, "messages", "provider")


def discover(path: Path) -> list[Path]:
    """``opencode.db`` files under ``path``, or the file."""
    return find_files(path, ["opencode.db", "*.db"], detect)


def default_paths() -> list[Path]:
    """None: OpenCode-Go keeps its database in each project and lists no projects."""
    return []


def unit_of(path: Path) -> Path | None:
    """``opencode.db`` for a change of it, its ``-wal`` or its ``-journal``."""
    return gostore.unit_of(path, FLAVOR)


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="OpenCode (Go)",
    what="session database",
    expects="expected an SQLite database with OpenCode's sessions and messages tables (.opencode/opencode.db)",
    order=41,
    suffixes=(".db", ".db-wal"),
    unit_of=unit_of,
    live="sqlite",
    records=("messages", "tool calls", "subagents"),
)
