"""Two small agents of our own making, written as a third party would write an importer
(issue 28 item 2): only the public contract of loomsync.importers.common is used.

- ``folio``: a session is a folder ``<name>.folio/`` holding ``session.json`` (``{"id",
  "cwd"}``) and ``turns.json`` (a list of ``{"role", "content"}``, rewritten whole on each
  turn). The unit is ``session.json``; ``turns.json`` is its sibling (``unit_of``).
  ``live="rewrite"``. Its usual folder is ``$FOLIO_HOME`` (default ``~/.folio``).
- ``sqlfake``: a SQLite store ``<name>.sqlfake`` in WAL mode, table ``turns(id, role,
  content)``; ``-wal``/``-shm`` map to it; read read-only; ``live="sqlite"``.

tests/client/test_agents_door.py copies this file into a throwaway distribution (a module
``loomsync_folio`` and its ``.dist-info`` with an ``entry_points.txt``), so the same code is
what a package installed by pip would bring.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from loomsync.core.document.model import Message
from loomsync.importers.common import (
    Importer,
    ImportResult,
    as_dict,
    as_list,
    as_str,
    build_thread,
    name_thread_id,
    read_json,
)

UNIT = "session.json"
TURNS = "turns.json"


def folio_unit(path: Path) -> Path | None:
    """``session.json`` of the session folder ``path`` is in, or None (not a folio file)."""
    if path.parent.name.endswith(".folio") and path.name in (UNIT, TURNS):
        return path.parent / UNIT
    return None


def folio_parse(path: Path) -> ImportResult:
    """Read a folio session (its ``session.json`` and ``turns.json``)."""
    result = ImportResult()
    meta = as_dict(read_json(path, result))
    turns = (
        as_list(read_json(path.parent / TURNS, result)) if (path.parent / TURNS).exists() else []
    )
    messages = [
        Message(role=t["role"], content=str(t.get("content", "")))
        for t in turns
        if isinstance(t, dict) and t.get("role") in ("user", "assistant")
    ]
    if messages:
        session = as_str(meta.get("id")) or path.parent.name
        result.threads.append(
            build_thread(
                name_thread_id("folio", session),
                messages,
                source={"agent": "folio", "file": path.parent.name},
                cwd=as_str(meta.get("cwd")),
                workspace_root=as_str(meta.get("cwd")),
            )
        )
    return result


def folio_detect(path: Path) -> bool:
    """``session.json`` inside a ``*.folio`` folder."""
    return path.is_file() and folio_unit(path) == path


def folio_discover(path: Path) -> list[Path]:
    """The sessions under ``path`` (their ``session.json``), or ``[path]`` for one."""
    if path.is_file():
        return [path] if folio_detect(path) else []
    return sorted(p for p in path.rglob(UNIT) if folio_detect(p)) if path.is_dir() else []


def folio_home() -> list[Path]:
    """``$FOLIO_HOME``, default ``~/.folio``."""
    return [Path(os.environ.get("FOLIO_HOME") or Path.home() / ".folio")]


FOLIO = Importer(
    name="folio",
    default_paths=folio_home,
    detect=folio_detect,
    discover=folio_discover,
    parse=folio_parse,
    agent="Folio",
    what="session folder",
    order=90,
    suffixes=(UNIT, TURNS),
    unit_of=folio_unit,
    live="rewrite",
    watch_by_default=False,
    records=("messages",),
)


def sqlfake_unit(path: Path) -> Path | None:
    """The ``.sqlfake`` database of a file of it (itself, its ``-wal`` or ``-shm``)."""
    name = path.name.removesuffix("-wal").removesuffix("-shm")
    return path.with_name(name) if name.endswith(".sqlfake") else None


def sqlfake_parse(path: Path) -> ImportResult:
    """Every turn of the database, read read-only (never a side file next to it)."""
    result = ImportResult()
    try:
        db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT role, content FROM turns ORDER BY id").fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        result.warnings.append(f"{path}: {exc}")
        return result
    messages = [Message(role=role, content=content) for role, content in rows]
    if messages:
        result.threads.append(
            build_thread(name_thread_id("sqlfake", path.name), messages, source={"file": path.name})
        )
    return result


def sqlfake_detect(path: Path) -> bool:
    """A ``.sqlfake`` file that starts like a SQLite database."""
    if path.suffix != ".sqlfake" or not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


def sqlfake_discover(path: Path) -> list[Path]:
    """The databases under ``path``, or ``[path]`` for one."""
    if path.is_file():
        return [path] if sqlfake_detect(path) else []
    return sorted(p for p in path.rglob("*.sqlfake") if sqlfake_detect(p)) if path.is_dir() else []


SQLFAKE = Importer(
    name="sqlfake",
    default_paths=lambda: [],
    detect=sqlfake_detect,
    discover=sqlfake_discover,
    parse=sqlfake_parse,
    agent="SQLFake",
    what="database",
    order=91,
    suffixes=(".sqlfake", ".sqlfake-wal", ".sqlfake-shm"),
    unit_of=sqlfake_unit,
    live="sqlite",
    records=("messages",),
)


def write_folio(folder: Path, session: str, turns: list[dict[str, str]], cwd: str = "/w") -> Path:
    """Write (or rewrite, as the agent does) a folio session; returns its ``session.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    unit = folder / UNIT
    if not unit.exists():
        unit.write_text(json.dumps({"id": session, "cwd": cwd}))
    (folder / TURNS).write_text(json.dumps(turns))
    return unit
