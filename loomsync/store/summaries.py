"""The summary index: one SQLite row per thread, so listing 100,000 local threads reads no thread
file (issue 15 item 2: ``loomsync list`` under a second).

``<threads folder>/.index.sqlite3`` (WAL, ``synchronous=NORMAL``: it is a cache, rebuilt from the
files whenever it is lost or unreadable) holds, per thread: its id, the stamp of its file when
the row was made (inode, size, mtime and ctime in ns), the generation and committed end of the
log (:class:`loomsync.store.threadlog.Head`), the listing's sort key (last activity or creation,
in microseconds since the epoch, then id), archived or not, the workspace, and the summary
(redacted JSON, issue 12 item 1).

- Every write of the store calls :meth:`SummaryIndex.record` under the thread's lock: one upsert,
  O(1) whatever the thread's length.
- :meth:`SummaryIndex.list` is one ``SELECT`` with the filters and ``LIMIT``, after a
  ``scandir`` of names (no stat) that finds files added or removed behind the index's back
  (another tool, a copy from a backup, a crash between a write and its ``record``), and a stat
  of the rows it returns, so that a returned row whose file changed since is made again.

What it does not see: a file changed behind its back (not through a store) whose row is not
among those returned keeps its old place until it is returned or written again. The old
``.index.json`` of the one-file-per-thread format is deleted: this index is rebuilt from the
files on first use.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from filelock import FileLock

from loomsync.core.document.model import Thread
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.store.summary import ArchivedFilter, ThreadSummary
from loomsync.store.threadlog import SUFFIX, Head, is_thread_file, thread_id_of

log = logging.getLogger(__name__)

INDEX_NAME = ".index.sqlite3"
#: The index of the one-file-per-thread format (issue 7), replaced by :data:`INDEX_NAME`.
OLD_INDEX_NAME = ".index.json"
SCHEMA_VERSION = 2
BUSY_TIMEOUT_SECONDS = 10.0
#: Rows made in one transaction while the index catches up with files it has not seen.
BATCH = 500
#: A folder stamp is trusted only once it is this old (ns): file times are coarser than a
#: nanosecond, so a file created just after the stat may leave the folder's times unchanged.
SETTLED_NS = 2_000_000_000
Stamp = tuple[int, int, int, int]
#: A row's place in a listing: (activity in microseconds since the epoch, id).
SortKey = tuple[int, str]
#: Reads one thread for the index: its head and the thread (its messages need not be loaded:
#: the count comes from the head); None when the file is gone or not a valid thread log.
Reader = Callable[[str], "tuple[Head, Thread] | None"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SCHEMA = """
CREATE TABLE threads (
    id TEXT PRIMARY KEY, stamp TEXT NOT NULL, generation TEXT NOT NULL,
    committed INTEGER NOT NULL, activity INTEGER NOT NULL, archived INTEGER NOT NULL,
    workspace TEXT, summary TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX threads_recent ON threads (archived, activity DESC, id DESC);
CREATE INDEX threads_workspace ON threads (workspace, archived, activity DESC, id DESC);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_COLUMNS = "id, stamp, generation, committed, activity, archived, workspace, summary"
_UPSERT = f"INSERT OR REPLACE INTO threads ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def stamp_of(stat: os.stat_result) -> Stamp:
    """A file's identity and version: (inode, size, mtime ns, ctime ns)."""
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


def _stamp_text(stamp: Stamp) -> str:
    return ".".join(map(str, stamp))


def _micros(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1)


class SummaryIndex:
    """The summaries of one folder of thread logs, in ``.index.sqlite3``.

    Safe across threads (one connection, used under a lock) and processes (SQLite's locking;
    rows are whole upserts, so two processes recording at once leave one of them).

    Attributes:
        folder: the threads folder.
        path: the database file.
        redaction: applied to every summary before it is stored.
        files_parsed: thread files read by :meth:`list` so far (tests watch it); :meth:`record`
            reads none.
        lock: the lock the old ``.index.json`` was written under (a temporary file a killed
            older client left behind is removed under it).
    """

    def __init__(self, folder: Path, *, redaction: Redaction | None = None) -> None:
        """Index ``folder`` (the database is opened on first use, not here)."""
        self.folder = folder
        self.path = folder / INDEX_NAME
        self.redaction = redaction or default_redaction()
        self.files_parsed = 0
        self.lock = FileLock(str(folder / ".locks" / "index.lock"))
        self._db: sqlite3.Connection | None = None
        self._guard = threading.Lock()

    # -- the database -------------------------------------------------------------------

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        with self._guard:
            if self._db is None:
                self._db = self._open()
            yield self._db

    def _open(self) -> sqlite3.Connection:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / OLD_INDEX_NAME).unlink()
        for attempt in (1, 2):
            db = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None,
                check_same_thread=False,
            )  # fmt: skip
            try:
                _prepare(db)
                return db
            except sqlite3.OperationalError:
                db.close()
                raise
            except sqlite3.DatabaseError as exc:  # not a database, or damaged: a cache
                db.close()
                if attempt == 2:
                    raise
                log.warning("thread index %s is unreadable (%s); rebuilding it", self.path, exc)
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(FileNotFoundError):
                        Path(f"{self.path}{suffix}").unlink()
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Close the database (it is opened again when next needed)."""
        with self._guard:
            if self._db is not None:
                self._db.close()
                self._db = None

    # -- rows ---------------------------------------------------------------------------

    def _row(
        self, thread_id: str, stamp: Stamp, head: Head, thread: Thread
    ) -> tuple[str, str, str, int, int, int, str | None, str]:
        summary = ThreadSummary.of(thread).model_copy(update={"message_count": head.count})
        data = summary.model_dump(mode="json")
        clean = self.redaction.value(data)
        if clean is not data:
            summary = ThreadSummary.model_validate(clean)
        return (
            thread_id,
            _stamp_text(stamp),
            head.generation,
            head.end,
            _micros(summary.sort_key[0]),
            0 if summary.archived_at is None else 1,
            summary.workspace_root,
            summary.model_dump_json(),
        )

    def record(self, thread_id: str, head: Head, thread: Thread) -> None:
        """The row of a thread just written (the caller holds its lock): one stat and one
        upsert. ``thread`` is the thread as written; ``head`` its file's commit. A failure is
        logged, never raised: the next :meth:`list` repairs the row."""
        try:
            stamp = stamp_of((self.folder / f"{thread_id}{SUFFIX}").stat())
            row = self._row(thread_id, stamp, head, thread)
            with self._connection() as db:
                db.execute(_UPSERT, row)
        except (OSError, sqlite3.Error, ValueError) as exc:
            log.info("could not record %s in the thread index: %s", thread_id, exc)

    def forget(self, thread_id: str) -> None:
        """Drop a deleted thread's row (failures are logged: the next listing drops it)."""
        try:
            with self._connection() as db:
                db.execute("DELETE FROM threads WHERE id = ?", (thread_id,))
        except sqlite3.Error as exc:
            log.info("could not drop %s from the thread index: %s", thread_id, exc)

    def _refresh(self, db: sqlite3.Connection, read: Reader, ids: list[str]) -> None:
        """Make the rows of ``ids`` again from their files (dropping those that are gone),
        :data:`BATCH` to a transaction."""
        for start in range(0, len(ids), BATCH):
            rows = []
            gone = []
            for thread_id in ids[start : start + BATCH]:
                self.files_parsed += 1
                try:
                    stamp = stamp_of((self.folder / f"{thread_id}{SUFFIX}").stat())
                    found = read(thread_id)
                except FileNotFoundError:
                    found = None
                if found is None:
                    gone.append((thread_id,))
                else:
                    rows.append(self._row(thread_id, stamp, *found))
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("DELETE FROM threads WHERE id = ?", gone)
                db.executemany(_UPSERT, rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise

    def _catch_up(self, db: sqlite3.Connection, read: Reader) -> None:
        """Rows for files the index has not seen, none for files that are gone (names only).
        Skipped while the folder's own stamp (mtime, ctime: any file created, removed or
        renamed in it changes them; an append does not) is the one the last catch-up saw."""
        stat = self.folder.stat()
        folder = f"{stat.st_ino}.{stat.st_mtime_ns}.{stat.st_ctime_ns}"
        seen = db.execute("SELECT value FROM meta WHERE key = 'folder'").fetchone()
        if seen is not None and seen[0] == folder:
            return
        with os.scandir(self.folder) as entries:
            names = {thread_id_of(e.name) for e in entries if is_thread_file(e.name)}
        known = {row[0] for row in db.execute("SELECT id FROM threads")}
        gone = [(thread_id,) for thread_id in known - names]
        if gone:
            db.executemany("DELETE FROM threads WHERE id = ?", gone)
        if added := sorted(names - known):
            self._refresh(db, read, added)
        if time.time_ns() - max(stat.st_mtime_ns, stat.st_ctime_ns) > SETTLED_NS:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('folder', ?)", (folder,))

    def list(
        self,
        read: Reader,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
        after: SortKey | None = None,
        owner: str | None = None,
    ) -> list[ThreadSummary]:
        """Summaries, newest activity first (then id, descending), filtered as API.md section 6
        says (``archived``: ``false``, ``true`` or ``any``; ``workspace``: that root only).

        Args:
            read: reads one thread the index has no current row for (see :data:`Reader`).
            limit: at most this many (None: all).
            after: only the rows after this :func:`sort_key` in that order (a keyset page:
                ``loomsync list --cursor``, issue 16 item 7).
            owner: only the threads of this user (the token's ``sub``): those whose
                ``owner_id`` is it, and those never on a server (no ``owner_id``); a thread
                of someone else's that ``show`` pulled is left out (newcomer finding 3).

        Raises:
            sqlite3.OperationalError: another process held the index locked longer than
                :data:`BUSY_TIMEOUT_SECONDS`.
        """
        where, params = _filters(workspace, archived, after, owner)
        query = f"SELECT id, stamp, summary FROM threads {where} ORDER BY activity DESC, id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(limit)
        with self._connection() as db:
            self._catch_up(db, read)
            for _ in range(3):  # a stale row may move; a third pass is rare already
                rows = db.execute(query, params).fetchall()
                stale = [
                    thread_id
                    for thread_id, stamp, _ in rows
                    if _stale(self.folder, thread_id, stamp)
                ]
                if not stale:
                    break
                self._refresh(db, read, stale)
        return [ThreadSummary.model_validate_json(summary) for _, _, summary in rows]

    def count(
        self,
        read: Reader,
        *,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
        after: SortKey | None = None,
        owner: str | None = None,
    ) -> int:
        """How many rows :meth:`list` returns with no limit (one ``COUNT``; the index caught up
        with the folder first)."""
        where, params = _filters(workspace, archived, after, owner)
        with self._connection() as db:
            self._catch_up(db, read)
            found: int = db.execute(f"SELECT COUNT(*) FROM threads {where}", params).fetchone()[0]
        return found


def sort_key(summary: ThreadSummary) -> SortKey:
    """The index's order of ``summary``: (last activity or creation in microseconds since
    the epoch, id); :meth:`SummaryIndex.list` is descending in it."""
    moment, thread_id = summary.sort_key
    return _micros(moment), thread_id


def _prepare(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION:
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:  # nobody won
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'"):
                db.execute(f'DROP TABLE "{table}"')
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _filters(
    workspace: str | None,
    archived: ArchivedFilter,
    after: SortKey | None = None,
    owner: str | None = None,
) -> tuple[str, list[object]]:
    clauses: list[str] = []
    params: list[object] = []
    if owner is not None:  # a thread never on a server has no owner_id: it is this user's
        clauses.append(
            "(json_extract(summary, '$.owner_id') IS NULL OR "
            "json_extract(summary, '$.owner_id') = ?)"
        )
        params.append(owner)
    if after is not None:
        clauses.append("(activity < ? OR (activity = ? AND id < ?))")
        params += [after[0], after[0], after[1]]
    if archived != "any":
        clauses.append("archived = ?")
        params.append(1 if archived == "true" else 0)
    if workspace is not None:
        clauses.append("workspace = ?")
        params.append(workspace)
    return ("WHERE " + " AND ".join(clauses) if clauses else ""), params


def _stale(folder: Path, thread_id: str, stamp: str) -> bool:
    try:
        return _stamp_text(stamp_of((folder / f"{thread_id}{SUFFIX}").stat())) != stamp
    except FileNotFoundError:
        return True


__all__ = [
    "INDEX_NAME",
    "OLD_INDEX_NAME",
    "Reader",
    "SortKey",
    "Stamp",
    "SummaryIndex",
    "sort_key",
    "stamp_of",
]
