"""Sync bases an older client wrote (issue 15): their ``messages_digest`` is the SHA-256 of the
canonical JSON *list* of the messages (:func:`loomsync.core.document.codec.digest`), not the
chain digest, and they carry no ``digest`` field.

They are upgraded lazily, never rewritten in bulk: the first push (or rescan) that reads the
whole local thread computes the old digest of its first ``message_count`` messages from the
same canonical bytes the chain hashes (:func:`upgraded`); equal, the base becomes a chain base
for those messages; different, the base matches nothing and the push sends the whole thread,
as it did for such a base before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from loomsync.core.document import codec
from loomsync.store.threadlog import EMPTY_CHAIN, chain
from loomsync.sync.snapshots import CHAIN, SyncBase


def digests(messages: list[Any], prefix: int) -> tuple[str, str]:
    """(old digest of ``messages[:prefix]``, old digest of all ``messages``) in one pass: each
    equal to :func:`loomsync.core.document.codec.digest` of that list, whose canonical JSON is
    ``[`` + the items' canonical JSON joined by ``,`` + ``]``, so one SHA-256 fed item by item
    serves both. ``""`` for a prefix beyond the list."""
    return _digests([codec.dumps(m, sort_keys=True) for m in messages], prefix)


def _digests(items: Sequence[bytes], prefix: int) -> tuple[str, str]:
    hasher = hashlib.sha256(b"[")
    head = hasher.copy() if prefix <= 0 else None
    for index, item in enumerate(items):
        if index:
            hasher.update(b",")
        hasher.update(item)
        if index + 1 == prefix:
            head = hasher.copy()
    hasher.update(b"]")
    if head is None:  # prefix beyond the list: no such prefix
        return "", hasher.hexdigest()
    head.update(b"]")
    return head.hexdigest(), hasher.hexdigest()


def upgraded(base: SyncBase, items: Sequence[bytes]) -> SyncBase:
    """``base`` as a chain base, given the canonical bytes of the local messages
    (:func:`loomsync.sync.snapshots.canonical`, in order).

    A chain base comes back as it is. An old base whose digest equals the old digest of the
    first ``base.message_count`` items gets the chain digest of those items (and no file
    offset: the caller records one when it writes the base). Otherwise the base is returned
    unchanged: it matches no local copy, so the push puts the whole thread.
    """
    if base.digest == CHAIN or base.message_count > len(items):
        return base
    old, _ = _digests(items[: base.message_count], base.message_count)
    if old != base.messages_digest:
        return base
    value = chain(EMPTY_CHAIN, items[: base.message_count])
    return base.model_copy(
        update={"messages_digest": value, "digest": CHAIN, "generation": None, "offset": None}
    )


__all__ = ["digests", "upgraded"]
