"""Where the local index gets threads from: a small interface, so that the index knows nothing of
how a store keeps its files (issue 14 item 3; issue 15 will move stores into rooms).

A :class:`ThreadSource` says which threads changed since the index last saw them, by opaque
version strings (a file's stamp, a room's revision), and reads one thread as it is to be
indexed and shown (already redacted). :class:`FolderSource` is the source of a folder of
thread logs (:class:`loomsync.store.local.LocalThreadStore`); :class:`ListSource` of threads at
hand (:class:`loomsync.store.memory.MemoryThreadStore`, tests).

A read says where in the thread's log it stopped (:attr:`Read.position`: the generation and
offset of the commit read); given that position back, a source whose file only grew since
returns only the messages committed after it (issue 15 item 3: one more turn indexes one turn).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from loomsync.core.document import codec
from loomsync.core.document.model import Thread


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed since the versions the index holds: ``changed`` maps each new or changed
    thread id to its current version; ``gone`` lists ids the source no longer has."""

    changed: dict[str, str] = field(default_factory=dict)
    gone: list[str] = field(default_factory=list)


Position = tuple[str, int]
"""Where a read of a thread log stopped: (generation, byte offset of the commit read)."""


@dataclass(frozen=True, slots=True)
class Read:
    """One thread as the index takes it (redacted).

    Attributes:
        thread: the thread's fields, and its messages from message ``first`` on (all of them
            for a whole read; those committed after the position asked for, otherwise).
        first: the index in the whole thread of ``thread.messages[0]``.
        position: where the read stopped, to ask for what follows next time; None when the
            source cannot answer such a question (threads at hand).
    """

    thread: Thread
    first: int = 0
    position: Position | None = None


class ThreadSource(Protocol):
    """Threads the local index is kept up to date with."""

    def changed_since(self, known: Mapping[str, str]) -> Changes:
        """What changed relative to ``known`` (thread id → version the index holds)."""
        ...

    def read(self, thread_id: str, since: Position | None = None) -> Read | None:
        """The thread as it is to be indexed (redacted); None when it is gone or unreadable.
        With ``since`` (a position an earlier read gave): only what was committed after it
        when the log only grew since (``first`` > 0 then), else the whole thread."""
        ...


def diff(known: Mapping[str, str], current: Mapping[str, str]) -> Changes:
    """:class:`Changes` from the versions the index holds and the current ones."""
    changed = {tid: version for tid, version in current.items() if known.get(tid) != version}
    return Changes(changed, [tid for tid in known if tid not in current])


class FolderSource:
    """The thread files of a folder; a file's version is its stamp (inode, size, mtime and
    ctime in ns), so a rewrite, even of the same size within one second, is seen."""

    def __init__(
        self,
        folder: Path,
        read: Callable[[str, Position | None], Read | None],
        is_thread_file: Callable[[str], bool],
    ) -> None:
        """``read(thread id, since)`` parses and redacts one file, whole or after ``since``
        (see :meth:`ThreadSource.read`; None: unreadable, or gone); ``is_thread_file(name)``
        tells thread files from others."""
        self.folder = folder
        self._read = read
        self._is_thread_file = is_thread_file

    def changed_since(self, known: Mapping[str, str]) -> Changes:
        """Stat every thread file (no file is read) and compare with ``known``."""
        current: dict[str, str] = {}
        with os.scandir(self.folder) as found:
            for entry in found:
                if not self._is_thread_file(entry.name):
                    continue
                try:
                    stat = entry.stat()
                except FileNotFoundError:
                    continue
                stamp = f"{stat.st_ino}.{stat.st_size}.{stat.st_mtime_ns}.{stat.st_ctime_ns}"
                current[entry.name.partition(".")[0]] = stamp  # ids hold no dot
        return diff(known, current)

    def read(self, thread_id: str, since: Position | None = None) -> Read | None:
        """The file's thread, or what it gained since ``since`` (see ``__init__``)."""
        return self._read(thread_id, since)


class ListSource:
    """Threads at hand, each versioned by the digest of its document."""

    def __init__(self, threads: Iterable[Thread]) -> None:
        """Index these threads (one without an id is keyed by its place)."""
        self.threads = {str(t.id) if t.id else f"#{i}": t for i, t in enumerate(threads)}

    def changed_since(self, known: Mapping[str, str]) -> Changes:
        """Compare each thread's digest with ``known``."""
        current = {tid: codec.digest(codec.document(t)) for tid, t in self.threads.items()}
        return diff(known, current)

    def read(self, thread_id: str, since: Position | None = None) -> Read | None:
        """The whole thread (``since`` is not used: threads at hand have no log), or None."""
        del since
        thread = self.threads.get(thread_id)
        return Read(thread) if thread is not None else None


__all__ = ["Changes", "FolderSource", "ListSource", "Position", "Read", "ThreadSource", "diff"]
