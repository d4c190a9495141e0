"""A small cache of thread summaries, so listing 10,000 local threads parses no thread file.

``<threads folder>/.index.json`` maps each thread id to the summary of its file and the file's
stamp (inode, size, mtime and ctime in ns). A listing stats every file (cheap) and parses only
the files whose stamp changed; a missing or unreadable index is rebuilt from the files. Saves do
not touch the index: it is refreshed lazily by the next listing. Summaries are redacted before
they are cached (issue 12, item 1), even those of files written before redaction existed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from filelock import FileLock

from loomsync.core.document import codec
from loomsync.core.document.model import Thread
from loomsync.errors import StoreLockedError
from loomsync.store.files import atomic_write
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.store.summary import ThreadSummary
from loomsync.store.threadlog import Head, is_thread_file, thread_id_of

log = logging.getLogger(__name__)

INDEX_NAME = ".index.json"
INDEX_FORMAT = 1
Stamp = tuple[int, int, int, int]


def stamp_of(stat: os.stat_result) -> Stamp:
    """A file's identity and version: (inode, size, mtime ns, ctime ns)."""
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class SummaryIndex:
    """Summaries of the thread files in one folder, cached in ``.index.json``.

    Attributes:
        files_parsed: thread files parsed by this object so far (tests watch it).
        lock: held while the index file is written.
    """

    def __init__(
        self, folder: Path, *, lock_timeout: float = 5.0, redaction: Redaction | None = None
    ) -> None:
        """Index ``folder``; ``lock_timeout`` (s) bounds the wait to write the index file;
        ``redaction`` redacts each summary before it is cached."""
        self.folder = folder
        self.redaction = redaction or default_redaction()
        self.path = folder / INDEX_NAME
        self.lock = FileLock(str(folder / ".locks" / "index.lock"))
        self._lock_timeout = lock_timeout
        self.files_parsed = 0

    def _read(self) -> dict[str, Any]:
        try:
            raw = codec.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            log.info("thread index %s is unreadable; rebuilding it", self.path)
            return {}
        if not isinstance(raw, dict) or raw.get("format") != INDEX_FORMAT:
            return {}
        entries = raw.get("entries")
        return entries if isinstance(entries, dict) else {}

    def _write(self, entries: dict[str, Any]) -> None:
        data = codec.dumps({"format": INDEX_FORMAT, "entries": entries})
        try:
            atomic_write(self.path, data, lock=self.lock, timeout=self._lock_timeout)
        except (StoreLockedError, OSError) as exc:  # a cache: the next listing tries again
            log.info("could not write thread index %s: %s", self.path, exc)

    def record(self, thread_id: str, head: Head, thread: Thread) -> None:
        """Called by the store after every write of a thread file (under its lock): ``head``
        is the file's new last commit, ``thread`` what it holds. Nothing yet: listings find
        changed files by their stamps."""

    def summaries(self, read: Callable[[Path], Thread | None]) -> list[ThreadSummary]:
        """Summaries of every readable thread file in the folder, in no particular order.

        Args:
            read: parses one thread file; returns None for a file that is not a valid thread
                (the caller reports and quarantines it).
        """
        cached = self._read()
        fresh: dict[str, Any] = {}
        changed = False
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if not is_thread_file(entry.name):
                    continue
                try:
                    stamp = list(stamp_of(entry.stat()))
                except FileNotFoundError:
                    continue
                thread_id = thread_id_of(entry.name)
                hit = cached.get(thread_id)
                if isinstance(hit, dict) and hit.get("stamp") == stamp:
                    fresh[thread_id] = hit
                    continue
                changed = True
                self.files_parsed += 1
                thread = read(Path(entry.path))
                if thread is not None:
                    summary = self.redaction.value(ThreadSummary.of(thread).model_dump(mode="json"))
                    fresh[thread_id] = {"stamp": stamp, "summary": summary}
        if changed or fresh.keys() != cached.keys():
            self._write(fresh)
        return [ThreadSummary.model_validate(entry["summary"]) for entry in fresh.values()]


__all__ = ["INDEX_NAME", "Stamp", "SummaryIndex", "is_thread_file", "stamp_of"]
