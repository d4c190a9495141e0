"""Helpers for the SQLite importer tests: copies of the corpus databases that a test may
write to the way the agent would, and a look at the side files next to a database."""

from __future__ import annotations

import shutil
import sqlite3
from collections import Counter
from pathlib import Path

from loomsync.core.document.model import Thread
from loomsync.importers.sqlite import side_files


def copy_store(source: Path, folder: Path) -> Path:
    """``source`` copied to ``folder`` under the same folder and file names (a project's
    ``.crush/crush.db`` stays ``…/.crush/crush.db``), its side files left behind."""
    target = folder / source.parent.parent.name / source.parent.name / source.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(source, target)
    return target


def agent(path: Path) -> sqlite3.Connection:
    """A connection as the agent holds one: WAL journal, autocommit off, no busy wait (so a
    lock held by a reader would fail the agent's write at once)."""
    connection = sqlite3.connect(path, timeout=0, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    return connection


def listing(folder: Path) -> list[str]:
    """The names of the files in ``folder``, sorted (to show no side file appeared)."""
    return sorted(p.name for p in folder.iterdir())


def no_side_files(path: Path) -> bool:
    """True when no ``-wal``/``-shm``/``-journal`` sits next to ``path``."""
    return side_files(path) == []


def roles(threads: list[Thread]) -> Counter[str]:
    """Messages by role over ``threads``."""
    return Counter(m.role for t in threads for m in t.messages)


def pairing(threads: list[Thread]) -> tuple[int, int, set[str | None], set[str | None]]:
    """``(tool calls, tool results, call ids without a result, result ids without a call)``."""
    calls = [c.id for t in threads for m in t.messages for c in m.tool_calls or []]
    results = [m.tool_call_id for t in threads for m in t.messages if m.role == "tool"]
    return len(calls), len(results), set(calls) - set(results), set(results) - set(calls)
