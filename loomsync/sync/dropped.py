"""Threads whose change was dropped from the sync queue and not saved since (newcomer finding
4): ``loomsync sync --drop ID`` removes a failed entry and records the thread file's stamp
(:attr:`~loomsync.sync.threadstates.ThreadState.dropped_stamp`); while the file keeps that
stamp, the copy here holds a change the server never got and nothing will send it. Such a
thread is ``not sent`` in ``loomsync list``, and ``loomsync sync --status`` names it rather
than saying every change is on the server.
"""

from __future__ import annotations

from loomsync.errors import InvalidInputError
from loomsync.store.local import LocalThreadStore
from loomsync.store.summaries import stamp_of
from loomsync.sync.threadstates import ThreadStates


def not_sent(local: LocalThreadStore, states: ThreadStates, thread_id: str) -> bool:
    """True when ``thread_id``'s file is still as it was when its failed entries were dropped
    (the server lacks this copy, and no queue entry will send it); False once it is saved
    again (a new stamp), or when the file is gone."""
    state = states.get(thread_id)
    if state.dropped_stamp is None:
        return False
    try:
        return state.dropped_stamp == stamp_of(local.path(thread_id).stat())
    except FileNotFoundError:
        return False


def not_sent_threads(local: LocalThreadStore, states: ThreadStates) -> list[str]:
    """The ids of every thread :func:`not_sent` holds for, sorted (one read of each sync
    state file: a thread never synced nor dropped has none)."""
    found: list[str] = []
    for path in sorted(states.folder.glob("T-*.json")):
        thread_id = path.name.removesuffix(".json")
        try:
            if not_sent(local, states, thread_id):
                found.append(thread_id)
        except InvalidInputError:  # not a thread id: not a state file of ours
            continue
    return found


__all__ = ["not_sent", "not_sent_threads"]
