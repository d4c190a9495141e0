"""The push's fast path (issue 15 item 2): plan from what was appended to the thread file since
the sync base's commit, without reading the whole thread.

A base that locates its commit in the local file (:meth:`loomsync.sync.snapshots.SyncBase.locates`)
while the file keeps that generation (it only grew since) lets the push read the last commit and
the messages after the base's commit (:meth:`loomsync.store.local.LocalThreadStore.messages_since`):
O(what was appended), whatever the thread's length. Only ``"none"`` and ``"append"`` are decided
here; anything else (a rewritten file, fields an append cannot carry, a base of an older client)
goes to the whole-thread plan, :func:`loomsync.sync.merge.plan_push`.
"""

from __future__ import annotations

from dataclasses import dataclass

from loomsync.errors import ThreadNotFoundError
from loomsync.store.local import LocalThreadStore
from loomsync.store.summaries import Stamp, stamp_of
from loomsync.store.threadlog import Head
from loomsync.sync.merge import Push, plan_appended
from loomsync.sync.snapshots import SyncBase, shell_of_head


@dataclass(frozen=True, slots=True)
class Appended:
    """A plan made from the file's tail.

    Attributes:
        plan: ``"none"`` or ``"append"`` (``snapshot`` set: the next base, once sent).
        head: the file's last commit the plan describes (the next base's location).
        stamp: the file's stamp, taken before the commit was read (so a save after it shows as
            a change and is sent again).
        private: the thread is private (nothing may be sent).
    """

    plan: Push
    head: Head
    stamp: Stamp
    private: bool


def plan_from_file(
    local: LocalThreadStore, thread_id: str, base: SyncBase | None
) -> Appended | None:
    """The push plan from the thread file's tail, or None when the whole thread must be read
    (no file, a base that locates nothing in this generation, a change only a PUT carries).

    Raises:
        CorruptThreadError: the file is not a valid thread log (it was quarantined).
    """
    if base is None or not base.locates() or base.generation is None or base.offset is None:
        return None
    try:
        stamp = stamp_of(local.path(thread_id).stat())
        since = local.messages_since(thread_id, base.generation, base.offset)
    except (FileNotFoundError, ThreadNotFoundError):
        return None
    if since is None:
        return None
    head, messages = since
    try:
        private = shell_of_head(head).is_private
    except ValueError:
        return None  # fields the model refuses: the whole read reports it
    plan = plan_appended(head, messages, base)
    if plan is None or plan.kind == "put":
        return None
    return Appended(plan, head, stamp, private)


__all__ = ["Appended", "plan_from_file"]
