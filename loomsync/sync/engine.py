"""The sync engine behind SyncingThreadStore: push queue entries, pull newer server copies.

Push of one thread (API.md section 9):

1. While the file only grew since the base's commit (the base records the file's generation
   and that commit's offset), plan from what was appended since
   (:func:`loomsync.sync.appended.plan_from_file`): the last commit and the new messages,
   O(turn) whatever the thread's length. Otherwise read the whole local copy.
   Private: drop the entry, send nothing.
2. :func:`loomsync.sync.merge.plan_push` against the thread's base: nothing, ``POST …/messages``
   with only the new messages (If-Match: base), or ``PUT`` (If-Match: base; 0 creates). Once
   sent, the new base records the commit it describes, so the next push is O(turn) again.
3. On 409, merge with the server's ``current``: prefix either way, keep the longer history and
   go again from the server's version; divergent, save the local side as a fork (new id,
   ``metadata.extra.forked_from``), adopt the server copy, report ``"forked"``.
4. 410: keep the local copy, mark the entry failed ("deleted on the server"), report ``"gone"``.
   413, 422 and other refusals: mark failed with the server's reason; everything else goes on.
   Network errors, 408, 429, 5xx: keep the entry, back off, stop this run (the server is away).
5. 401 (:class:`~loomsync.errors.TokenRefusedError`: the token expired, was revoked or is not
   valid; issue 16 item 3): not "offline" and not this entry's failure. The entry stays pending
   for a new login (:meth:`~loomsync.sync.queue.PendingSyncQueue.wait_for_login`: no retry
   counted, no backoff of its own), the run stops with a ``"token_refused"`` outcome, and
   :attr:`SyncEngine.token_refused` is set until a request succeeds again, so the background
   sync backs off as a whole (:class:`loomsync.sync.worker.BackgroundSync`) instead of trying
   every entry in turn.

A server that redacts more than this client (issue 12, item 1) answers a PUT with a copy that
differs only by ``[REDACTED:<kind>]`` markers: they are written into the local file and the
base, so nothing loops or forks (the merges of :mod:`loomsync.sync.merge` treat such copies as equal
too). Copies adopted from the server are redacted like every save; one that the redaction
changed is queued, so the server's copy is replaced.

409 merges and the server's markers: :mod:`loomsync.sync.conflicts`. Local writes made here
(merges, adoptions) are compare-and-swap on the file's stamp, under the
thread's lock: a writer that saved meanwhile is never overwritten; the push starts over instead.
Only one process pushes a thread at a time (a per-thread sync lock).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.document.model import Metadata, Thread
from loomsync.errors import (
    AuthError,
    ConflictError,
    CorruptThreadError,
    GoneError,
    NetworkError,
    RefusedError,
    RemoteNotFoundError,
    ServerError,
    SyncError,
    ThreadNotFoundError,
    TokenRefusedError,
    token_refused_text,
)
from loomsync.store.files import ensure_dir
from loomsync.store.legacy import take_sharing
from loomsync.store.local import LocalThreadStore
from loomsync.store.summaries import Stamp, stamp_of
from loomsync.store.summary import SyncOutcome
from loomsync.store.threadlog import Head
from loomsync.sync import conflicts, pulling
from loomsync.sync.appended import plan_from_file
from loomsync.sync.merge import (
    Push,
    SyncBase,
    plan_push,
    snapshot,
    sync_base,
)
from loomsync.sync.queue import PendingEntry, PendingSyncQueue
from loomsync.sync.threadstates import ThreadStates

if TYPE_CHECKING:  # the HTTP client is imported by whoever makes one
    from loomsync.http.client import ThreadSyncClient

log = logging.getLogger(__name__)

MAX_ROUNDS = 5  # conflict rounds for one push before leaving it for later
SYNC_LOCK_WAIT = 60.0  # seconds an explicit sync waits for another process syncing a thread


class StopRun(Exception):
    """The server is unreachable or refuses the token: no point trying the next entries."""

    def __init__(self, outcome: SyncOutcome) -> None:
        super().__init__(outcome.detail)
        self.outcome = outcome


class SyncEngine:
    """Pushes and pulls for one local store.

    Args:
        local: the thread files.
        states: per-thread sync state (base version, last save).
        queue: the pending queue.
        client: the server (None: not logged in; entries stay pending).
        locks_dir: folder of the per-thread sync locks.
        retry_base, retry_cap: queue backoff in seconds (first delay, longest delay).
        report: called with every notable outcome (forked, gone, failed).

    Attributes:
        read_stamps: per thread, the file's stamp when the running push read it (a save
            after it sends the entry again).
        token_refused: the last 401 (the server refused the token), until a request of an
            entry succeeds again; None while the token is taken.
        merged: the threads whose running push took changes made elsewhere into the local
            copy on a 409 (its outcome is then ``"merged"``, issue 27 item 10).
    """

    def __init__(
        self,
        local: LocalThreadStore,
        states: ThreadStates,
        queue: PendingSyncQueue,
        client: ThreadSyncClient | None,
        *,
        locks_dir: Path,
        retry_base: float,
        retry_cap: float,
        report: Callable[[SyncOutcome], None],
    ) -> None:
        self.local = local
        self.states = states
        self.queue = queue
        self.client = client
        self.locks_dir = ensure_dir(locks_dir)
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.report = report
        self.read_stamps: dict[str, Stamp] = {}  # file stamp each push read, per thread
        self.merged: set[str] = set()  # threads whose running push merged others' changes
        self.token_refused: TokenRefusedError | None = None

    def sync_lock(self, thread_id: str) -> FileLock:
        """The lock a process holds while it syncs one thread."""
        return FileLock(str(self.locks_dir / f"{thread_id}.lock"))

    # -- running queue entries ----------------------------------------------------------

    def run(
        self,
        entries: list[PendingEntry],
        *,
        wait: bool,
        progress: Callable[[SyncOutcome], None] | None = None,
    ) -> list[SyncOutcome]:
        """Process entries thread by thread; stop early when the server is unreachable.

        Args:
            entries: the entries to try (any order; grouped per thread, oldest first).
            wait: wait for another process syncing the same thread (else skip that thread).
            progress: called after each entry with its outcome.
        """
        groups: dict[str, list[PendingEntry]] = {}
        for entry in entries:
            groups.setdefault(entry.thread_id, []).append(entry)
        outcomes: list[SyncOutcome] = []
        for thread_id, group in groups.items():
            lock = self.sync_lock(thread_id)
            try:
                lock.acquire(timeout=SYNC_LOCK_WAIT if wait else 0)
            except Timeout:
                continue
            try:
                for entry in self._ordered(thread_id, group):
                    outcome = self._attempt(entry)
                    outcomes.append(outcome)
                    if progress:
                        progress(outcome)
            except StopRun as stop:
                outcomes.append(stop.outcome)
                if progress:
                    progress(stop.outcome)
                break
            finally:
                lock.release()
        return outcomes

    def _ordered(self, thread_id: str, group: list[PendingEntry]) -> list[PendingEntry]:
        """Delete first; then patch before save if the server has the thread, else after.

        A widening patch (:func:`loomsync.edits.widens`) never goes before a save of the same
        thread: the save may be the redacted copy (issue 12, items 1 and 5), so all patches
        then follow the save, in their own order (a later narrowing patch stays last)."""
        has_base = self.states.get(thread_id).base is not None
        ops = {e.op for e in group}
        held = "save" in ops and any(e.op == "patch" and edits.widens(e.payload) for e in group)
        rank = {"delete": 0, "patch": 1 if has_base and not held else 3, "save": 2}
        return sorted(group, key=lambda e: rank[e.op])

    def _attempt(self, entry: PendingEntry) -> SyncOutcome:
        thread_id, op = entry.thread_id, entry.op
        if self.client is None:
            return SyncOutcome(thread_id, "pending", op, "not logged in to a server")
        try:
            if op == "delete":
                outcome = self._delete(thread_id)
            elif op == "patch":
                outcome = self._patch(thread_id, entry.payload or {})
            else:
                outcome = self.push(thread_id)
        except (NetworkError, ServerError) as exc:
            self.queue.retry_later(entry, str(exc), base=self.retry_base, cap=self.retry_cap)
            outcome = SyncOutcome(thread_id, "pending", op, str(exc), unreachable=True)
            if isinstance(exc, NetworkError):
                raise StopRun(outcome) from None
            return outcome
        except TokenRefusedError as exc:
            self.token_refused = exc
            detail = token_refused_text(self.client.server_url, exc.detail or str(exc.status))
            self.queue.wait_for_login(entry, detail)
            raise StopRun(SyncOutcome(thread_id, "token_refused", op, detail)) from None
        except AuthError as exc:
            return self._failed(entry, f"refused by the server ({exc.status}): {exc.detail or exc}")
        except GoneError:
            return self._failed(entry, "deleted on the server; the local copy is kept", "gone")
        except (RefusedError, SyncError) as exc:
            return self._failed(entry, f"refused by the server ({exc.status}): {exc.detail or exc}")
        except CorruptThreadError as exc:
            return self._failed(entry, f"local file is corrupt, not uploaded: {exc}")
        self.token_refused = None  # the server took the token for this entry
        if outcome.status == "pending":
            self.queue.retry_later(entry, outcome.detail, base=self.retry_base, cap=self.retry_cap)
        else:
            with self.local.locked(thread_id):  # a writer enqueues under this lock too
                self.queue.complete(entry, changed_since=self._changed_since(entry))
        if outcome.status == "forked":
            self.report(outcome)
        return outcome

    def _changed_since(self, entry: PendingEntry) -> bool:
        """For a save entry: did the file change after the push read it? (Then send again.)"""
        read = self.read_stamps.pop(entry.thread_id, None)
        if entry.op != "save" or read is None:
            return False
        try:
            return stamp_of(self.local.path(entry.thread_id).stat()) != read
        except FileNotFoundError:
            return False

    def _failed(self, entry: PendingEntry, reason: str, status: str = "failed") -> SyncOutcome:
        with self.local.locked(entry.thread_id):
            self.queue.fail(entry, reason, changed_since=self._changed_since(entry))
        outcome = SyncOutcome(
            entry.thread_id, "gone" if status == "gone" else "failed", entry.op, reason
        )
        log.warning("sync of %s (%s) failed: %s", entry.thread_id, entry.op, reason)
        self.report(outcome)
        return outcome

    # -- operations ---------------------------------------------------------------------

    def _delete(self, thread_id: str) -> SyncOutcome:
        assert self.client is not None
        try:
            self.client.delete_thread(thread_id)
        except (RemoteNotFoundError, GoneError):
            pass
        with self.local.locked(thread_id):
            self.states.delete(thread_id)
        return SyncOutcome(thread_id, "synced", "delete", "deleted on the server")

    def _patch(self, thread_id: str, payload: dict[str, object]) -> SyncOutcome:
        assert self.client is not None
        try:
            if self.local.load(thread_id).is_private:
                return SyncOutcome(thread_id, "private", "patch", "private: not sent")
        except ThreadNotFoundError:
            return SyncOutcome(thread_id, "up_to_date", "patch", "no local copy")
        state = self.states.get(thread_id)
        if state.base is None:
            return SyncOutcome(thread_id, "pending", "patch", "waiting for the first upload")
        if edits.widens(payload) and self.queue.has(thread_id, "save"):
            detail = "waiting for the redacted copy to upload before widening who may read it"
            return SyncOutcome(thread_id, "pending", "patch", detail)
        server = self.client.patch_thread(thread_id, payload)
        with self.local.locked(thread_id):
            state = self.states.get(thread_id)
            if state.base is not None and server.version == state.base.version + 1:
                fields = dict(state.base.fields)
                if isinstance(payload.get("metadata"), dict):
                    merged = edits.merge_patch(fields.get("metadata"), payload["metadata"])
                    fields["metadata"] = codec.loads(
                        codec.dumps(Metadata.model_validate(merged).model_dump(mode="python"))
                    )
                for name in ("visibility", "is_shared_with_support"):
                    if name in payload:
                        fields[name] = payload[name]
                state.base = state.base.model_copy(
                    update={"version": server.version, "fields": fields}
                )
                self.states.put(thread_id, state)
        return SyncOutcome(thread_id, "synced", "patch", version=server.version)

    def push(self, thread_id: str) -> SyncOutcome:
        """Bring the server up to the local copy of one thread (see the module docstring).

        While the file only grew since the base's commit, the plan comes from what was
        appended (:func:`loomsync.sync.appended.plan_from_file`: O(turn)); else from the whole
        thread.

        Raises:
            SyncError: network, auth, refusal or 410 (the caller records it in the queue).
            CorruptThreadError: the local file does not parse (it was quarantined).
        """
        assert self.client is not None
        self.merged.discard(thread_id)
        for _ in range(MAX_ROUNDS):
            base = self.states.get(thread_id).base
            quick = plan_from_file(self.local, thread_id, base)
            if quick is not None and not quick.private:
                self.read_stamps[thread_id] = quick.stamp
                outcome = self._send(thread_id, quick.plan, base, None, quick.stamp, quick.head)
            else:
                try:
                    local, stamp = self.local.load_stamped(thread_id)
                except ThreadNotFoundError:
                    return SyncOutcome(thread_id, "up_to_date", detail="no local copy")
                self.read_stamps[thread_id] = stamp
                if local.is_private:
                    self.queue.discard(thread_id)
                    return SyncOutcome(thread_id, "private", detail="private: never sent")
                head = self.local.committed(thread_id)  # the commit just read
                outcome = self._send(thread_id, plan_push(local, base), base, local, stamp, head)
            if outcome is not None:
                return self._merged(outcome)
        return SyncOutcome(thread_id, "pending", detail="the thread kept changing; will retry")

    def _merged(self, outcome: SyncOutcome) -> SyncOutcome:
        """``outcome`` as ``"merged"`` when a 409 of this push brought changes made elsewhere
        into the local copy before it was sent (:func:`loomsync.sync.conflicts.resolve`)."""
        if outcome.thread_id not in self.merged or outcome.status not in ("synced", "up_to_date"):
            return outcome
        self.merged.discard(outcome.thread_id)
        detail = "merged with changes made elsewhere, then sent"
        return SyncOutcome(outcome.thread_id, "merged", detail=detail, version=outcome.version)

    def _send(
        self,
        thread_id: str,
        plan: Push,
        base: SyncBase | None,
        local: Thread | None,
        stamp: Stamp,
        head: Head | None,
    ) -> SyncOutcome | None:
        """Carry out one plan; the outcome, or None to plan again (after a 409 merge).

        ``local``: the whole local copy the plan was made from (None: made from the file's
        tail, ``head`` the commit it describes; the copy is read only for a 409 merge).
        """
        assert self.client is not None
        sent = local  # what the server holds once this push lands, in local terms
        try:
            if plan.kind == "none":
                self._relocate(thread_id, plan, base, head)
                return SyncOutcome(thread_id, "up_to_date", version=base.version if base else None)
            if plan.kind == "append":
                assert base is not None
                version = self.client.append_messages(
                    thread_id, plan.messages, base_version=base.version, fields=plan.fields
                ).version
            else:
                assert local is not None
                stored = self.client.put_thread(local, base_version=base.version if base else 0)
                version = stored.version
                sent = conflicts.take_markers(self, thread_id, stored, local, stamp)
                if take_sharing(self.local, stored, stamp):  # a file of the old client
                    self.read_stamps[thread_id] = stamp_of(self.local.path(thread_id).stat())
        except ConflictError as conflict:
            if local is None:
                try:
                    local, stamp = self.local.load_stamped(thread_id)
                except ThreadNotFoundError:
                    return None
                self.read_stamps[thread_id] = stamp
            return conflicts.resolve(self, thread_id, local, stamp, conflict)
        with self.local.locked(thread_id):
            state = self.states.get(thread_id)
            if sent is not local:  # the server's markers, written as a new commit
                assert sent is not None
                taken, head = snapshot(sent), self.local.committed(thread_id)
            elif plan.snapshot is not None:
                taken = plan.snapshot
            else:  # a first upload: planning took no snapshot
                assert local is not None
                taken = snapshot(local)
            state.base = sync_base(taken, version, head)
            self.states.put(thread_id, state)
        detail = (
            f"{plan.kind}: {len(plan.messages)} new message(s)" if plan.kind == "append" else "put"
        )
        return SyncOutcome(thread_id, "synced", detail=detail, version=version)

    def _relocate(
        self, thread_id: str, plan: Push, base: SyncBase | None, head: Head | None
    ) -> None:
        """Nothing to send: record the base in the form the plan used (an older client's base
        upgraded, :mod:`loomsync.sync.legacybase`) and where the file holds its messages, if
        that is new, so the next push reads only what is appended."""
        if base is None or plan.snapshot is None:
            return
        better = sync_base(plan.snapshot, base.version, head)
        if better == base:
            return
        with self.local.locked(thread_id):
            state = self.states.get(thread_id)
            if state.base == base:
                state.base = better
                self.states.put(thread_id, state)

    # -- pulling (loomsync.sync.pulling) ---------------------------------------------------------

    def adopt(self, server: Thread, stamp: Stamp | None) -> bool:
        """Make the server's copy the local copy if the file still has ``stamp`` (None:
        absent); see :func:`loomsync.sync.pulling.adopt`."""
        return pulling.adopt(self, server, stamp)

    def pull(self) -> list[SyncOutcome]:
        """Fetch every thread of ours the server holds in a newer version than our base; see
        :func:`loomsync.sync.pulling.pull`."""
        return pulling.pull(self)


__all__ = ["MAX_ROUNDS", "StopRun", "SyncEngine"]
