"""What the sync remembers on disk, under ``$XDG_STATE_HOME/loomsync/sync/``.

- ``pending.json``: the :class:`PendingSyncQueue`, one entry per (thread, operation). One that
  fails to parse (truncated, garbage, the wrong shape) is set aside and the queue rebuilt from
  the store (issue 15, item 4: :mod:`loomsync.sync.requeue`); a retry time further ahead than the
  backoff cap (a clock that was years ahead when the entry failed) is brought back to now + cap.
- ``threads/<id>.json``: a :class:`loomsync.sync.threadstates.ThreadState` per thread (that module).

Both survive crashes and restarts: every write is atomic, under a file lock.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock
from pydantic import BaseModel, ValidationError, field_validator

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.document.model import UtcDatetime
from loomsync.errors import QueueUnreadableError
from loomsync.store.files import (
    DEFAULT_LOCK_TIMEOUT,
    atomic_write,
    ensure_dir,
    locked,
    remove_stray_temps,
)
from loomsync.sync.queuerepair import (
    Dropped,
    Rebuilt,
    prune_set_aside,
    shown,
    why,
)

log = logging.getLogger(__name__)

Op = Literal["save", "patch", "delete"]
QUEUE_FORMAT = 1
#: The queue's file name in the sync folder.
QUEUE_FILE = "pending.json"


class PendingEntry(BaseModel):
    """One thing to send. ``generation`` grows each time the entry is enqueued again.

    Attributes:
        thread_id: the thread.
        op: ``save`` (push the local copy), ``patch`` (``payload`` is a merge patch for
            ``PATCH``), ``delete``.
        retry_count: failed attempts since the last success.
        last_error: the last failure, one line (the server's reason for a refusal).
        failed_at: set when the server refused for good (413, 422, ...): not retried until the
            thread is saved again or a retry of failed entries is asked for.
        next_attempt_at: not before this time (exponential backoff with jitter).
        token_refused_at: set when the last attempt got a 401 (the token expired, was revoked
            or is not valid; issue 16 item 3): the entry waits for a new login, neither failed
            nor backed off as if offline (:meth:`PendingSyncQueue.wait_for_login`).
    """

    thread_id: str
    op: Op
    payload: dict[str, Any] | None = None
    generation: int = 1
    enqueued_at: UtcDatetime
    updated_at: UtcDatetime
    retry_count: int = 0
    last_error: str | None = None
    failed_at: UtcDatetime | None = None
    next_attempt_at: UtcDatetime | None = None
    token_refused_at: UtcDatetime | None = None

    @field_validator("thread_id")
    @classmethod
    def _a_thread_id(cls, value: str) -> str:
        """Only ``T-<uuid>``: an entry naming anything else is dropped when read (issue 15,
        item 4), never sent nor used as a path."""
        return str(edits.parse_id(value))

    @property
    def failed(self) -> bool:
        """True when refused for good."""
        return self.failed_at is not None

    @property
    def waiting_for_login(self) -> bool:
        """True when the server refused the token on the last attempt (a 401)."""
        return self.token_refused_at is not None and not self.failed

    def due(self, now: datetime) -> bool:
        """True when not failed and its backoff has passed."""
        return not self.failed and (self.next_attempt_at is None or self.next_attempt_at <= now)


def backoff_delay(retry_count: int, *, base: float = 1.0, cap: float = 300.0) -> float:
    """Seconds to wait before attempt ``retry_count + 1``: ``base * 2**n`` capped, 50-100 % jitter."""
    return float(min(cap, base * 2 ** min(retry_count, 30)) * random.uniform(0.5, 1.0))


#: Gives the ids of the threads the server lacks (see :func:`loomsync.sync.requeue.changed_threads`);
#: called under the queue's lock, so it must not use the queue.
Rebuild = Callable[[], list[str]]


def _entries_of(raw: Any) -> tuple[list[PendingEntry], list[str]]:
    """The valid entries of a parsed ``pending.json`` and a line per invalid one (dropped);
    ValueError when the file is not an object with an ``entries`` list."""
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        raise ValueError('not an object with an "entries" list')
    entries: list[PendingEntry] = []
    dropped: list[str] = []
    for index, item in enumerate(raw["entries"], start=1):
        try:
            entries.append(PendingEntry.model_validate(item))
        except ValidationError as exc:
            if isinstance(item, dict):
                what = f"thread_id {shown(item.get('thread_id'))}, op {shown(item.get('op'))}"
            else:
                what = shown(item)
            dropped.append(f"entry {index} ({what}): {why(exc)}")
    return entries, dropped


class PendingSyncQueue:
    """The persistent queue of ``pending.json``, safe across threads and processes.

    Args:
        path: the queue file (default ``$XDG_STATE_HOME/loomsync/sync/pending.json``).
        lock_timeout: seconds to wait for the queue's lock.
        rebuild: when the file does not parse, it is set aside and the queue becomes one
            ``save`` entry per id this returns (None: the queue starts empty). Issue 15, item 4.
        backoff_cap: the longest retry delay in seconds: an entry read with a
            ``next_attempt_at`` later than now + this (set while the clock was wrong, or
            before it went back) is brought back to now + this, and written so.

    Attributes:
        rebuilt: each rebuild this object did, oldest first (for ``loomsync sync`` to report).
        dropped: each time this object dropped invalid entries, oldest first.

    Raises (from any method that reads the queue):
        QueueUnreadableError: the file cannot be read and cannot be moved aside.
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
        self._lock = FileLock(str(path.with_name(path.name + ".lock")))
        self._timeout = lock_timeout
        self._rebuild = rebuild
        self.backoff_cap = backoff_cap
        self.rebuilt: list[Rebuilt] = []
        self.dropped: list[Dropped] = []
        remove_stray_temps(path.parent, lambda _name: self._lock)

    def _read(self) -> tuple[list[PendingEntry], bool]:
        """The entries, and whether they differ from the file (rebuilt or clamped): then the
        caller writes them. Called under the lock."""
        try:
            entries, dropped = _entries_of(codec.loads(self.path.read_bytes()))
        except FileNotFoundError:
            return [], False
        except (ValueError, RecursionError, OSError) as exc:
            # JSON, UTF-8, nesting and shape errors; a folder in its place, no permission...
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if isinstance(exc, OSError):
                reason = f"{type(exc).__name__}: {exc.strerror or exc}"
            return self._rebuilt(reason[:200], unreadable=isinstance(exc, OSError)), True
        if dropped:
            self._drop(entries, dropped)
        now = edits.now()
        latest = now + timedelta(seconds=self.backoff_cap)
        clamped = False
        for entry in entries:
            if entry.next_attempt_at is not None and entry.next_attempt_at > latest:
                log.warning(
                    "sync entry of %s was due at %s, past the backoff cap: due by %s instead",
                    entry.thread_id,
                    entry.next_attempt_at,
                    latest,
                )
                entry.next_attempt_at = latest
                clamped = True
        return entries, clamped or bool(dropped)

    def _drop(self, entries: list[PendingEntry], dropped: list[str]) -> None:
        """Log the invalid entries (left out of ``entries``) and queue a ``save`` for each
        thread the store shows changed that ``entries`` has nothing for (what a dropped entry
        may have stood for)."""
        held = {e.thread_id for e in entries}
        ids = [i for i in (self._rebuild() if self._rebuild is not None else []) if i not in held]
        now = edits.now()
        entries.extend(
            PendingEntry(thread_id=i, op="save", enqueued_at=now, updated_at=now) for i in ids
        )
        self.dropped.append(Dropped(tuple(dropped), tuple(ids)))
        log.warning(
            "sync queue %s: dropped %d entry(ies) that are not valid (%s); queued from the "
            "store: %d thread(s)",
            self.path,
            len(dropped),
            "; ".join(dropped),
            len(ids),
        )

    def _rebuilt(self, reason: str, *, unreadable: bool = False) -> list[PendingEntry]:
        """Set the unreadable file aside; entries for what the store says the server lacks.

        Raises:
            QueueUnreadableError: it cannot be moved aside (then it cannot be replaced either).
        """
        moved = self.path.with_name(f"{self.path.name}.corrupt-{edits.now():%Y%m%dT%H%M%S%f}")
        try:
            self.path.replace(moved)
        except OSError as exc:
            raise QueueUnreadableError(
                f"the sync queue {self.path} cannot be read ({reason}) nor moved aside "
                f"({type(exc).__name__}: {exc.strerror or exc}); move or remove it, and "
                "`loomsync sync` rebuilds it from the store"
            ) from None
        prune_set_aside(self.path)
        ids = self._rebuild() if self._rebuild is not None else []
        now = edits.now()
        entries = [
            PendingEntry(thread_id=i, op="save", enqueued_at=now, updated_at=now) for i in ids
        ]
        self.rebuilt.append(Rebuilt(moved, reason, tuple(ids), unreadable))
        log.warning(
            "sync queue %s did not parse (%s); moved to %s and rebuilt from the store: %d thread(s)",
            self.path,
            reason,
            moved,
            len(ids),
        )
        return entries

    def _write(self, entries: list[PendingEntry]) -> None:
        data = {"format": QUEUE_FORMAT, "entries": [e.model_dump(mode="python") for e in entries]}
        atomic_write(
            self.path, codec.dumps(data, pretty=True), lock=self._lock, timeout=self._timeout
        )

    def _change(self, change: Callable[[list[PendingEntry]], bool]) -> None:
        with locked(self._lock, self._timeout):
            entries, dirty = self._read()
            if change(entries) or dirty:
                self._write(entries)

    def entries(self) -> list[PendingEntry]:
        """Every entry, oldest first (pending and failed). An unreadable file is rebuilt and a
        retry time past the cap brought back (see the class), and the result written."""
        with locked(self._lock, self._timeout):
            entries, dirty = self._read()
            if dirty:
                self._write(entries)
            return entries

    def add(self, thread_id: str, op: Op, payload: dict[str, Any] | None = None) -> None:
        """Enqueue, deduplicated per (thread, op).

        A pending ``save`` entry already covers any later save (the push reads the file as it
        is then), so enqueuing it again writes nothing, unless it was backing off: it becomes
        due at once (issue 15, item 4: a new save never waits out an old failure's delay). A
        failed entry becomes pending again (the thread changed; it may pass now). ``patch``
        payloads are composed and the entry gets a new generation, due at once. A ``delete``
        replaces the thread's other entries.
        """
        now = edits.now()

        def change(entries: list[PendingEntry]) -> bool:
            if op == "delete":
                entries[:] = [e for e in entries if e.thread_id != thread_id or e.op == "delete"]
            for entry in entries:
                if entry.thread_id == thread_id and entry.op == op:
                    if op == "save" and not entry.failed:
                        if entry.next_attempt_at is None:
                            return False
                        entry.next_attempt_at = None  # due now; its retry count stays
                        return True
                    entry.generation += 1
                    entry.updated_at = now
                    entry.failed_at = entry.next_attempt_at = entry.token_refused_at = None
                    if payload is not None:
                        entry.payload = edits.compose_patches(entry.payload or {}, payload)
                    return True
            entries.append(
                PendingEntry(
                    thread_id=thread_id, op=op, payload=payload, enqueued_at=now, updated_at=now
                )
            )
            return True

        self._change(change)

    def discard(self, thread_id: str, op: Op | None = None) -> None:
        """Drop the thread's entries (only ``op``'s if given)."""

        def change(entries: list[PendingEntry]) -> bool:
            kept = [e for e in entries if not (e.thread_id == thread_id and op in (None, e.op))]
            changed = len(kept) != len(entries)
            entries[:] = kept
            return changed

        self._change(change)

    def _update(self, done: PendingEntry, update: Callable[[PendingEntry, bool], bool]) -> None:
        """Apply ``update(entry, same_generation)`` to the stored entry matching ``done``."""

        def change(entries: list[PendingEntry]) -> bool:
            for index, entry in enumerate(entries):
                if entry.thread_id == done.thread_id and entry.op == done.op:
                    if update(entry, entry.generation == done.generation):
                        del entries[index]
                    return True
            return False

        self._change(change)

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

        def change(entries: list[PendingEntry]) -> bool:
            waiting = [e for e in entries if e.token_refused_at is not None]
            for entry in waiting:
                entry.token_refused_at = None
            return bool(waiting)

        self._change(change)

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

    def has(self, thread_id: str, op: Op | None = None) -> bool:
        """True if the thread has an entry (of ``op``, if given), pending or failed."""
        return any(e.thread_id == thread_id and op in (None, e.op) for e in self.entries())

    def pending_count(self) -> int:
        """Entries still to send (failed ones excluded)."""
        return sum(not e.failed for e in self.entries())

    def failed(self) -> list[PendingEntry]:
        """Entries refused for good."""
        return [e for e in self.entries() if e.failed]

    def drop_failed(self, thread_id: str | None = None) -> list[PendingEntry]:
        """Remove the failed entries (of ``thread_id`` only, if given); pending ones stay.
        Returns what was removed, as it was (``loomsync sync --drop``, ``--discard-failed``)."""
        removed: list[PendingEntry] = []

        def change(entries: list[PendingEntry]) -> bool:
            for entry in entries:
                if entry.failed and thread_id in (None, entry.thread_id):
                    removed.append(entry)
            entries[:] = [e for e in entries if all(e is not r for r in removed)]
            return bool(removed)

        self._change(change)
        return removed


__all__ = ["QUEUE_FILE", "Op", "PendingEntry", "PendingSyncQueue", "Rebuild", "backoff_delay"]
