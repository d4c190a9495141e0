"""Thread files written before visibility was a choice (issue 12, item 5; review P1-7).

The first client wrote no ``visibility`` and no ``is_shared_with_support`` key: its default was
``organization`` and the server holds its threads so. Read with today's default such a file
would claim ``private`` while organization mates read the server's copy. So:

- a file that sets no visibility but has a sync base reads as that base, which is what the
  server held when this machine last synced (:func:`known_sharing`, installed by
  :class:`loomsync.sync.syncing.SyncingThreadStore` as :attr:`LocalThreadStore.known_sharing`); a base
  without the field (older still) reads ``organization``, the old default, never ``private``;
- whenever a server copy arrives (a ``PUT`` answer, a 409's current copy) the server's two
  fields are written into such a file (:func:`take_sharing`), so it stops depending on the base.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from loomsync.core.document.model import Thread
from loomsync.errors import CorruptThreadError, ThreadNotFoundError
from loomsync.store.summaries import Stamp

if TYPE_CHECKING:  # the store reads files through with_sharing; these only type the helpers
    from loomsync.store.local import LocalThreadStore
    from loomsync.sync.threadstates import ThreadStates

SHARING_FIELDS = ("visibility", "is_shared_with_support")
#: What the first client gave every thread (and so what the server holds for its threads).
OLD_DEFAULT: dict[str, Any] = {"visibility": "organization", "is_shared_with_support": False}


def sets_sharing(thread: Thread) -> bool:
    """True when the document sets its visibility (every file this client writes does)."""
    return "visibility" in thread.model_fields_set


def with_sharing(thread: Thread, sharing: dict[str, Any]) -> Thread:
    """``thread`` with the sharing fields it does not set taken from ``sharing`` (both fields
    are then set, so a save writes them)."""
    update = {k: v for k, v in sharing.items() if k not in thread.model_fields_set}
    return thread.model_copy(update=update) if update else thread


def known_sharing(states: ThreadStates) -> Callable[[str], dict[str, Any] | None]:
    """For :attr:`LocalThreadStore.known_sharing`: a thread's sharing fields as its sync base
    records them (the old default where the base predates them); None for a thread never
    synced (its file then reads with the model's defaults)."""

    def lookup(thread_id: str) -> dict[str, Any] | None:
        base = states.get(thread_id).base
        if base is None:
            return None
        return {k: base.fields.get(k, OLD_DEFAULT[k]) for k in SHARING_FIELDS}

    return lookup


def take_sharing(local: LocalThreadStore, server: Thread, read: Stamp | None) -> bool:
    """Write the server's sharing fields into a local file that sets none (under its lock,
    only if nobody saved since). ``read``: the stamp the caller's push read. Returns True when
    the file was rewritten from the file the push read (the caller's entry is still done)."""
    thread_id = str(server.id)
    with local.locked(thread_id):
        try:
            written, now = local.load_stamped(thread_id, as_written=True)
        except (ThreadNotFoundError, CorruptThreadError):
            return False
        if sets_sharing(written):
            return False
        sharing = {k: getattr(server, k) for k in SHARING_FIELDS}
        return local.save_if_unchanged(with_sharing(written, sharing), now) and now == read


__all__ = [
    "OLD_DEFAULT",
    "SHARING_FIELDS",
    "known_sharing",
    "sets_sharing",
    "take_sharing",
    "with_sharing",
]
