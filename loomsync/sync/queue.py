"""What the sync remembers on disk, under ``$XDG_STATE_HOME/loomsync/sync/``.

- ``queue.sqlite3``: the :class:`PendingSyncQueue`, one row per (thread, operation)
  (:mod:`loomsync.sync.queuedb`): a save whose thread already has a due ``save`` entry reads one
  row and writes nothing; one that adds or changes an entry writes that row only, whatever the
  queue holds (docs/client.md, "The sync queue"). A file that is not a database or cannot be
  opened is set aside and the queue rebuilt from the store (issue 15, item 4:
  :mod:`loomsync.sync.requeue`); a row that is not a valid entry is dropped; a retry time
  further ahead than the backoff cap (a clock that was years ahead when the entry failed) is
  brought back to now + cap.
- ``pending.json``: the queue of earlier clients, read once into ``queue.sqlite3`` and renamed
  ``pending.json.migrated`` (:mod:`loomsync.sync.queuelegacy`).
- ``threads/<id>.json``: a :class:`loomsync.sync.threadstates.ThreadState` per thread (that module).

All survive crashes and restarts: every change is one committed transaction.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock

from loomsync import edits
from loomsync.store.files import DEFAULT_LOCK_TIMEOUT, ensure_dir, locked, remove_stray_temps
from loomsync.sync.queuedb import QueueDamaged, QueueFile
from loomsync.sync.queueentry import Op, PendingEntry, backoff_delay
from loomsync.sync.queuelegacy import (
    LEGACY_QUEUE_FILE,
    MIGRATED_SUFFIX,
    read_legacy,
    set_aside,
)
from loomsync.sync.queuerepair import Dropped, Rebuilt
from loomsync.sync.queuerows import Rows

log = logging.getLogger(__name__)

T = TypeVar("T")
#: The queue's file name in the sync folder.
QUEUE_FILE = "queue.sqlite3"

#: Gives the ids of the threads the server lacks (see :func:`loomsync.sync.requeue.changed_threads`);
#: called inside the queue's transaction, so it must not use the queue.
Rebuild = Callable[[], list[str]]


class PendingSyncQueue:
    """The persistent queue of ``queue.sqlite3``, safe across threads and processes.

    Args:
        path: the queue file (default ``$XDG_STATE_HOME/loomsync/sync/queue.sqlite3``); a
            ``pending.json`` beside it (an earlier client's queue) is read into it on first use
            and renamed ``pending.json.migrated``.
        lock_timeout: seconds to wait for another writer.
        rebuild: when the file cannot be used (not a database, damaged, cannot be opened), it
            is set aside and the queue becomes one ``save`` entry per id this returns (None:
            the queue starts empty). Issue 15, item 4.
        backoff_cap: the longest retry delay in seconds: an entry read with a
            ``next_attempt_at`` later than now + this (set while the clock was wrong, or
            before it went back) is brought back to now + this, and written so.

    Attributes:
        rebuilt: each rebuild this object did, oldest first (for ``loomsync sync`` to report).
        dropped: each time this object dropped invalid entries, oldest first.

    Raises (from any method):
        QueueUnreadableError: the file cannot be used and cannot be moved aside.
        StoreLockedError: another writer held the queue for ``lock_timeout`` seconds.
    """

    def __init__(
        self,
        path: Path,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        rebuild: Rebuild | None = None,
        backoff_cap: float = 300.0,
    ) -> None:
        self.path = path
        ensure_dir(path.parent)
        self.legacy_path = path.with_name(LEGACY_QUEUE_FILE)
        self._legacy_lock = FileLock(str(self.legacy_path.with_name(LEGACY_QUEUE_FILE + ".lock")))
        self._timeout = lock_timeout
        self._rebuild = rebuild
        self.backoff_cap = backoff_cap
        self.rebuilt: list[Rebuilt] = []
        self.dropped: list[Dropped] = []
        self._file = QueueFile(path, timeout=lock_timeout, on_open=self._migrate)
        # an earlier client's interrupted rewrite of pending.json
        remove_stray_temps(path.parent, lambda _name: self._legacy_lock)

    # -- the file ---------------------------------------------------------------------------

    def _rows(self, db: sqlite3.Connection) -> Rows:
        return Rows(
            db, backoff_cap=self.backoff_cap, rebuild=self._rebuild, on_dropped=self.dropped.append
        )

    def _run(self, work: Callable[[Rows], T]) -> T:
        """``work`` in one transaction; a damaged file is set aside, rebuilt, and ``work`` run
        on the new one."""
        try:
            return self._file.run(lambda db: work(self._rows(db)))
        except QueueDamaged as exc:
            self._set_aside(exc)
        return self._file.run(lambda db: work(self._rows(db)))

    def _set_aside(self, damage: QueueDamaged) -> None:
        """Move the damaged database aside and queue what the store says the server lacks."""
        with self._file.closed():
            moved = set_aside(self.path, damage.reason)
            self._file.remove_side_files()
        ids = self._rebuild() if self._rebuild is not None else []
        now = edits.now()
        entries = [
            PendingEntry(thread_id=i, op="save", enqueued_at=now, updated_at=now) for i in ids
        ]
        self._file.run(lambda db: self._rows(db).add_all(entries))
        self.rebuilt.append(Rebuilt(moved, damage.reason, tuple(ids), damage.unreadable))
        log.warning("sync queue rebuilt from the store: %d thread(s)", len(ids))

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Read an earlier client's ``pending.json`` into the new database (its entries added
        where the database has none for that thread and op), then rename it
        ``pending.json.migrated``. Under that client's lock, so a running one does not write
        it meanwhile; a crash before the rename reads it again, adding nothing new."""
        if self.legacy_path == self.path or not os.path.lexists(self.legacy_path):
            return
        with locked(self._legacy_lock, self._timeout):
            try:
                legacy = read_legacy(self.legacy_path)
            except FileNotFoundError:
                return  # another process migrated it meanwhile
            db.execute("BEGIN IMMEDIATE")
            try:
                rows = self._rows(db)
                rows.add_all(legacy.entries)
                if legacy.dropped:
                    rows.requeue_dropped(legacy.dropped, rows.all())
                if legacy.rebuilt is not None:
                    ids = self._rebuild() if self._rebuild is not None else []
                    now = edits.now()
                    rows.add_all(
                        [
                            PendingEntry(thread_id=i, op="save", enqueued_at=now, updated_at=now)
                            for i in ids
                        ]
                    )
                    self.rebuilt.append(
                        Rebuilt(
                            legacy.rebuilt.set_aside,
                            legacy.rebuilt.reason,
                            tuple(ids),
                            legacy.rebuilt.unreadable,
                        )
                    )
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
            if legacy.rebuilt is None:
                os.replace(
                    self.legacy_path,
                    self.legacy_path.with_name(LEGACY_QUEUE_FILE + MIGRATED_SUFFIX),
                )
            log.info("sync queue %s read into %s", self.legacy_path, self.path)

    def close(self) -> None:
        """Close the database connection (opened again when next needed)."""
        self._file.close()

    # -- reading ----------------------------------------------------------------------------

    def entries(self) -> list[PendingEntry]:
        """Every entry, oldest first (pending and failed). A damaged file is rebuilt, invalid
        rows dropped and a retry time past the cap brought back (see the class)."""
        return self._run(lambda rows: rows.all())

    def has(self, thread_id: str, op: Op | None = None) -> bool:
        """True if the thread has an entry (of ``op``, if given), pending or failed."""
        if op is None:
            return self._run(lambda rows: bool(rows.of(thread_id)))
        return self._run(lambda rows: rows.get(thread_id, op) is not None)

    def pending_count(self) -> int:
        """Entries still to send (failed ones excluded)."""
        return sum(not e.failed for e in self.entries())

    def failed(self) -> list[PendingEntry]:
        """Entries refused for good."""
        return [e for e in self.entries() if e.failed]

    # -- changing ---------------------------------------------------------------------------

    def add(self, thread_id: str, op: Op, payload: dict[str, Any] | None = None) -> None:
        """Enqueue, deduplicated per (thread, op). Reads and writes that entry only.

        A pending ``save`` entry already covers any later save (it holds nothing of a save:
        the push reads the file as it is then), so enqueuing it again writes nothing, unless
        it was backing off: it becomes due at once (issue 15, item 4: a new save never waits
        out an old failure's delay). A failed entry becomes pending again (the thread changed;
        it may pass now). ``patch`` payloads are composed and the entry gets a new generation,
        due at once. A ``delete`` replaces the thread's other entries.
        """
        now = edits.now()

        def change(rows: Rows) -> None:
            if op == "delete":
                for other in ("save", "patch"):
                    rows.remove(thread_id, other)
            entry = rows.get(thread_id, op)
            if entry is None:
                entry = PendingEntry(
                    thread_id=thread_id, op=op, payload=payload, enqueued_at=now, updated_at=now
                )
            elif op == "save" and not entry.failed:
                if entry.next_attempt_at is None:
                    return  # already due: nothing to write
                entry.next_attempt_at = None  # due now; its retry count stays
            else:
                entry.generation += 1
                entry.updated_at = now
                entry.failed_at = entry.next_attempt_at = entry.token_refused_at = None
                if payload is not None:
                    entry.payload = edits.compose_patches(entry.payload or {}, payload)
            rows.put(entry)

        self._run(change)

    def discard(self, thread_id: str, op: Op | None = None) -> None:
        """Drop the thread's entries (only ``op``'s if given)."""
        self._run(lambda rows: rows.remove(thread_id, op))

    def _update(self, done: PendingEntry, update: Callable[[PendingEntry, bool], bool]) -> None:
        """Apply ``update(entry, same_generation)`` to the stored entry matching ``done``; it
        returns True to remove the entry."""

        def change(rows: Rows) -> None:
            entry = rows.get(done.thread_id, done.op)
            if entry is None:
                return
            if update(entry, entry.generation == done.generation):
                rows.remove(entry.thread_id, entry.op)
            else:
                rows.put(entry)

        self._run(change)

    def complete(self, done: PendingEntry, *, changed_since: bool = False) -> None:
        """Remove the entry, unless it was enqueued again meanwhile (a new generation) or
        ``changed_since`` (the thread changed after the attempt read it): then only reset its
        retries, so it is sent again."""

        def update(entry: PendingEntry, same: bool) -> bool:
            entry.retry_count, entry.last_error, entry.next_attempt_at = 0, None, None
            entry.token_refused_at = None
            return same and not changed_since

        self._update(done, update)

    def retry_later(self, done: PendingEntry, error: str, *, base: float, cap: float) -> None:
        """Count a failed attempt and schedule the next with exponential backoff and jitter."""

        def update(entry: PendingEntry, _same: bool) -> bool:
            entry.retry_count += 1
            entry.last_error = error
            delay = backoff_delay(entry.retry_count - 1, base=base, cap=cap)
            entry.next_attempt_at = edits.now() + timedelta(seconds=delay)
            entry.token_refused_at = None
            return False

        self._update(done, update)

    def wait_for_login(self, done: PendingEntry, error: str) -> None:
        """The server refused the token (401): keep the entry pending for a new login, with
        ``error`` as its last error; its retry count and backoff are left alone (a refused
        token says nothing about this entry; the background sync backs off as a whole:
        :class:`loomsync.sync.worker.BackgroundSync`)."""

        def update(entry: PendingEntry, _same: bool) -> bool:
            entry.last_error = error
            entry.token_refused_at = edits.now()
            return False

        self._update(done, update)

    def forget_refusals(self) -> None:
        """A new login (``loomsync login``): no entry waits for one any more; they are plain
        pending entries again, sent by the next sync (issue 16 item 3; newcomer finding 14)."""

        def change(rows: Rows) -> None:
            for entry in rows.all():
                if entry.token_refused_at is not None:
                    entry.token_refused_at = None
                    rows.put(entry)

        self._run(change)

    def fail(self, done: PendingEntry, error: str, *, changed_since: bool = False) -> None:
        """Mark refused for good (kept and reported), unless enqueued again meanwhile or
        ``changed_since`` (then it is retried later instead)."""

        def update(entry: PendingEntry, same: bool) -> bool:
            entry.retry_count += 1
            entry.last_error = error
            entry.token_refused_at = None
            if same and not changed_since:
                entry.failed_at = edits.now()
            return False

        self._update(done, update)

    def drop_failed(self, thread_id: str | None = None) -> list[PendingEntry]:
        """Remove the failed entries (of ``thread_id`` only, if given); pending ones stay.
        Returns what was removed, as it was (``loomsync sync --drop``, ``--discard-failed``)."""

        def change(rows: Rows) -> list[PendingEntry]:
            found = rows.all() if thread_id is None else rows.of(thread_id)
            removed = [e for e in found if e.failed]
            for entry in removed:
                rows.remove(entry.thread_id, entry.op)
            return removed

        return self._run(change)


__all__ = [
    "QUEUE_FILE",
    "Op",
    "PendingEntry",
    "PendingSyncQueue",
    "Rebuild",
    "backoff_delay",
]
