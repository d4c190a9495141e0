"""LocalThreadStore, the files under ``$XDG_DATA_HOME`` (the ThreadStore protocol it satisfies
is in :mod:`loomsync.store.api`, re-exported here).

Local files (API.md section 9): ``<data>/loomsync/threads/<id>.json``, pretty JSON, mode 0600,
written with :func:`atomic_write` under a per-thread file lock, so two processes may save at
once and a kill at any instant leaves the old file or the new one, never a torn one. A file
that does not parse is reported (``problems``, a warning in the log, :class:`CorruptThreadError`
from ``load``) and moved to ``.quarantine/``; it is never uploaded and never replaced by an
empty thread.

What is written is redacted (issue 12, item 1): every save goes through :meth:`prepare`, so the
files, the quarantine copies and the summary index hold ``[REDACTED:<kind>]`` markers, never a
credential. A new thread that does not choose its visibility gets the store's
``default_visibility`` (``private`` unless configured, issue 12 item 5).
"""

from __future__ import annotations

import builtins
import logging
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

from filelock import BaseFileLock, FileLock

from loomsync import edits
from loomsync.config import default_paths
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread, Visibility
from loomsync.core.secrets import Located
from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store.api import EditingMixin, ThreadRef, ThreadStore, read_thread_file
from loomsync.store.files import (
    DEFAULT_LOCK_TIMEOUT,
    atomic_write,
    ensure_dir,
    locked,
    remove_stray_temps,
)
from loomsync.store.legacy import sets_sharing, with_sharing
from loomsync.store.localsearch import INDEX_NAME, FolderSource, search_source
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.store.summaries import Stamp, SummaryIndex, is_thread_file, stamp_of
from loomsync.store.summary import (
    ArchivedFilter,
    SearchResults,
    SyncOutcome,
    Syntax,
    ThreadSummary,
    keep,
)

log = logging.getLogger(__name__)


class LocalThreadStore(EditingMixin):
    """Threads as files in one folder (default ``$XDG_DATA_HOME/loomsync/threads``).

    Safe across threads and processes. Creating the store removes temporary files that killed
    writers left behind (``removed_temp_files``).

    Attributes:
        root: the folder.
        problems: corrupt files found (and quarantined) by this object.
        index: the summary cache behind :meth:`list`.
        redaction: the redaction step every write goes through.
        default_visibility: the visibility of a new thread that does not set one.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        redaction: Redaction | None = None,
        default_visibility: Visibility = "private",
    ) -> None:
        """Open (creating if needed) the folder ``root``; ``lock_timeout`` in seconds;
        ``redaction`` defaults to the detector without an allow-list."""
        self.root = ensure_dir(Path(root) if root is not None else default_paths().threads_dir)
        self.locks_dir = ensure_dir(self.root / ".locks")
        self.quarantine_dir = self.root / ".quarantine"
        self.lock_timeout = lock_timeout
        self.redaction = redaction or default_redaction()
        self.default_visibility: Visibility = default_visibility
        #: Sharing a file that sets no visibility reads as (None: the model's defaults); see
        #: :mod:`loomsync.store.legacy` (SyncingThreadStore installs the sync base's).
        self.known_sharing: Callable[[str], dict[str, Any] | None] | None = None
        self.problems: builtins.list[CorruptThreadError] = []
        self.index = SummaryIndex(self.root, redaction=self.redaction)
        self._locks: dict[str, FileLock] = {}
        self._guard = threading.Lock()
        self.removed_temp_files = remove_stray_temps(
            self.root,
            lambda name: self.lock(name[:-5]) if is_thread_file(name) else self.index.lock,
        )

    # -- files and locks ---------------------------------------------------------------

    def path(self, thread_id: str) -> Path:
        """The file of a thread id (validated, so an id can never name another path).

        Raises:
            InvalidInputError: not a thread id.
        """
        return self.root / f"{edits.parse_id(thread_id)}.json"

    def lock(self, thread_id: str) -> BaseFileLock:
        """The re-entrant lock of one thread file (hold it with ``files.locked``)."""
        with self._guard:
            lock = self._locks.get(thread_id)
            if lock is None:
                lock = FileLock(str(self.locks_dir / f"{thread_id}.lock"))
                self._locks[thread_id] = lock
            return lock

    def locked(self, thread_id: str) -> Any:
        """Context manager holding one thread's lock (re-entrant within a thread)."""
        return locked(self.lock(str(edits.parse_id(thread_id))), self.lock_timeout)

    def exists(self, thread_id: str) -> bool:
        """True if a file for this thread exists."""
        return self.path(thread_id).is_file()

    def _quarantine(self, thread_id: str, path: Path, stamp: Stamp | None, reason: str) -> NoReturn:
        moved: Path | None = None
        with self.locked(thread_id):
            try:
                if stamp is None or stamp_of(path.stat()) == stamp:
                    ensure_dir(self.quarantine_dir)
                    moved = self.quarantine_dir / f"{path.name}.{edits.now():%Y%m%dT%H%M%S%f}"
                    self._move_redacted(path, moved)
            except FileNotFoundError:
                moved = None
        error = CorruptThreadError(thread_id, path, reason, moved)
        self.problems.append(error)
        log.warning("%s", error)
        raise error

    def _move_redacted(self, path: Path, moved: Path) -> None:
        """Move a corrupt file aside, its text redacted (its bytes kept where nothing is)."""
        raw = path.read_bytes()
        text = raw.decode("utf-8", "surrogateescape")
        clean = self.redaction.text(text)
        if clean is text:
            os.replace(path, moved)
            return
        atomic_write(moved, clean.encode("utf-8", "surrogateescape"))
        path.unlink()

    def load_stamped(self, thread_id: str, *, as_written: bool = False) -> tuple[Thread, Stamp]:
        """The thread and its file's stamp, for :meth:`save_if_unchanged`; a file that sets no
        visibility reads with :attr:`known_sharing` unless ``as_written``.

        Raises:
            ThreadNotFoundError: no file for this id.
            CorruptThreadError: the file does not parse (it was moved aside).
        """
        path = self.path(thread_id)
        try:
            with open(path, "rb") as handle:
                stamp = stamp_of(os.fstat(handle.fileno()))
                data = handle.read()
        except FileNotFoundError:
            raise ThreadNotFoundError(thread_id) from None
        try:
            thread = codec.decode_thread(data)
            if thread.id is not None and thread.id != thread_id:
                raise ValueError(f"it holds thread {thread.id}")
        except ValueError as exc:
            self._quarantine(thread_id, path, stamp, str(exc))
        if thread.id is None:
            thread = edits.with_fields(thread, id=ThreadId.parse(thread_id))
        if not as_written and self.known_sharing and not sets_sharing(thread):
            known = self.known_sharing(thread_id)
            thread = with_sharing(thread, known) if known else thread
        return thread, stamp

    def _read_for_index(self, path: Path) -> Thread | None:
        try:
            return self.load_stamped(path.name[: -len(".json")])[0]
        except (CorruptThreadError, ThreadNotFoundError):
            return None

    def iter_threads(self) -> Iterator[Thread]:
        """Every readable thread (corrupt files are reported, quarantined and skipped)."""
        for path in sorted(self.root.iterdir()):
            if is_thread_file(path.name) and (thread := self._read_for_index(path)):
                yield thread

    # -- ThreadStore ------------------------------------------------------------------

    def load(self, thread_id: ThreadRef) -> Thread:
        """The thread; a ``Path`` reads that file instead (see :meth:`load_file`).

        Raises:
            ThreadNotFoundError, CorruptThreadError, InvalidInputError.
        """
        if isinstance(thread_id, os.PathLike):
            return self.load_file(thread_id)
        return self.load_stamped(thread_id)[0]

    def load_file(self, path: ThreadRef) -> Thread:
        """Read any thread file by path (nothing is moved). Raises InvalidThreadFileError."""
        return read_thread_file(Path(path))

    def prepare(self, thread: Thread, *, redacted: bool = False) -> Thread:
        """The thread as :meth:`save` stores it: an id and ``created_at`` when missing, the
        default visibility when it is new here and sets none, credentials redacted (unless
        ``redacted``: the caller has just done that)."""
        thread = edits.prepared(thread)
        if "visibility" not in thread.model_fields_set and not self.exists(str(thread.id)):
            thread = thread.model_copy(update={"visibility": self.default_visibility})
        return thread if redacted else self.redaction.thread(thread)

    def save(self, thread: Thread) -> Thread:
        """Write the thread file atomically under its lock; returns the thread as stored
        (see :meth:`prepare`)."""
        return self.save_prepared(self.prepare(thread))

    def save_prepared(self, thread: Thread) -> Thread:
        """:meth:`save` of a thread :meth:`prepare` returned (or merged from such threads):
        written as it is."""
        path = self.path(str(thread.id))
        atomic_write(
            path,
            codec.encode_thread(thread),
            lock=self.lock(str(thread.id)),
            timeout=self.lock_timeout,
        )
        return thread

    def save_if_unchanged(
        self, thread: Thread, stamp: Stamp | None, *, redacted: bool = False
    ) -> bool:
        """Save only if the file still has ``stamp`` (None: only if it does not exist);
        ``redacted``: the caller redacted the thread already (see :meth:`prepare`).

        Returns False, writing nothing, when someone saved in between.
        """
        thread_id = str(thread.id)
        with self.locked(thread_id):
            try:
                current: Stamp | None = stamp_of(self.path(thread_id).stat())
            except FileNotFoundError:
                current = None
            if current != stamp:
                return False
            self.save_prepared(self.prepare(thread, redacted=redacted))
            return True

    def edit(self, thread_id: str, change: Callable[[Thread], Thread]) -> Thread:
        """Load, change and save one thread under its lock; returns the saved thread."""
        with self.locked(thread_id):
            return self.save(change(self.load_stamped(thread_id)[0]))

    def redact(self, thread_id: str) -> builtins.list[Located]:
        """Rewrite the local copy with its credentials replaced (``loomsync redact``); what
        was replaced (kind, path, message index, masked preview), empty when nothing was."""
        with self.locked(thread_id):
            thread = self.load_stamped(thread_id)[0]
            found = self.redaction.scan(thread)
            if found:
                self.save(thread)
            return found

    def save_and_sync(self, thread: Thread) -> SyncOutcome:
        """Save; there is no server, so the outcome is ``"local"``."""
        saved = self.save(thread)
        return SyncOutcome(str(saved.id), "local", detail="local store", thread=saved)

    def list(
        self,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
    ) -> builtins.list[ThreadSummary]:
        """Summaries from the index (only changed files are parsed), newest first."""
        rows = [
            s
            for s in self.index.summaries(self._read_for_index)
            if keep(s, archived=archived, workspace=workspace)
        ]
        rows.sort(key=lambda s: s.sort_key, reverse=True)
        return rows if limit is None else rows[:limit]

    def search(self, query: str, *, limit: int = 20, syntax: Syntax = "plain") -> SearchResults:
        """Search every unarchived local thread with the server's semantics (issue 14 item 3,
        :mod:`loomsync.store.localsearch`): the index ``.search.sqlite3`` in the store folder is
        brought up to date first (only files changed since are read). Threads are indexed
        redacted: a file an older client wrote unredacted is found and quoted in its redacted
        form. ``syntax``: ``plain`` (ranked, nothing required) or ``web`` (strict: quoted
        phrases, ``-word``, ``or``; API.md section 6). Hits have ``origin="local"``.

        Raises:
            ValueError: ``limit`` < 1.
        """
        path = self.root / INDEX_NAME
        hits = search_source(self.search_source(), query, path=path, limit=limit, syntax=syntax)
        return SearchResults(hits=[h.model_copy(update={"origin": "local"}) for h in hits])

    def search_source(self) -> FolderSource:
        """This folder as the local index's source of threads (read and redacted)."""

        def read(thread_id: str) -> Thread | None:
            thread = self._read_for_index(self.root / f"{thread_id}.json")
            return self.redaction.thread(thread) if thread is not None else None

        return FolderSource(self.root, read, is_thread_file)

    def delete(self, thread_id: str) -> None:
        """Remove the thread file. Raises ThreadNotFoundError if there is none."""
        with self.locked(thread_id):
            try:
                self.path(thread_id).unlink()
            except FileNotFoundError:
                raise ThreadNotFoundError(thread_id) from None

    def close(self) -> None:
        """Nothing to release."""


__all__ = [
    "EditingMixin",
    "LocalThreadStore",
    "ThreadRef",
    "ThreadStore",
    "atomic_write",
    "read_thread_file",
]
