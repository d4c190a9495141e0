"""Threads to and from the parts a thread log holds (:mod:`loomsync.store.threadlog`): the
fields (the document without ``conversation.messages``) and one document per message, and the
redaction of a thread whose first messages are known to be stored already, which redacts only
the rest (issue 15 item 1: a save costs the turn, not the thread).
"""

from __future__ import annotations

import itertools
import operator
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loomsync.core.document import codec
from loomsync.core.document.model import Message, Thread
from loomsync.store import threadlog
from loomsync.store.redaction import Redaction
from loomsync.store.summaries import Stamp, stamp_of

_NO_MESSAGES: Any = {"conversation": {"messages"}}


@dataclass(frozen=True, slots=True)
class Known:
    """What a store object last wrote or read of one thread file.

    Attributes:
        head: the file's last commit then.
        stamp: the file's stamp just after (:func:`loomsync.store.summaries.stamp_of`).
        messages: the message objects committed (``head.count`` of them).
        redacted: the messages went through the store's redaction (they were written, not
            read: a file may hold what an older client or another tool left unredacted).
        continued_by: the last message list found to continue ``messages`` and its length
            (:func:`continues`): one save checks the same list several times (prepare,
            redaction, write) and the pointer walk is done once. Every save starts by clearing
            it (:meth:`Recent.new_save`), so a change the caller makes between saves is seen.
    """

    head: threadlog.Head
    stamp: Stamp
    messages: list[Message]
    redacted: bool
    continued_by: list[tuple[list[Message], int]] = field(default_factory=list)


class Recent:
    """What a store object last wrote or read, per thread: the :data:`SIZE` threads used
    last (their message lists are references to objects the caller holds anyway)."""

    SIZE = 256

    def __init__(self) -> None:
        self._known: OrderedDict[str, Known] = OrderedDict()
        self._guard = threading.Lock()

    def get(self, thread_id: str) -> Known | None:
        """What was last written or read of the thread, if remembered."""
        with self._guard:
            return self._known.get(thread_id)

    def put(self, thread_id: str, known: Known) -> None:
        """Remember a write or a read (forgetting the least recently used beyond SIZE)."""
        with self._guard:
            self._known.pop(thread_id, None)
            self._known[thread_id] = known
            while len(self._known) > self.SIZE:
                del self._known[next(iter(self._known))]

    def new_save(self, thread_id: str) -> None:
        """A save of the thread begins: forget which lists were found to continue it (the
        caller may have changed them since)."""
        known = self.get(thread_id)
        if known is not None:
            known.continued_by.clear()

    def drop(self, thread_id: str) -> None:
        """Forget a thread (its file was removed)."""
        with self._guard:
            self._known.pop(thread_id, None)

    def prefix(self, thread: Thread) -> int:
        """How many of the thread's first messages are the very objects last written (so
        redacted) for it: 0 when unknown or only read; a C-level list compare, identity
        first, O(count) pointers."""
        known = self.get(str(thread.id))
        if known is None or not known.redacted:
            return 0
        return known.head.count if continues(thread.messages, known) else 0


def continues(messages: list[Message], known: Known) -> bool:
    """True if ``messages`` begins with the very objects of ``known.messages`` (identity only:
    an equal copy is not the same object, and the callers then check the chain digest
    instead). O(count) pointer compares in C, allocating nothing (a save's memory does not grow
    with the thread), once per list and length for one ``known``."""
    memo = known.continued_by
    if memo and memo[0][0] is messages and memo[0][1] == len(messages):
        return True
    mine = known.messages
    if len(messages) >= len(mine) and all(map(operator.is_, messages, mine)):
        memo[:] = [(messages, len(messages))]
        return True
    return False


def stored_count(
    known: Known | None, path: Path, thread: Thread
) -> tuple[threadlog.Head | None, int, bool]:
    """The thread file's head and how many of ``thread``'s first messages it holds already:
    ``head.count``, or -1 when the file's messages are not a prefix of the thread's (the head is
    None when there is no valid file). Without I/O beyond a ``stat`` when ``known`` (what this
    store object last wrote or read) is still the file's state and the thread continues its
    message objects; else the head is read from the file's end and the thread's prefix hashed
    against its chain digest (never the whole file). The third value says the thread continues
    ``known``'s very objects (its list may then be extended rather than copied). Call under
    the thread's lock."""
    try:
        stamp = stamp_of(path.stat())
    except FileNotFoundError:
        return None, -1, False
    if known is not None and known.stamp == stamp:
        head = known.head  # nobody wrote the file since this object did
    else:
        try:
            head = threadlog.read_head(path)
        except (FileNotFoundError, ValueError):
            return None, -1, False  # not a log (any more): rewritten whole
    messages = thread.messages
    if known is not None and head == known.head and continues(messages, known):
        return head, head.count, True
    if len(messages) < head.count:
        return head, -1, False
    same = chain_of(threadlog.EMPTY_CHAIN, itertools.islice(messages, head.count)) == head.chain
    return head, head.count if same else -1, False


def fields_of(thread: Thread) -> dict[str, Any]:
    """The thread's document (set fields, codec form) without ``conversation.messages``:
    O(fields), whatever the number of messages."""
    return thread.model_dump(mode="python", exclude_unset=True, by_alias=True, exclude=_NO_MESSAGES)


def message_docs(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages' documents as the log stores them (set fields, codec form)."""
    return [m.model_dump(mode="python", exclude_unset=True, by_alias=True) for m in messages]


def chain_of(previous: str, messages: Iterable[Message]) -> str:
    """:func:`loomsync.store.threadlog.chain` continued from ``previous`` over messages."""
    return threadlog.chain(previous, (threadlog.canonical(m) for m in messages))


def encode(thread: Thread) -> tuple[bytes, threadlog.Head]:
    """The whole log file of a thread, as it is (no redaction) and its head (for tests and
    benchmarks that write many files without a store; a store writes with ``write_full``)."""
    digest = chain_of(threadlog.EMPTY_CHAIN, thread.messages)
    docs = message_docs(thread.messages)
    return threadlog.encode(str(thread.id), fields_of(thread), docs, digest)


def thread_of(fields: dict[str, Any], messages: list[dict[str, Any]]) -> Thread:
    """The thread of a log's fields and message documents.

    Raises:
        ValueError: not a valid thread (the message says why).
    """
    conversation = fields.get("conversation")
    conversation = dict(conversation) if isinstance(conversation, dict) else {}
    conversation["messages"] = messages
    return codec.decode_thread({**fields, "conversation": conversation})


def with_messages(thread: Thread, messages: list[Message]) -> Thread:
    """A shallow copy of ``thread`` holding ``messages`` (no message is copied or validated)."""
    conversation = thread.conversation.model_copy(update={"messages": messages})
    return thread.model_copy(update={"conversation": conversation})


def redacted_after(redaction: Redaction, thread: Thread, count: int) -> Thread:
    """``thread`` redacted, knowing its first ``count`` messages are redacted already (they are
    the ones a store wrote or read): only the later messages and the fields are scanned, so the
    cost is O(new messages + fields). The same object when nothing was found."""
    messages = thread.messages
    new = messages[count:]
    clean = redaction.messages(new, count)
    if any(a is not b for a, b in zip(clean, new, strict=True)):
        thread = with_messages(thread, messages[:count] + clean)
    fields = fields_of(thread)
    clean_fields = redaction.value(fields)
    if clean_fields is fields:
        return thread
    return with_messages(thread_of(clean_fields, []), thread.messages)


__all__ = [
    "Known",
    "Recent",
    "chain_of",
    "continues",
    "encode",
    "fields_of",
    "message_docs",
    "redacted_after",
    "stored_count",
    "thread_of",
    "with_messages",
]
