"""Per-thread sync state on disk: ``$XDG_STATE_HOME/loomsync/sync/threads/<id>.json``.

A :class:`ThreadState` per thread: the server version the local copy is based on (with a
snapshot of what the server held then, for delta sync and merges: the chain digest of the
messages, the other fields, redacted, and the commit of the local file that holds those
messages, :class:`loomsync.sync.snapshots.SyncBase`), and the fork that took the local side of the last divergent
conflict. Every write is atomic, under the thread's file lock. (The sync queue is
:mod:`loomsync.sync.queue`.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from filelock import BaseFileLock
from pydantic import BaseModel, ValidationError

from loomsync import edits
from loomsync.core.document import codec
from loomsync.store.files import atomic_write, ensure_dir, remove_stray_temps
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.sync.merge import SyncBase

log = logging.getLogger(__name__)


class ThreadState(BaseModel):
    """Sync state of one thread (``sync/threads/<id>.json``).

    Attributes:
        base: the server state the local copy is based on (None: never synced): its version
            and a snapshot of what the server held then, for delta sync and merges.
        fork_id: the thread that took the local side of the last divergent conflict.
        dropped_stamp: the thread file's stamp (inode, size, mtime, ctime) when its failed
            sync entries were dropped (``loomsync sync --drop``, issue 16 item 2): while the
            file keeps it, the queue's rebuild from the store does not queue the thread again
            (:func:`loomsync.sync.requeue.changed_threads`); a new save changes the stamp.
    """

    base: SyncBase | None = None
    fork_id: str | None = None
    dropped_stamp: tuple[int, int, int, int] | None = None


#: ``messages_digest`` of a base whose fields had to be redacted before they were written: it
#: matches no copy, so the next push sends the whole (redacted) thread.
REDACTED_BASE = "redacted"


class ThreadStates:
    """``ThreadState`` files in one folder. Callers hold the thread's lock around changes.

    A base's fields are redacted before they are written (issue 12, item 1): a server copy that
    holds a credential (sent by a client that is not loomsync) never lands here; such a base
    gets the digest :data:`REDACTED_BASE` (and no file offset), so the redacted copy replaces the
    server's.
    """

    def __init__(
        self,
        folder: Path,
        lock_for: Callable[[str], BaseFileLock],
        redaction: Redaction | None = None,
    ) -> None:
        """``lock_for(thread_id)`` gives the thread's (re-entrant) lock."""
        self.folder = ensure_dir(folder)
        self._lock_for = lock_for
        self.redaction = redaction or default_redaction()
        remove_stray_temps(folder, lambda name: lock_for(name.removesuffix(".json")))

    def _path(self, thread_id: str) -> Path:
        return self.folder / f"{edits.parse_id(thread_id)}.json"  # an id never names another path

    def get(self, thread_id: str) -> ThreadState:
        """The state (empty when missing or unreadable)."""
        try:
            return ThreadState.model_validate(codec.loads(self._path(thread_id).read_bytes()))
        except FileNotFoundError:
            return ThreadState()
        except (ValueError, ValidationError):
            log.warning("sync state of %s is unreadable; it will be rebuilt", thread_id)
            return ThreadState()

    def put(self, thread_id: str, state: ThreadState) -> None:
        """Store the state atomically (the base's fields redacted, see the class)."""
        base = state.base
        if base is not None:
            fields = self.redaction.value(base.fields)
            if fields is not base.fields:
                void = {"messages_digest": REDACTED_BASE, "generation": None, "offset": None}
                clean = base.model_copy(update={"fields": fields, **void})
                state = state.model_copy(update={"base": clean})
        data = codec.dumps(state.model_dump(mode="python"))  # keeps JsonNumber text
        atomic_write(self._path(thread_id), data, lock=self._lock_for(thread_id))

    def delete(self, thread_id: str) -> None:
        """Forget the thread's state."""
        self._path(thread_id).unlink(missing_ok=True)


__all__ = ["REDACTED_BASE", "ThreadState", "ThreadStates"]
