"""SyncingThreadStore: local first, then background sync (API.md section 9).

``save`` writes the local file and a queue entry and returns: it never waits on the network.
A background thread pushes queue entries (see :mod:`loomsync.sync.engine`), backing off while the
server is away. ``save_and_sync`` is the one call that waits; ``retry_pending`` pushes all
pending entries now; ``pull`` fetches newer server copies.

A save also protects what others changed in the file since the writer's last save
(:mod:`loomsync.sync.saving`): if both added different messages the writer's copy is saved as a
fork (the returned thread then has the fork's id).

Private threads (``is_private``) are saved locally and never cause a request of any kind.

What is saved, queued and sent is redacted (issue 12, item 1): saves go through
:meth:`LocalThreadStore.prepare`, queued patches and the sync bases are redacted, and the HTTP
client redacts once more before anything leaves. :meth:`redact` rewrites a stored copy.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loomsync import edits
from loomsync.config import default_paths
from loomsync.core.document.model import Thread, Visibility
from loomsync.errors import (
    CorruptThreadError,
    ThreadNotFoundError,
)
from loomsync.store import legacy
from loomsync.store.local import LocalThreadStore, ThreadRef
from loomsync.store.summaries import stamp_of
from loomsync.store.summary import ArchivedFilter, SearchResults, SyncOutcome, Syntax, ThreadSummary
from loomsync.sync import forks, markers, onlinesearch, requeue, saving
from loomsync.sync.counts import QueueCounts, queue_counts
from loomsync.sync.deletions import Deletions
from loomsync.sync.engine import SyncEngine
from loomsync.sync.merge import snapshot, snapshot_of_head
from loomsync.sync.queue import QUEUE_FILE, PendingEntry, PendingSyncQueue
from loomsync.sync.threadstates import ThreadStates
from loomsync.sync.worker import BackgroundSync

if TYPE_CHECKING:  # the HTTP client is imported by whoever makes one; the detector when used
    from loomsync.core.secrets import Located
    from loomsync.http.client import Scope, ThreadSyncClient

log = logging.getLogger(__name__)

Report = Callable[[SyncOutcome], None]


def _changed_elsewhere(saved: Thread, current: Thread) -> bool:
    """True when the local copy now differs from what this save wrote by more than redaction
    markers: changes made elsewhere were merged in. A server that redacts more than this client
    (an allow-list here, issue 12 item 1) makes the local copy adopt its markers; that is the
    same save, reported ``synced``, not ``merged`` (issue 27 item 10)."""
    if snapshot(current) == snapshot(saved):
        return False
    dumped = current.model_dump(mode="json", exclude={"version", "updated_at"})
    original = saved.model_dump(mode="json", exclude={"version", "updated_at"})
    return not markers.is_redaction_of(dumped, original)


class SyncingThreadStore:
    """Local files plus a background sync to one server.

    Args:
        local: the local store (default: ``$XDG_DATA_HOME/loomsync/threads``).
        client: the server; None when not logged in (entries wait in the queue).
        sync_dir: queue and sync state (default ``$XDG_STATE_HOME/loomsync/sync``).
        background: run the background sync thread (needs ``client``).
        retry_base, retry_cap: queue backoff in seconds (first and longest delay).
        on_report: called (from any thread) with notable outcomes: forks, 410s, failures.

    Attributes:
        reports: the last 100 notable outcomes.
    """

    def __init__(
        self,
        local: LocalThreadStore | None = None,
        client: ThreadSyncClient | None = None,
        *,
        sync_dir: str | os.PathLike[str] | None = None,
        background: bool = True,
        retry_base: float = 1.0,
        retry_cap: float = 300.0,
        on_report: Report | None = None,
    ) -> None:
        self.local = local or LocalThreadStore()
        self.client = client
        folder = Path(sync_dir) if sync_dir is not None else default_paths().sync_dir
        self.states = ThreadStates(folder / "threads", self.local.lock, self.local.redaction)
        self.deletions = Deletions(folder / "deleted.txt")  # an import skips them (finding 2)
        self.queue = PendingSyncQueue(  # an unreadable file is rebuilt from the store (issue 15)
            folder / QUEUE_FILE,
            rebuild=lambda: requeue.changed_threads(self.local, self.states),
            backoff_cap=retry_cap,
        )
        self.local.known_sharing = legacy.known_sharing(self.states)  # files of the old client
        self.reports: collections.deque[SyncOutcome] = collections.deque(maxlen=100)
        self._on_report = on_report
        self.engine = SyncEngine(
            self.local,
            self.states,
            self.queue,
            client,
            locks_dir=folder / "locks",
            retry_base=retry_base,
            retry_cap=retry_cap,
            report=self._report,
        )
        self._saved = saving.SaveLog()  # each thread's last save by this store
        self._worker = BackgroundSync(self.engine, self.queue) if background and client else None

    def _wake(self) -> None:
        if self._worker is not None:
            self._worker.wake()

    def _report(self, outcome: SyncOutcome) -> None:
        self.reports.append(outcome)
        if self._on_report is not None:
            try:
                self._on_report(outcome)
            except Exception:  # a broken callback must not stop the sync
                log.exception("on_report callback failed")

    # -- reading ----------------------------------------------------------------------------

    def load(self, thread_id: ThreadRef) -> Thread:
        """The local copy (``version`` = the server version it is based on).

        Not on this machine but logged in: fetched from the server and kept locally.

        Raises:
            ThreadNotFoundError: neither here nor (when reachable) on the server.
            CorruptThreadError: the local file does not parse (it was moved aside).
        """
        if isinstance(thread_id, os.PathLike):
            return self.local.load_file(thread_id)
        key = str(edits.parse_id(thread_id))
        try:
            thread = self.local.load(key)
        except ThreadNotFoundError:
            if self.client is None or self.queue.has(key, "delete"):
                raise
            self.engine.adopt(self.client.get_thread(key), None)
            return self.load(key)  # the copy as stored here: redacted
        base = self.states.get(key).base
        # a shallow copy: the thread was just read from disk and nobody else holds it, and
        # with_fields would re-validate every message (a tenth of a second at 10,000)
        return thread.model_copy(update={"version": base.version}) if base else thread

    def load_file(self, path: ThreadRef) -> Thread:
        """Read a thread file by path (nothing is stored or sent)."""
        return self.local.load_file(path)

    def list(
        self,
        *,
        limit: int | None = None,
        workspace: str | None = None,
        archived: ArchivedFilter = "false",
    ) -> builtins.list[ThreadSummary]:
        """Local summaries (this machine's copies, synced or not), newest first."""
        return self.local.list(limit=limit, workspace=workspace, archived=archived)

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        syntax: Syntax = "plain",
        scope: Scope = "mine",
        workspace: str | None = None,
        cursor: str | None = None,
    ) -> SearchResults:
        """Server search (``syntax`` plain or web) merged by score with the threads only this
        machine holds, pending or private (:mod:`loomsync.sync.onlinesearch`); the local search
        when the server cannot answer (``fallback_reason`` set). Each hit has its ``origin``.
        ``scope`` and ``workspace`` filter as the server's search does (API.md section 6);
        ``cursor`` asks for the server's next page (``next_cursor`` of the results)."""

        def local_only() -> set[str]:
            queued = {e.thread_id for e in self.queue.entries()}
            return queued | {s.id for s in self.local.list() if s.is_private}

        return onlinesearch.search(
            self.client, self.local, local_only, query,
            limit=limit, syntax=syntax, scope=scope, workspace=workspace, cursor=cursor,
        )  # fmt: skip

    # -- writing -----------------------------------------------------------------------------

    def save(self, thread: Thread, *, read: Thread | None = None) -> Thread:
        """Write locally, queue the push, wake the background sync; returns at once.

        Returns the thread as stored: redacted (credentials replaced by markers), with the
        configured default visibility if it is new and sets none, merged with others' changes
        to the file, or, if both added different messages, the writer's copy saved as a fork
        (a new id).

        ``read``: the stored copy this writer loaded and changed, when it has not saved the
        thread through this object before (:func:`loomsync.sync.saving.merged_with_file`): a
        message it rewrote is then its change, not a divergent history (issue 17 item 1).
        """
        thread = edits.prepared(thread)
        thread_id = str(thread.id)
        if thread.is_private:
            saved = self.local.save(thread)
            self.queue.discard(thread_id)
            return saved
        with self.local.locked(thread_id):
            thread = self.local.prepare(thread)  # redacted before it is compared or written
            self.queue.add(thread_id, "save")  # intent first: a crash after it only re-sends
            result = saving.merged_with_file(self.local, self._saved, thread, read)
            if result is None:
                fork = self._save_as_fork(thread)
                self._wake()
                return fork
            self.local.save_prepared(result, redacted=result is thread)
            stamp = stamp_of(self.local.path(thread_id).stat())
            if result is thread:  # the file holds the writer's copy: its commit says it all
                head = self.local.committed(thread_id)
                taken = snapshot_of_head(head) if head is not None else snapshot(thread)
                self._saved.put(thread_id, saving.LastSave(taken, stamp, False))
            else:  # a merge: the writer's own copy stays the ancestor of its next save
                mine = snapshot(thread)
                merged = snapshot(result) != mine
                self._saved.put(thread_id, saving.LastSave(mine, stamp, merged))
        self._wake()
        return result

    def _save_as_fork(self, thread: Thread) -> Thread:
        """Save a writer's divergent copy as a fork (:func:`loomsync.sync.saving.fork_target`)."""
        thread_id = str(thread.id)
        saved = self.save(saving.fork_target(self.local, self.states, thread))
        how = f"{thread_id} changed here meanwhile"
        outcome = dataclasses.replace(forks.forked(thread_id, str(saved.id), how), thread=saved)
        log.warning("%s", outcome.detail)
        self._report(outcome)
        return saved

    def save_and_sync(self, thread: Thread) -> SyncOutcome:
        """Save, then push this thread now (waits on the network), and say what happened
        (issue 27, item 10; :mod:`loomsync.sync.forks`):

        - ``"synced"``: the server holds this copy; ``"merged"``: it holds this copy merged
          with changes made elsewhere (``thread`` is the merged copy);
        - ``"forked"``: another copy reached the server first and both added messages: the
          server's copy stays under the thread's id, this one was saved as ``fork_id`` and
          sent too (``thread`` is the fork), whether this call, the background sync or
          another process on the store made the fork;
        - ``"pending"`` (kept in the queue; ``detail`` says why, ``unreachable`` when the
          server could not be reached), ``"failed"``, ``"token_refused"``, ``"gone"``; with
          ``fork_id`` set when it is the fork that is not on the server yet.

        Never raises for the network."""
        thread = edits.prepared(thread)
        thread_id = str(thread.id)
        before = forks.fork_ids(self.states, [thread_id])
        saved = self.save(thread)
        if saved.is_private:
            return SyncOutcome(str(saved.id), "private", detail="private: never sent", thread=saved)
        if str(saved.id) != thread_id:  # the file changed here meanwhile: saved as a fork
            how = f"{thread_id} changed here meanwhile"
            return forks.send_fork(self, forks.forked(thread_id, str(saved.id), how))
        written = self.local.committed(thread_id)
        [outcome] = forks.with_forks(self.states, [self.sync_thread(thread_id)], before)
        if outcome.status == "forked" and outcome.fork_id is not None:
            return forks.send_fork(self, outcome)
        try:
            local = saving.unchanged(self.local, self.states, saved, written)
            current = None if local is not None else self.load(thread_id)
            merged = current is not None and _changed_elsewhere(saved, current)
            local = local or current or self.load(thread_id)
        except ThreadNotFoundError:
            local, merged = saved, False
        status = outcome.status
        if status == "up_to_date" and self.states.get(outcome.thread_id).base is not None:
            status = "synced"  # e.g. the background sync sent it first
        if status == "synced" and merged:  # the background sync merged: say so
            detail = "merged with changes made elsewhere, then sent"
            return dataclasses.replace(outcome, status="merged", detail=detail, thread=local)
        return dataclasses.replace(outcome, status=status, thread=local)

    def sync_thread(self, thread_id: str) -> SyncOutcome:
        """Push one thread's queue entries now; the outcome of the last one."""
        entries = [e for e in self.queue.entries() if e.thread_id == thread_id]
        if not entries:
            return SyncOutcome(thread_id, "up_to_date")
        outcomes = self.engine.run(entries, wait=True)
        return outcomes[-1] if outcomes else SyncOutcome(thread_id, "pending", detail="busy")

    def _enqueue_edit(self, thread: Thread, payload: dict[str, Any]) -> None:
        thread_id = str(thread.id)
        if thread.is_private:
            return
        payload = self.local.redaction.value(payload)  # the queue holds no credential
        if self.states.get(thread_id).base is None:
            self.queue.add(thread_id, "save")
            if "archived" in payload:
                self.queue.add(thread_id, "patch", {"archived": payload["archived"]})
        else:
            self.queue.add(thread_id, "patch", payload)
        self._wake()

    def _here(self, thread_id: str) -> str:
        """The id, after fetching the thread if only the server has it (see :meth:`load`)."""
        key = str(edits.parse_id(thread_id))
        if not self.local.exists(key) and self.states.get(key).base is None:
            self.load(key)
        return key

    def delete(self, thread_id: str) -> None:
        """Delete locally; queue the server delete (not for private or never-synced threads);
        note the deletion (:class:`~loomsync.sync.deletions.Deletions`) so an import does not
        make the thread again."""
        key = self._here(thread_id)
        with self.local.locked(key):
            try:
                private = self.local.load(key).is_private
            except CorruptThreadError:
                private = False
            except ThreadNotFoundError:
                if self.states.get(key).base is None:
                    raise
                private = False
            if self.local.exists(key):
                self.local.delete(key)
            # A save still queued (or being pushed by the background worker right now) may
            # create the thread on the server after this: queue the server delete too, behind it.
            on_server = self.states.get(key).base is not None or self.queue.has(key, "save")
            if private or not on_server:
                self.states.delete(key)
        self.deletions.add(key, "local" if private or not on_server else "server")
        if private or not on_server:
            self.queue.discard(key)
        else:
            self.queue.add(key, "delete")
            self._wake()

    def archive(self, thread_id: str) -> Thread:
        """Archive locally and on the server (queued ``PATCH {"archived": true}``)."""
        thread = self.local.archive(self._here(thread_id))
        self._enqueue_edit(thread, {"archived": True})
        return thread

    def unarchive(self, thread_id: str) -> Thread:
        """Unarchive locally and on the server."""
        thread = self.local.unarchive(self._here(thread_id))
        self._enqueue_edit(thread, {"archived": False})
        return thread

    def update_metadata(self, thread_id: str, patch: Mapping[str, Any]) -> Thread:
        """Merge-patch metadata locally; queue the same patch for the server."""
        thread = self.local.update_metadata(self._here(thread_id), patch)
        self._enqueue_edit(thread, {"metadata": dict(patch)})
        return thread

    def share(
        self,
        thread_id: str,
        *,
        visibility: Visibility | None = None,
        shared_with_support: bool | None = None,
    ) -> Thread:
        """Change visibility and/or support sharing locally; queue the PATCH."""
        thread = self.local.share(
            self._here(thread_id), visibility=visibility, shared_with_support=shared_with_support
        )
        self._enqueue_edit(thread, edits.sharing_patch(visibility, shared_with_support))
        return thread

    def fork(self, thread_id: str, *, up_to: int | None = None) -> Thread:
        """Fork locally (private visibility, like a server fork) and queue its upload."""
        return self.save(edits.forked(self.load(thread_id), up_to=up_to))

    def redact(self, thread_id: str) -> builtins.list[Located]:
        """Replace the credentials in this thread here and on the server (``loomsync redact``).

        The local copy is rewritten and queued, so the next push replaces the server's copy in
        full. A thread only on the server is fetched, redacted and queued the same way. Returns
        what was replaced (kind, path, message index, masked preview).

        Raises:
            ThreadNotFoundError: neither here nor (when reachable) on the server.
        """
        key = str(edits.parse_id(thread_id))
        if not self.local.exists(key) and self.client is not None:
            server = self.client.get_thread(key)
            found = self.local.redaction.scan(server)
            if not self.engine.adopt(server, None):
                return self.redact(key)
            return found
        with self.local.locked(key):
            found = self.local.redact(key)
            if found and not self.local.load(key).is_private:
                self.queue.add(key, "save")
        self._wake()
        return found

    # -- sync control ---------------------------------------------------------------------------

    def pending_count(self) -> int:
        """Queue entries still to send (failed ones not counted)."""
        return self.queue.pending_count()

    def counts(self) -> QueueCounts:
        """Pending, failed and waiting-for-login entries (:mod:`loomsync.sync.counts`): what
        ``loomsync sync`` and ``loomsync status`` print."""
        return queue_counts(self.queue.entries())

    def drop_failed(self, thread_id: str | None = None) -> builtins.list[PendingEntry]:
        """Remove the failed queue entries (of ``thread_id`` only, if given), as
        ``loomsync sync --drop ID`` / ``--discard-failed`` do (issue 16 item 2). Only the
        change the server refused is dropped: the local thread stays as it is, pending entries
        stay, and the rebuild of the queue from the store does not queue the thread again
        until it is saved again (``ThreadState.dropped_stamp``). Returns the entries removed."""
        failed = [e for e in self.queue.failed() if thread_id in (None, e.thread_id)]
        removed: builtins.list[PendingEntry] = []
        for key in dict.fromkeys(e.thread_id for e in failed):
            with self.local.locked(key):  # as a writer saves and enqueues
                state = self.states.get(key)
                try:
                    stamp = stamp_of(self.local.path(key).stat())
                except FileNotFoundError:
                    stamp = None  # a failed delete: nothing here to queue again
                if stamp is not None:
                    self.states.put(key, state.model_copy(update={"dropped_stamp": stamp}))
                removed += self.queue.drop_failed(key)
        return removed

    def status(self) -> builtins.list[PendingEntry]:
        """Every queue entry, pending and failed, with retry count and last error."""
        return self.queue.entries()

    def retry_pending(
        self, *, include_failed: bool = False, progress: Report | None = None
    ) -> builtins.list[SyncOutcome]:
        """Push every pending entry now, ignoring backoff (failed ones too if asked).

        Stops at the first network error (the rest stays pending). Never raises for the
        network: outcomes say what happened. A fork made meanwhile (by this run, the
        background sync or another process on the store) is reported ``"forked"`` with its
        id and sent in the same run (:mod:`loomsync.sync.forks`).
        """
        entries = [e for e in self.queue.entries() if include_failed or not e.failed]
        before = forks.fork_ids(self.states, {e.thread_id for e in entries})
        outcomes = forks.with_forks(
            self.states, self.engine.run(entries, wait=True, progress=progress), before
        )
        stopped = any(o.unreachable or o.status == "token_refused" for o in outcomes)
        for index, outcome in enumerate(outcomes):
            if outcome.status == "forked" and outcome.fork_id is not None and not stopped:
                outcomes[index] = forks.send_fork(self, outcome)
                stopped = outcomes[index].unreachable
        return outcomes

    def pull(self) -> builtins.list[SyncOutcome]:
        """Fetch newer server copies of this account's threads (see ``SyncEngine.pull``).

        Raises:
            SyncError: the listing failed (network, auth).
        """
        if self.client is None:
            return []
        return self.engine.pull()

    def rescan(self) -> requeue.Requeued:
        """Queue every non-private local thread that differs from its server base and has no
        queue entry; say so, and whether an unreadable queue was rebuilt (``loomsync sync``
        runs it every time: issue 15, item 4; :func:`loomsync.sync.requeue.requeue`). Reads the
        tail of every thread file that only grew since its base, the others whole."""
        return requeue.requeue(self.local, self.states, self.queue)

    def close(self, *, timeout: float = 5.0) -> None:
        """Stop the background sync (waiting up to ``timeout`` s) and close the client.
        Entries not sent stay in the queue for next time."""
        if self._worker is not None:
            self._worker.stop(timeout)
        self.queue.close()
        if self.client is not None:
            self.client.close()

    def __enter__(self) -> SyncingThreadStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["PendingSyncQueue", "SyncingThreadStore"]
