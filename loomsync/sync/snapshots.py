"""Threads in comparable form (:class:`Snapshot`), and the server state a local copy is based on
(:class:`SyncBase`), for :mod:`loomsync.sync.merge`.

A snapshot is the message count, the *chain digest* of the messages
(:func:`loomsync.store.threadlog.chain`: the same digest the thread file's commit lines hold,
so the snapshot of what a save wrote costs no pass over the messages, :func:`snapshot_of_head`)
and every other compared field, normalised (defaults included, JSON form).

A base also says where the local file held exactly the base's messages: the file's
``generation`` and the byte ``offset`` of that commit line. While the file only grows (same
generation), the push reads what was appended after that offset and nothing else
(:func:`loomsync.store.threadlog.messages_since`).

Bases written before the chain digest (``digest`` absent) hold the SHA-256 of the canonical
JSON list of the messages: :mod:`loomsync.sync.legacybase` recognises and upgrades them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel

from loomsync.core.document import codec
from loomsync.core.document.model import SERVER_FIELDS, Message, Thread
from loomsync.store import threaddocs
from loomsync.store.threadlog import EMPTY_CHAIN, Head, canonical

#: Fields never compared: set by the server, or local only.
IGNORED_FIELDS = frozenset({"id", "version", "updated_at", "is_private", *SERVER_FIELDS})
#: ``SyncBase.digest`` of a base whose ``messages_digest`` is a chain digest.
CHAIN = "chain"


class Snapshot(BaseModel):
    """A thread's content in comparable form.

    Attributes:
        message_count: number of messages.
        messages_digest: their chain digest (hex, :func:`loomsync.store.threadlog.chain`).
        fields: every compared field but the messages, normalised (``conversation`` without
            ``messages``; :data:`IGNORED_FIELDS` left out).
    """

    message_count: int
    messages_digest: str
    fields: dict[str, Any]


class SyncBase(Snapshot):
    """What the server held at ``version``: the state the local copy is based on.

    Attributes:
        version: the server's version.
        digest: ``"chain"`` when ``messages_digest`` is a chain digest; None for a base an
            older client wrote (a digest of the message list, :mod:`loomsync.sync.legacybase`).
        generation: the local file's generation whose commit at ``offset`` holds exactly the
            base's messages; None when unknown (the push then reads the whole thread).
        offset: byte offset of that commit line in the local file.
    """

    version: int
    digest: Literal["chain"] | None = None
    generation: str | None = None
    offset: int | None = None

    def locates(self) -> bool:
        """True when the base says which local commit holds its messages (the push may then
        read only what was appended since)."""
        return self.digest == CHAIN and self.generation is not None and self.offset is not None


def chain_of(messages: Sequence[Message], previous: str = EMPTY_CHAIN) -> str:
    """The chain digest of ``messages`` continued from ``previous`` (none: the empty chain);
    :func:`loomsync.store.threaddocs.chain_of` with the previous digest optional."""
    return threaddocs.chain_of(previous, messages)


def _normalised_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The compared fields of a thread dump without messages: JSON form, ignored ones out."""
    conversation = data.pop("conversation", None) or {}
    conversation.pop("messages", None)
    doc = codec.loads(codec.dumps(data))
    fields = {k: v for k, v in doc.items() if k not in IGNORED_FIELDS}
    fields["conversation"] = codec.loads(codec.dumps(conversation))
    return fields


def fields_of(thread: Thread) -> dict[str, Any]:
    """The compared fields of a thread (:attr:`Snapshot.fields`); the messages are not dumped:
    O(fields), whatever the thread's length."""
    data = thread.model_dump(mode="python", by_alias=True, exclude={"conversation": {"messages"}})
    return _normalised_fields(data)


def split(thread: Thread) -> tuple[list[Any], dict[str, Any]]:
    """Normalised messages (JSON form, defaults included), and :func:`fields_of` the thread."""
    messages = [codec.loads(codec.dumps(m)) for m in _dumped(thread.messages)]
    return messages, fields_of(thread)


def _dumped(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="python", by_alias=True) for m in messages]


def snapshot(thread: Thread) -> Snapshot:
    """The snapshot of a thread: one pass over its messages (each dumped and hashed once)."""
    return Snapshot(
        message_count=len(thread.messages),
        messages_digest=chain_of(thread.messages),
        fields=fields_of(thread),
    )


def shell_of_head(head: Head) -> Thread:
    """The thread a commit describes, without its messages (its fields validated): O(fields).

    Raises:
        ValueError: the commit's fields are not a valid thread document.
    """
    doc = dict(head.fields)
    conversation = doc.get("conversation")
    doc["conversation"] = {
        **(conversation if isinstance(conversation, dict) else {}),
        "messages": [],
    }
    return codec.decode_thread(doc)


def snapshot_of_head(head: Head) -> Snapshot:
    """The snapshot of the thread a thread file's commit holds, from the commit alone (count,
    chain digest, fields): O(fields), no message read. Equal to :func:`snapshot` of that thread.

    Raises:
        ValueError: the commit's fields are not a valid thread document.
    """
    return Snapshot(
        message_count=head.count,
        messages_digest=head.chain,
        fields=fields_of(shell_of_head(head)),
    )


def sync_base(thread: Thread | Snapshot, version: int, head: Head | None = None) -> SyncBase:
    """The base recorded after the server stored (or sent) this thread, or the thread of this
    snapshot, at ``version``. ``head``: a commit of the local file (the one the push read, or
    the last this store wrote); when it holds exactly the base's messages (same count and
    chain digest) the base records where it is, so the next push reads only what follows."""
    taken = thread if isinstance(thread, Snapshot) else snapshot(thread)
    base = SyncBase(
        message_count=taken.message_count,
        messages_digest=taken.messages_digest,
        fields=taken.fields,
        version=version,
        digest=CHAIN,
    )
    if head is not None and (head.count, head.chain) == (base.message_count, base.messages_digest):
        base.generation, base.offset = head.generation, head.offset
    return base


__all__ = [
    "CHAIN",
    "IGNORED_FIELDS",
    "Snapshot",
    "SyncBase",
    "canonical",
    "chain_of",
    "fields_of",
    "shell_of_head",
    "snapshot",
    "snapshot_of_head",
    "split",
    "sync_base",
]
