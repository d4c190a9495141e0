"""LocalThreadStore, the files under ``$XDG_DATA_HOME`` (the ThreadStore protocol it satisfies
is in :mod:`loomsync.store.api`, re-exported here).

Local files (API.md section 9 leaves the format to the client; issue 15 item 1):
``<data>/loomsync/threads/<id>.jsonl``, an append-only log (:mod:`loomsync.store.threadlog`),
mode 0600, written under a per-thread file lock, so two processes may save at once. A save
appends its new messages and a commit (one write, one fsync); a kill at any instant leaves
every earlier commit readable and the torn save is never served. Edits that are not appends
rewrite the file whole (atomically). Folders of the old ``<id>.json`` files are migrated when
opened (:mod:`loomsync.store.migrate`). A file that is not a valid log is reported (``problems``, a warning in the log, :class:`CorruptThreadError`
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
from typing import TYPE_CHECKING, Any, NoReturn

from filelock import BaseFileLock, FileLock

from loomsync import edits
from loomsync.config import default_paths
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Message, Thread, Visibility
from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store import migrate, threaddocs, threadlog
from loomsync.store.api import EditingMixin, ThreadRef, ThreadStore, read_thread_file
from loomsync.store.files import (
    DEFAULT_LOCK_TIMEOUT,
    atomic_write,
    ensure_dir,
    locked,
    remove_stray_temps,
)
from loomsync.store.legacy import sets_sharing, with_sharing
from loomsync.store.quarantine import move_redacted
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.store.summaries import SortKey, Stamp, SummaryIndex, stamp_of
from loomsync.store.summary import (
    ArchivedFilter,
    SearchResults,
    SyncOutcome,
    Syntax,
    ThreadSummary,
)
from loomsync.store.threaddocs import Known
from loomsync.store.threadlog import is_thread_file

if TYPE_CHECKING:  # the detector and the search load when used, not at start-up
    from loomsync.core.secrets import Located
    from loomsync.store.localsearch.source import FolderSource, Position, Read

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
        self._recent = threaddocs.Recent()
        self._guard = threading.Lock()
        self.removed_temp_files = remove_stray_temps(
            self.root,
            self._lock_of_file,
        )
        #: Old ``.json`` thread files converted by this object (:mod:`loomsync.store.migrate`).
        self.migrated = migrate.migrate(self)

    # -- files and locks ---------------------------------------------------------------

    def _lock_of_file(self, name: str) -> BaseFileLock:
        """The lock a writer of the store folder's file ``name`` holds while it writes."""
        if is_thread_file(name):
            return self.lock(threadlog.thread_id_of(name))
        if name == migrate.MARKER:
            return migrate.marker_lock(self)
        return self.index.lock

    def path(self, thread_id: str) -> Path:
        """The file of a thread id (validated, so an id can never name another path).

        Raises:
            InvalidInputError: not a thread id.
        """
        return self.root / f"{edits.parse_id(thread_id)}{threadlog.SUFFIX}"

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
        raise self.set_aside(thread_id, path, stamp, reason)

    def set_aside(
        self, thread_id: str, path: Path, stamp: Stamp | None, reason: str
    ) -> CorruptThreadError:
        """Move a corrupt file to ``.quarantine/`` (redacted) if it still has ``stamp`` (None:
        whatever it holds), report it (:attr:`problems`, a warning) and return the error."""
        moved: Path | None = None
        with self.locked(thread_id):
            try:
                if stamp is None or stamp_of(path.stat()) == stamp:
                    ensure_dir(self.quarantine_dir)
                    moved = self.quarantine_dir / f"{path.name}.{edits.now():%Y%m%dT%H%M%S%f}"
                    move_redacted(path, moved, self.redaction)
            except FileNotFoundError:
                moved = None
        error = CorruptThreadError(thread_id, path, reason, moved)
        self.problems.append(error)
        log.warning("%s", error)
        return error

    def load_stamped(self, thread_id: str, *, as_written: bool = False) -> tuple[Thread, Stamp]:
        """The thread and its file's stamp, for :meth:`save_if_unchanged`; a file that sets no
        visibility reads with :attr:`known_sharing` unless ``as_written``.

        Raises:
            ThreadNotFoundError: no file for this id.
            CorruptThreadError: the file is not a valid thread log (it was moved aside).
        """
        thread, stamp = self._read(thread_id, remember=True)
        return (thread if as_written else self._with_known_sharing(thread_id, thread)), stamp

    def _with_known_sharing(self, thread_id: str, thread: Thread) -> Thread:
        if self.known_sharing and not sets_sharing(thread):
            known = self.known_sharing(thread_id)
            return with_sharing(thread, known) if known else thread
        return thread

    def _read(self, thread_id: str, *, remember: bool) -> tuple[Thread, Stamp]:
        path = self.path(thread_id)
        try:
            with open(path, "rb") as handle:
                stamp = stamp_of(os.fstat(handle.fileno()))
                data = handle.read()
        except FileNotFoundError:
            raise ThreadNotFoundError(thread_id) from None
        try:
            head, docs = threadlog.parse(data)
            thread = threaddocs.thread_of(head.fields, docs)
            if thread.id is not None and thread.id != thread_id:
                raise ValueError(f"it holds thread {thread.id}")
        except ValueError as exc:
            self._quarantine(thread_id, path, stamp, str(exc))
        if thread.id is None:
            thread = edits.with_fields(thread, id=ThreadId.parse(thread_id))
        if remember:
            known = self._recent.get(thread_id)
            if known is None or (known.head, known.stamp) != (head, stamp):  # else keep what
                known = Known(head, stamp, list(thread.messages), redacted=False)  # was written
                self._recent.put(thread_id, known)
        return thread, stamp

    def _read_for_index(self, path: Path) -> Thread | None:
        thread_id = threadlog.thread_id_of(path.name)
        try:
            return self._with_known_sharing(thread_id, self._read(thread_id, remember=False)[0])
        except (CorruptThreadError, ThreadNotFoundError):
            return None

    def iter_threads(self) -> Iterator[Thread]:
        """Every readable thread (corrupt files are reported, quarantined and skipped)."""
        for path in sorted(self.root.iterdir()):
            if is_thread_file(path.name) and (thread := self._read_for_index(path)):
                yield thread

    # -- the log: heads, appends -----------------------------------------------------

    def head(self, thread_id: str) -> threadlog.Head | None:
        """The file's last commit, read from its end (O(commit line)); None if no file.

        Raises:
            CorruptThreadError: the file is not a valid thread log (it was moved aside).
        """
        path = self.path(thread_id)
        try:
            return threadlog.read_head(path)
        except FileNotFoundError:
            return None
        except ValueError as exc:
            self._quarantine(thread_id, path, None, str(exc))

    def messages_since(
        self, thread_id: str, generation: str, offset: int
    ) -> tuple[threadlog.Head, builtins.list[Message]] | None:
        """The file's head and the messages committed after its commit at byte ``offset`` of
        ``generation`` (O(what was appended since)); None when the file was rewritten since,
        ``offset`` is no commit of it, or there is no file.

        Raises:
            CorruptThreadError: the file is not a valid thread log (it was moved aside).
        """
        path = self.path(thread_id)
        try:
            found = threadlog.messages_since(path, generation, offset)
        except FileNotFoundError:
            return None
        except ValueError as exc:
            self._quarantine(thread_id, path, None, str(exc))
        if found is None:
            return None
        head, docs = found
        try:
            return head, [Message.model_validate(doc) for doc in docs]
        except ValueError:
            return None

    def committed(self, thread_id: str) -> threadlog.Head | None:
        """The head this object last wrote or read for the thread (memory only, no I/O)."""
        known = self._recent.get(thread_id)
        return known.head if known else None

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
        ``redacted``: the caller has just done that). Messages this object wrote or read last
        are not scanned again (see :meth:`save_prepared`); the same object when nothing changed."""
        thread = edits.prepared(thread)
        self._recent.new_save(str(thread.id))  # a save begins here: check its lists afresh
        if "visibility" not in thread.model_fields_set and not self.exists(str(thread.id)):
            thread = thread.model_copy(update={"visibility": self.default_visibility})
        if redacted:
            return thread
        return threaddocs.redacted_after(self.redaction, thread, self._recent.prefix(thread))

    def save(self, thread: Thread) -> Thread:
        """Write the thread under its lock; returns the thread as stored (see :meth:`prepare`
        and :meth:`save_prepared`)."""
        return self.save_prepared(self.prepare(thread), redacted=True)

    def save_prepared(self, thread: Thread, *, redacted: bool = False) -> Thread:
        """:meth:`save` of a thread :meth:`prepare` returned (``redacted``: as it returned it,
        so it is not scanned again) or merged from such threads (scanned: the merge may hold
        messages only read from the file).

        When the file's messages are a prefix of the thread's, only the new messages and a
        commit are appended (one write, one fsync: O(turn)); otherwise the file is rewritten
        whole (a new generation). The prefix is known without reading the file when the
        thread's first messages are the objects this store object last wrote or read and the
        file has not changed since; else it is checked against the file's chain digest.
        Changing a message object in place after it was saved is not seen by that check:
        replace it (``model_copy(update=…)``) to change it. Nothing is written when nothing
        changed.

        Raises:
            StoreLockedError: the thread's lock was not acquired in time.
            OSError: the write failed; the file still holds its last commit.
        """
        with self.locked(str(thread.id)):
            if not redacted:
                count = self._recent.prefix(thread)
                thread = threaddocs.redacted_after(self.redaction, thread, count)
            return self.write_as_is(thread, redacted=True)

    def write_as_is(self, thread: Thread, *, redacted: bool = False) -> Thread:
        """:meth:`save_prepared` without its redaction step (the migration of old files keeps
        their content as it was: the next save redacts it whole); ``redacted``: the caller
        redacted it. Returns ``thread``."""
        thread_id = str(thread.id)
        path = self.path(thread_id)
        with self.locked(thread_id):
            prior = self._recent.get(thread_id)
            head, count, same_objects = threaddocs.stored_count(prior, path, thread)
            fields = threaddocs.fields_of(thread)
            new = thread.messages[count:]
            if head is not None and count == head.count:
                if new or codec.loads(codec.dumps(fields)) != head.fields:
                    digest = threaddocs.chain_of(head.chain, new)
                    docs = threaddocs.message_docs(new)
                    head = threadlog.append(path, head, docs, fields, digest)
                    self.index.record(thread_id, head, thread)
            else:
                digest = threaddocs.chain_of(threadlog.EMPTY_CHAIN, thread.messages)
                docs = threaddocs.message_docs(thread.messages)
                head = threadlog.write_full(
                    path, thread_id, fields, docs, digest, lock=self.lock(thread_id)
                )
                self.index.record(thread_id, head, thread)
            if same_objects and prior is not None and count == head.count - len(new):
                messages = prior.messages  # this object's own list: extended, not copied
                messages.extend(new)
            else:
                messages = list(thread.messages)
            known = Known(head, stamp_of(path.stat()), messages, redacted)
            self._recent.put(thread_id, known)
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
            self.save_prepared(self.prepare(thread, redacted=redacted), redacted=True)
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
        after: SortKey | None = None,
        owner: str | None = None,
    ) -> builtins.list[ThreadSummary]:
        """Summaries from the summary index (:mod:`loomsync.store.summaries`: one query; a
        file it has no current row for has its last commit read, not its messages), newest
        activity first; ``after``: only those after that key (a keyset page,
        :func:`loomsync.store.summaries.sort_key`); ``owner``: only that user's threads and
        those never on a server (:meth:`~loomsync.store.summaries.SummaryIndex.list`)."""
        return self.index.list(
            self._listed,
            limit=limit,
            workspace=workspace,
            archived=archived,
            after=after,
            owner=owner,
        )

    def count(
        self,
        *,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
        after: SortKey | None = None,
        owner: str | None = None,
    ) -> int:
        """How many summaries :meth:`list` gives with no limit (one ``COUNT`` of the index)."""
        return self.index.count(
            self._listed, workspace=workspace, archived=archived, after=after, owner=owner
        )

    def _listed(self, thread_id: str) -> tuple[threadlog.Head, Thread] | None:
        """A thread's head and fields (no message read) for the summary index; None when the
        file is gone or not a log (then moved aside)."""
        try:
            head = self.head(thread_id)
        except CorruptThreadError:
            return None
        if head is None:
            return None
        thread = threaddocs.thread_of(head.fields, [])
        if self.known_sharing and not sets_sharing(thread):
            known = self.known_sharing(thread_id)
            thread = with_sharing(thread, known) if known else thread
        return head, thread

    def _indexed(self, thread_id: str, since: Position | None) -> Read | None:
        """What the search index takes of a thread (redacted): the messages committed after
        ``since`` when the file only grew since, else the whole thread."""
        head: threadlog.Head | None
        try:
            if since is not None and (found := self.messages_since(thread_id, *since)):
                head, messages = found
                thread = threaddocs.with_messages(threaddocs.thread_of(head.fields, []), messages)
                first = head.count - len(messages)
            else:
                head = self.head(thread_id)  # before the read: a save between is read again
                thread = self._read(thread_id, remember=False)[0]
                first = 0
        except (CorruptThreadError, ThreadNotFoundError):
            return None
        if head is None:
            return None
        from loomsync.store.localsearch.source import Read

        return Read(self.redaction.thread(thread), first, (head.generation, head.offset))

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
        from loomsync.store.localsearch import INDEX_NAME, search_source

        path = self.root / INDEX_NAME
        hits = search_source(self.search_source(), query, path=path, limit=limit, syntax=syntax)
        return SearchResults(hits=[h.model_copy(update={"origin": "local"}) for h in hits])

    def search_source(self) -> FolderSource:
        """This folder as the local index's source of threads (read and redacted; a file that
        only grew since the position asked for gives its new messages only)."""
        from loomsync.store.localsearch.source import FolderSource

        return FolderSource(self.root, self._indexed, is_thread_file)

    def delete(self, thread_id: str) -> None:
        """Remove the thread file. Raises ThreadNotFoundError if there is none."""
        with self.locked(thread_id):
            self._recent.drop(thread_id)
            try:
                self.path(thread_id).unlink()
            except FileNotFoundError:
                raise ThreadNotFoundError(thread_id) from None
            finally:
                self.index.forget(thread_id)

    def close(self) -> None:
        """Close the summary index's database (it reopens when next used)."""
        self.index.close()


__all__ = [
    "EditingMixin",
    "LocalThreadStore",
    "ThreadRef",
    "ThreadStore",
    "atomic_write",
    "read_thread_file",
]
