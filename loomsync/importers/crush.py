"""Charmbracelet Crush: ``<project>/.crush/crush.db``, an SQLite database in WAL mode that
Crush holds open while it runs (format: :mod:`loomsync.importers.gostore`).

Crush keeps one database per project, inside the project (``options.data_directory`` in
``crush.json`` can move it). It lists the projects it has opened in
``$CRUSH_GLOBAL_DATA/projects.json`` (default ``$XDG_DATA_HOME/crush``, else
``~/.local/share/crush``; ``%LOCALAPPDATA%\\crush`` on Windows) as
``{"projects": [{"path", "data_dir", …}]}``: :func:`default_paths` reads that list (learned
from Crush's source; the corpus holds no projects.json). Two schema versions are in the
corpus: goose v5 (2025-08) and v8 (2026: ``sessions.todos``, ``messages.is_summary_message``,
``read_files``); both timestamps in Unix seconds although the DDL says milliseconds.

``watch`` follows it live (``live="sqlite"``): a change of ``crush.db`` or ``crush.db-wal``
re-reads the database from a private copy; :func:`read_changed` rebuilds only the sessions
changed since a mark.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from loomsync.importers import gostore, places
from loomsync.importers.common import Importer, ImportResult, find_files

NAME = "crush"
FLAVOR = gostore.Flavor(name=NAME, agent="Crush", folder=".crush", database="crush.db")


def parse(path: Path) -> ImportResult:
    """Every session of the Crush database ``path`` with messages, one thread each
    (``T-<session uuid>``); see :mod:`loomsync.importers.gostore`. Never raises for bad
    input: an unreadable or foreign database gives a warning."""
    return gostore.read(path, FLAVOR).result


def read_changed(path: Path, since: dict[str, Any] | None) -> gostore.Capture:
    """The threads of the sessions changed at or after the mark ``since`` (all when None)
    and the next mark (:func:`loomsync.importers.gostore.read`)."""
    return gostore.read(path, FLAVOR, since)


def detect(path: Path) -> bool:
    """A ``crush.db`` (or any SQLite file) holding Crush's tables, including its
    ``messages.provider`` column, which OpenCode-Go lacks."""
    if not gostore.is_store(path):
        return False
    return path.name == FLAVOR.database or gostore.has_column(path, "messages", "provider")


def discover(path: Path) -> list[Path]:
    """``crush.db`` files under ``path`` (any depth, ``.crush`` folders included), or the file."""
    return find_files(path, ["crush.db", "*.db"], detect)


def _global_data() -> Path:
    configured = os.environ.get("CRUSH_GLOBAL_DATA")
    if configured:
        return Path(configured).expanduser()
    return (places.appdata(local=True) if sys.platform == "win32" else places.data_home()) / "crush"


def default_paths() -> list[Path]:
    """The data folders of the projects Crush lists in its ``projects.json`` (they may no
    longer exist), and the global data folder itself; [] entries are never invented."""
    root = _global_data()
    found: list[Path] = []
    try:
        listed = json.loads((root / "projects.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        listed = {}
    projects = listed.get("projects") if isinstance(listed, dict) else None
    for project in projects if isinstance(projects, list) else []:
        if not isinstance(project, dict):
            continue
        data_dir, where = project.get("data_dir"), project.get("path")
        if isinstance(data_dir, str) and data_dir:
            folder = Path(data_dir).expanduser()
            if not folder.is_absolute() and isinstance(where, str):
                folder = Path(where) / folder
            found.append(folder)
        elif isinstance(where, str) and where:
            found.append(Path(where) / FLAVOR.folder)
    return [*dict.fromkeys(found), root]


def unit_of(path: Path) -> Path | None:
    """``crush.db`` for a change of ``crush.db``, ``crush.db-wal`` or ``crush.db-journal``."""
    return gostore.unit_of(path, FLAVOR)


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Crush",
    what="session database",
    expects="expected an SQLite database with Crush's sessions and messages tables (.crush/crush.db)",
    order=40,
    suffixes=(".db", ".db-wal"),
    unit_of=unit_of,
    live="sqlite",
    watch_by_default=False,
    records=("messages", "tool calls", "subagents"),
)
