"""Threads deleted on this machine: ``$XDG_STATE_HOME/loomsync/sync/deleted.txt``.

``loomsync delete`` removes the thread file; without a note of it, the next ``loomsync import``
of the same session files made the thread again, and the server refused it for good (a deleted
id cannot be used again: API.md, "Deleted"), so every later import exited 1 (newcomer finding
2). The importer skips an id listed here (:func:`loomsync.importers.run.import_sessions`) unless
told to include deleted threads.

One line per thread: ``<thread id> server`` (its delete was queued for the server, so its id
cannot be used there again) or ``<thread id> local`` (it was only on this machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from filelock import FileLock

from loomsync.store.files import atomic_write, ensure_dir

Where = Literal["server", "local"]


class Deletions:
    """The ids deleted here and whether the server knew them (see the module)."""

    def __init__(self, path: Path) -> None:
        """``path``: the file (made on the first :meth:`add`)."""
        self.path = path

    def _read(self) -> dict[str, Where]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return {}
        found: dict[str, Where] = {}
        for line in lines:
            thread_id, _, where = line.strip().partition(" ")
            if thread_id:
                found[thread_id] = "local" if where == "local" else "server"
        return found

    def _write(self, found: dict[str, Where]) -> None:
        ensure_dir(self.path.parent)
        data = "".join(f"{thread_id} {where}\n" for thread_id, where in found.items())
        lock = FileLock(str(self.path) + ".lock")
        atomic_write(self.path, data.encode(), lock=lock)

    def get(self, thread_id: str) -> Where | None:
        """``"server"`` or ``"local"`` for a thread deleted here; None otherwise."""
        return self._read().get(thread_id)

    def add(self, thread_id: str, where: Where) -> None:
        """Note that ``thread_id`` was deleted (``where``: did the server have it)."""
        found = self._read()
        if found.get(thread_id) != where:
            found[thread_id] = where
            self._write(found)

    def forget(self, thread_id: str) -> None:
        """Drop the note (the thread was imported again on purpose)."""
        found = self._read()
        if found.pop(thread_id, None) is not None:
            self._write(found)


__all__ = ["Deletions", "Where"]
