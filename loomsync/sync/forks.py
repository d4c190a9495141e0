"""What a sync says about forks: the one that happened, whoever made it (issue 27, item 10).

A save pushed while another client appended to the same thread ends in a fork (the server's
copy stays under the thread's id; this machine's messages go to a new thread,
``metadata.extra.forked_from``). The fork can be made by the call that waits
(``save_and_sync``, ``loomsync sync``), by the store's background sync that a save woke up,
or by another process on the same store (``loomsync watch``): whoever made it, the thread's
sync state names it (``ThreadState.fork_id``), and the call's outcome must say it. So the
calls note each thread's fork before they push (:func:`fork_ids`), report a fork made
meanwhile as ``"forked"`` with its id (:func:`with_forks`), and send the fork at once
(:func:`send_fork`), so that a ``"forked"`` answer means both copies are on the server, and
a fork that could not be sent is ``"pending"`` (or ``"failed"``) with its id and the reason.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING

from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store.summary import SyncOutcome, SyncStatus

if TYPE_CHECKING:
    from loomsync.sync.syncing import SyncingThreadStore
    from loomsync.sync.threadstates import ThreadStates

#: Outcomes of the fork's own push that leave it off the server.
NOT_SENT = ("pending", "failed", "gone", "token_refused")


def fork_ids(states: ThreadStates, thread_ids: Iterable[str]) -> dict[str, str | None]:
    """Each thread's last fork (``ThreadState.fork_id``), noted before a push."""
    return {thread_id: states.get(thread_id).fork_id for thread_id in thread_ids}


def forked(thread_id: str, fork_id: str, how: str) -> SyncOutcome:
    """A ``"forked"`` outcome: ``how`` says why the writer's copy became ``fork_id``."""
    detail = f"{how}: the server's copy is kept as {thread_id}, this machine's as {fork_id}"
    return SyncOutcome(thread_id, "forked", detail=detail, fork_id=fork_id)


def with_forks(
    states: ThreadStates, outcomes: list[SyncOutcome], before: dict[str, str | None]
) -> list[SyncOutcome]:
    """``outcomes`` where each thread of ``before`` whose fork changed since (a fork made by
    another sync of this store meanwhile) says ``"forked"`` with the new fork's id: its last
    outcome is replaced (it said ``"synced"`` or ``"up_to_date"``: the copy that reached the
    server was the server's), or one is added when the run had none for it."""
    result = list(outcomes)
    said = {o.thread_id for o in outcomes if o.status == "forked"}
    for thread_id, old in before.items():
        new = states.get(thread_id).fork_id
        if new is None or new == old or thread_id in said:
            continue
        how = "both sides added messages (found by another sync of this store)"
        base = states.get(thread_id).base
        outcome = dataclasses.replace(
            forked(thread_id, new, how), version=base.version if base else None
        )
        last = max((i for i, o in enumerate(result) if o.thread_id == thread_id), default=None)
        if last is not None and result[last].status in ("synced", "up_to_date", "merged"):
            result[last] = dataclasses.replace(outcome, op=result[last].op)
        else:
            result.append(outcome)
    return result


def send_fork(store: SyncingThreadStore, outcome: SyncOutcome) -> SyncOutcome:
    """Push the fork ``outcome`` names now and say where it is: ``"forked"`` (with the fork
    as ``thread``) once the server holds it, else the status of its push (``"pending"``,
    ``"failed"``, ...) with ``fork_id`` kept and the reason in ``detail``."""
    assert outcome.fork_id is not None
    fork_id = outcome.fork_id
    pushed = store.sync_thread(fork_id)
    try:
        fork = store.local.load(fork_id)
    except (ThreadNotFoundError, CorruptThreadError):
        fork = None
    on_server = store.states.get(fork_id).base is not None
    if pushed.status not in NOT_SENT and on_server:
        return dataclasses.replace(outcome, status="forked", thread=fork)
    reason = pushed.detail or "queued, not sent yet"
    status: SyncStatus = pushed.status if pushed.status in NOT_SENT else "pending"
    return dataclasses.replace(
        outcome,
        status=status,
        detail=f"{outcome.detail}; the fork is not on the server yet: {reason}",
        thread=fork,
        unreachable=pushed.unreachable,
    )


__all__ = ["NOT_SENT", "fork_ids", "forked", "send_fork", "with_forks"]
