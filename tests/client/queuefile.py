"""Reading and writing the rows of a sync queue file (``queue.sqlite3``) as a test sets up a
damaged or hand-edited queue: each row's ``entry`` is the entry's JSON document."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from loomsync.sync.queue import QUEUE_FILE


def queue_path(sync_dir: Path) -> Path:
    """The queue database in ``sync_dir``."""
    return sync_dir / QUEUE_FILE


def queue_rows(sync_dir: Path) -> list[Any]:
    """The stored entries, oldest first, as JSON values (dicts for valid ones)."""
    db = sqlite3.connect(queue_path(sync_dir))
    try:
        return [
            json.loads(text) for (text,) in db.execute("SELECT entry FROM entries ORDER BY seq")
        ]
    finally:
        db.close()


def write_queue_rows(sync_dir: Path, rows: list[Any]) -> None:
    """Replace the stored entries with ``rows`` (any JSON values, in this order)."""
    db = sqlite3.connect(queue_path(sync_dir), isolation_level=None)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM entries")
        for index, row in enumerate(rows):
            key = row if isinstance(row, dict) else {}
            db.execute(
                "INSERT INTO entries (thread_id, op, entry) VALUES (?, ?, ?)",
                (str(key.get("thread_id", index)), str(key.get("op", "")), json.dumps(row)),
            )
        db.execute("COMMIT")
    finally:
        db.close()


def damage_queue(sync_dir: Path, content: bytes) -> Path:
    """Overwrite the queue database with ``content`` (its write-ahead log removed); its path."""
    path = queue_path(sync_dir)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(content)
    return path
