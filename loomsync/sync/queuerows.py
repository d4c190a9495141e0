"""The rows of ``queue.sqlite3`` inside one transaction (:class:`Rows`), read as
:class:`~loomsync.sync.queueentry.PendingEntry` with the rules of issue 15, item 4: a row that is
not a valid entry is dropped (and the store's changes queued for what it may have stood for), a
retry time past the backoff cap (a clock that was wrong) is brought back to now + cap and
written so. Used by :class:`loomsync.sync.queue.PendingSyncQueue` only.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from pydantic import ValidationError

from loomsync import edits
from loomsync.core.document import codec
from loomsync.sync.queueentry import Op, PendingEntry
from loomsync.sync.queuelegacy import dropped_line
from loomsync.sync.queuerepair import Dropped, why

log = logging.getLogger(__name__)

_COLUMNS = "SELECT seq, entry FROM entries"


class Rows:
    """The queue's entries within one open transaction of ``db``.

    Args:
        db: a connection inside ``BEGIN IMMEDIATE``.
        backoff_cap: seconds; a ``next_attempt_at`` later than now + this is brought back.
        rebuild: the ids of the threads the store shows changed (queued when entries were
            dropped and nothing else is queued for them); None: nothing is queued.
        on_dropped: told of each batch of dropped entries.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        backoff_cap: float,
        rebuild: Callable[[], list[str]] | None,
        on_dropped: Callable[[Dropped], None],
    ) -> None:
        self.db = db
        self._cap = timedelta(seconds=backoff_cap)
        self._rebuild = rebuild
        self._on_dropped = on_dropped

    def _clamped(self, entry: PendingEntry) -> PendingEntry:
        """``entry``, its retry time brought back within the cap (and written) if past it."""
        latest = edits.now() + self._cap
        if entry.next_attempt_at is not None and entry.next_attempt_at > latest:
            log.warning(
                "sync entry of %s was due at %s, past the backoff cap: due by %s instead",
                entry.thread_id,
                entry.next_attempt_at,
                latest,
            )
            entry.next_attempt_at = latest
            self.put(entry)
        return entry

    def _valid(self, rows: Sequence[tuple[int, str]]) -> list[PendingEntry] | None:
        """The rows as entries (clamped); None if one of them is not a valid entry."""
        entries: list[PendingEntry] = []
        for _seq, text in rows:
            try:
                entries.append(self._clamped(PendingEntry.model_validate(codec.loads(text))))
            except (ValueError, ValidationError, RecursionError):
                return None
        return entries

    def _query(self, where: str, params: tuple[Any, ...]) -> list[PendingEntry]:
        rows = self.db.execute(f"{_COLUMNS} {where} ORDER BY seq", params).fetchall()
        entries = self._valid(rows)
        if entries is None:  # a row that is not valid: dropped (with its report) by all()
            self.all()
            again = self.db.execute(f"{_COLUMNS} {where} ORDER BY seq", params).fetchall()
            entries = self._valid(again)
        return entries or []

    def get(self, thread_id: str, op: Op) -> PendingEntry | None:
        """The thread's entry of ``op``, if any (one index lookup)."""
        found = self._query("WHERE thread_id = ? AND op = ?", (thread_id, op))
        return found[0] if found else None

    def of(self, thread_id: str) -> list[PendingEntry]:
        """The thread's entries, oldest first (one index lookup)."""
        return self._query("WHERE thread_id = ?", (thread_id,))

    def all(self) -> list[PendingEntry]:
        """Every entry, oldest first. Rows that are not valid entries are deleted, reported
        (:class:`Dropped`: a line each) and a ``save`` queued for each thread the store shows
        changed that has no entry left."""
        entries: list[PendingEntry] = []
        dropped: list[str] = []
        rows = self.db.execute(f"{_COLUMNS} ORDER BY seq").fetchall()
        for index, (seq, text) in enumerate(rows, start=1):
            try:
                item: Any = codec.loads(text)
            except (ValueError, RecursionError) as exc:
                dropped.append(dropped_line(index, text, f"not JSON: {exc}"[:120]))
            else:
                try:
                    entries.append(self._clamped(PendingEntry.model_validate(item)))
                    continue
                except ValidationError as exc:
                    dropped.append(dropped_line(index, item, why(exc)))
            self.db.execute("DELETE FROM entries WHERE seq = ?", (seq,))
        if dropped:
            self.requeue_dropped(dropped, entries)
        return entries

    def requeue_dropped(self, dropped: list[str], entries: list[PendingEntry]) -> None:
        """Entries that were not valid were left out of ``entries`` (the valid ones, stored):
        queue a ``save`` (stored, and added to ``entries``) for each thread the store shows
        changed that ``entries`` has nothing for (what a dropped entry may have stood for), and
        report it (``dropped``: a line per dropped entry)."""
        held = {e.thread_id for e in entries}
        found = self._rebuild() if self._rebuild is not None else []
        ids = [i for i in found if i not in held]
        now = edits.now()
        for thread_id in ids:
            entry = PendingEntry(thread_id=thread_id, op="save", enqueued_at=now, updated_at=now)
            self.put(entry)
            entries.append(entry)
        self._on_dropped(Dropped(tuple(dropped), tuple(ids)))
        log.warning(
            "sync queue: dropped %d entry(ies) that are not valid (%s); queued from the "
            "store: %d thread(s)",
            len(dropped),
            "; ".join(dropped),
            len(ids),
        )

    def put(self, entry: PendingEntry) -> None:
        """Insert the entry, or replace the stored one of its (thread, op) in its place."""
        self.db.execute(
            "INSERT INTO entries (thread_id, op, entry) VALUES (?, ?, ?) "
            "ON CONFLICT (thread_id, op) DO UPDATE SET entry = excluded.entry",
            (entry.thread_id, entry.op, entry.model_dump_json()),
        )

    def remove(self, thread_id: str, op: Op | None = None) -> int:
        """Delete the thread's entries (only ``op``'s if given); how many were."""
        if op is None:
            done = self.db.execute("DELETE FROM entries WHERE thread_id = ?", (thread_id,))
        else:
            done = self.db.execute(
                "DELETE FROM entries WHERE thread_id = ? AND op = ?", (thread_id, op)
            )
        return done.rowcount

    def add_all(self, entries: Sequence[PendingEntry]) -> None:
        """Insert entries whose (thread, op) has none yet (the others are left as stored)."""
        self.db.executemany(
            "INSERT INTO entries (thread_id, op, entry) VALUES (?, ?, ?) "
            "ON CONFLICT (thread_id, op) DO NOTHING",
            [(e.thread_id, e.op, e.model_dump_json()) for e in entries],
        )


__all__ = ["Rows"]
