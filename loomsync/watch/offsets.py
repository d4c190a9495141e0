"""Where ``loomsync watch`` stopped in each file it read, kept across restarts (issue 17 item 1).

``$XDG_STATE_HOME/loomsync/watch/offsets.sqlite3``, one row per file: its identity (device and
inode), the size and modification time it had, the byte offset just past the last complete line imported, a SHA-256
of the (up to) 64 bytes before that offset, the format it was read with, and whether it was
found not to be a session (then ignored, and said once). Each row is written in its own
transaction (SQLite: atomic and, in WAL mode, a kill -9 keeps every committed row), after the
threads it led to were saved, so a restart never skips a line: at worst it reads again lines
whose messages are stored already, which changes nothing.

A file whose identity changed, that is shorter than its offset, or whose bytes before the offset
no longer hash the same was replaced or truncated: it is read again from its start.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Bytes before the offset whose digest recognises the same file.
TAIL_BYTES = 64

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    device INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    tail TEXT NOT NULL,
    format TEXT,
    ignored INTEGER NOT NULL DEFAULT 0
)
"""


@dataclass(frozen=True, slots=True)
class Offset:
    """One file's row: see the module docstring. ``mtime_ns`` tells a whole-file format's
    rewrite of the same size (Gemini CLI JSON, Aider Markdown are read whole on a change)."""

    path: str
    device: int
    inode: int
    size: int
    mtime_ns: int
    offset: int
    tail: str
    format: str | None
    ignored: bool = False

    def same_file(self, stat: os.stat_result) -> bool:
        """True if ``stat`` is of the file this row was written for (same device and inode)."""
        return (self.device, self.inode) == (stat.st_dev, stat.st_ino)


def _offset(row: Any) -> Offset:
    path, device, inode, size, mtime_ns, offset, tail, format, ignored = row
    return Offset(path, device, inode, size, mtime_ns, offset, tail, format, bool(ignored))


def tail_digest(handle: IO[bytes], offset: int) -> str:
    """SHA-256 (hex) of the up to :data:`TAIL_BYTES` bytes before ``offset`` of an open file."""
    start = max(0, offset - TAIL_BYTES)
    handle.seek(start)
    return hashlib.sha256(handle.read(offset - start)).hexdigest()


class Offsets:
    """The offsets database (created on first use). Not shared between threads."""

    def __init__(self, path: Path) -> None:
        """Open (creating) the database at ``path``."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, path: str) -> Offset | None:
        """The row of ``path``, or None."""
        row = self._db.execute("SELECT * FROM files WHERE path = ?", (path,)).fetchone()
        return None if row is None else _offset(row)

    def all(self) -> dict[str, Offset]:
        """Every row, by path (read once at start-up)."""
        rows = self._db.execute("SELECT * FROM files").fetchall()
        return {row[0]: _offset(row) for row in rows}

    def put(self, offset: Offset) -> None:
        """Write one row (its own transaction)."""
        self._db.execute(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                offset.path,
                offset.device,
                offset.inode,
                offset.size,
                offset.mtime_ns,
                offset.offset,
                offset.tail,
                offset.format,
                int(offset.ignored),
            ),
        )

    def forget(self, path: str) -> None:
        """Drop the row of a file that is gone."""
        self._db.execute("DELETE FROM files WHERE path = ?", (path,))

    def close(self) -> None:
        """Close the database."""
        self._db.close()


__all__ = ["TAIL_BYTES", "Offset", "Offsets", "tail_digest"]
