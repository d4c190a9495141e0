"""The sync queue's file, ``queue.sqlite3`` in the sync folder: one row per (thread, operation),
so that adding, changing or removing an entry touches that row only (a B-tree lookup and a page
or two of the write-ahead log), not the whole queue (docs/client.md, "The sync queue").

- ``entries(seq INTEGER PRIMARY KEY, thread_id, op, entry)``, ``UNIQUE(thread_id, op)``;
  ``entry`` is the :class:`~loomsync.sync.queue.PendingEntry` as JSON, ``seq`` the order of
  first enqueue (an update keeps its row and so its place).
- WAL, ``synchronous=FULL``: a commit is durable when it returns (one fsync of the log), as
  the whole-file rewrite of ``pending.json`` was; kill -9 at any instant leaves the last
  committed state. Every change runs in ``BEGIN IMMEDIATE`` (one writer at a time across
  threads and processes; readers of other processes are not blocked).
- A file that is not a database, is damaged or cannot be opened raises :class:`QueueDamaged`
  (the queue then sets it aside and rebuilds it from the store); a lock held past the timeout
  raises :class:`~loomsync.errors.StoreLockedError`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

from loomsync.errors import StoreLockedError
from loomsync.store.files import ensure_dir

T = TypeVar("T")

SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS entries ("
    " seq INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, op TEXT NOT NULL,"
    " entry TEXT NOT NULL, UNIQUE (thread_id, op))"
)
#: SQLite result codes of a lock held by someone else (retried until the timeout).
_BUSY = {"SQLITE_BUSY", "SQLITE_LOCKED"}
#: The files SQLite keeps beside the database.
SIDE_FILES = ("-wal", "-shm", "-journal")


class QueueDamaged(Exception):
    """The queue database cannot be used: not a database, damaged, or cannot be opened.

    Attributes:
        reason: one line (SQLite's message).
        unreadable: it could not be opened at all (a folder in its place, no permission).
    """

    def __init__(self, reason: str, *, unreadable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unreadable = unreadable


class QueueFile:
    """One connection to ``queue.sqlite3``, shared by the threads of a process (opened again
    after a fork), created with its schema on first use.

    Args:
        path: the database file.
        timeout: seconds to wait for another writer's lock.
        on_open: called with the new connection each time one is opened (migrations).
    """

    def __init__(
        self,
        path: Path,
        *,
        timeout: float,
        on_open: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self.path = path
        self._timeout = timeout
        self._on_open = on_open
        self._db: sqlite3.Connection | None = None
        self._pid = 0
        self._inherited: list[sqlite3.Connection] = []
        self._guard = threading.RLock()

    def _connection(self) -> sqlite3.Connection:
        if self._db is not None and self._pid == os.getpid():
            return self._db
        if self._db is not None:  # inherited through fork(): never used nor closed here (a
            self._inherited.append(self._db)  # close could checkpoint under the parent's feet)
        self._db = None
        ensure_dir(self.path.parent)
        db = sqlite3.connect(
            self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                db.execute("BEGIN IMMEDIATE")
                db.execute(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)  # queued patches are the user's data
            if self._on_open is not None:
                self._on_open(db)
        except BaseException:
            db.close()
            raise
        self._db, self._pid = db, os.getpid()
        return db

    def run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work(connection)`` in one ``BEGIN IMMEDIATE`` transaction, committed if it returns,
        rolled back if it raises.

        Raises:
            QueueDamaged: the file is not a database, is damaged or cannot be opened (the
                connection is closed; nothing was changed).
            StoreLockedError: another writer held the lock for longer than the timeout.
        """
        with self._guard:
            try:
                db = self._connection()
                db.execute("BEGIN IMMEDIATE")
                try:
                    result = work(db)
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
                return result
            except sqlite3.DatabaseError as exc:
                name = getattr(exc, "sqlite_errorname", "")
                if name in _BUSY:
                    raise StoreLockedError(f"{self.path} is locked by another process") from None
                self.close()
                reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
                raise QueueDamaged(reason, unreadable=name == "SQLITE_CANTOPEN") from None

    def close(self) -> None:
        """Close the connection (opened again when next needed)."""
        with self._guard:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None

    @contextlib.contextmanager
    def closed(self) -> Iterator[None]:
        """Hold the connection closed (while the file is moved aside)."""
        with self._guard:
            self.close()
            yield

    def remove_side_files(self) -> None:
        """Remove the write-ahead log and shared-memory files of a database set aside (they
        belong to the damaged file: never replayed into a new one)."""
        for suffix in SIDE_FILES:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                Path(f"{self.path}{suffix}").unlink()


__all__ = ["SIDE_FILES", "QueueDamaged", "QueueFile"]
