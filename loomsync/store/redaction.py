"""The client's one redaction step (issue 12, item 1; API.md section 9 "Nothing secret leaves
the machine").

Every path that writes thread text to this machine's disk or to the network goes through one
:class:`Redaction`:

- disk: :meth:`loomsync.store.local.LocalThreadStore.save` (so SDK saves, imports, forks, shares,
  merges and adopted server copies), the quarantine copy of a corrupt file, the summary index,
  the per-thread sync bases and the pending queue's patch payloads, exports;
- network: :class:`loomsync.http.client.ThreadSyncClient` ``put_thread``, ``append_messages`` and
  ``patch_thread`` (so :class:`~loomsync.sync.syncing.SyncingThreadStore` pushes and
  :class:`~loomsync.http.remote.RemoteThreadStore` alike).

It wraps a :class:`loomsync.core.secrets.Redactor` (built from the configuration's allow-list,
:meth:`loomsync.config.ClientConfig.redactor`) and works on documents as :mod:`loomsync.core.document.codec`
holds them, so exact JSON numbers (``JsonNumber``) and unset fields survive. A thread without a
finding is returned as the same object (callers test ``new is old``); redacting twice changes
nothing.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from loomsync.core.document import codec
from loomsync.core.document.model import Message, Thread

if TYPE_CHECKING:  # the detector is imported when first used: `loomsync list` needs none
    from loomsync.core.secrets import Located, Redactor

#: Digests of clean messages a :class:`Redaction` remembers (16 bytes each).
CLEAN_CACHE = 200_000


class Redaction:
    """Redacts threads, messages, JSON values and text with one :class:`Redactor`.

    Args:
        redactor: the detector with the user's allow-list, or a function that makes it (called
            once, when something is first redacted: importing and compiling the detector costs
            about 50 ms, which a command that redacts nothing need not pay); default: the
            detector without an allow-list.
    """

    def __init__(self, redactor: Redactor | Callable[[], Redactor] | None = None) -> None:
        self._redactor: Redactor | None = None
        self._make: Callable[[], Redactor] | None = None
        if callable(redactor):
            self._make = redactor
        else:
            self._redactor = redactor
        self._clean: dict[bytes, None] = {}  # digests of messages known to hold no finding
        self._guard = threading.Lock()

    @property
    def redactor(self) -> Redactor:
        """The detector (made on first use)."""
        if self._redactor is None:
            with self._guard:
                if self._redactor is None:
                    if self._make is not None:
                        self._redactor = self._make()
                    else:
                        from loomsync.core.secrets import default_redactor

                        self._redactor = default_redactor()
        return self._redactor

    def _message(self, data: dict[str, Any], index: int) -> tuple[dict[str, Any], list[Located]]:
        """Message ``index`` of its thread (a dumped dict) redacted, and what was found; the
        same object when clean. A message seen clean before is recognised by the digest of its
        JSON and not scanned again, so a save of one more turn scans one turn (hashing is ~50x
        cheaper than detection)."""
        key = hashlib.blake2b(codec.dumps(data), digest_size=16).digest()
        if key in self._clean:
            return data, []
        path = ("conversation", "messages", index)
        new, found = self.redactor.redact_value_located(data, path)
        clean = key if new is data else hashlib.blake2b(codec.dumps(new), digest_size=16).digest()
        with self._guard:
            if len(self._clean) >= CLEAN_CACHE:
                del self._clean[next(iter(self._clean))]  # oldest first
            self._clean[clean] = None
        return new, found

    def located(self, thread: Thread) -> tuple[Thread, list[Located]]:
        """The thread with every credential replaced by its marker (in message content,
        tool-call arguments, titles, tags, workspace paths and git fields; the same object when
        nothing was found; unset fields stay unset), and what was replaced: kind, JSON path,
        message index, masked preview, in the document's order. One walk of the codec document
        (exact numbers kept) serves :meth:`thread` and :meth:`scan` alike."""
        doc = codec.document(thread)
        conversation = doc.get("conversation")
        messages = conversation.get("messages") if isinstance(conversation, dict) else None
        if not isinstance(conversation, dict) or not isinstance(messages, list):
            new, found = self.redactor.redact_value_located(doc)
            return (thread if new is doc else Thread.model_validate(new)), found
        rest = {**doc, "conversation": {k: v for k, v in conversation.items() if k != "messages"}}
        redacted_rest, found = self.redactor.redact_value_located(rest)
        redacted: list[Any] = []
        for n, item in enumerate(messages):
            new_item, in_message = self._message(item, n) if isinstance(item, dict) else (item, [])
            redacted.append(new_item)
            found.extend(in_message)
        order = {key: n for n, key in enumerate(doc)}
        found.sort(key=lambda f: order.get(str(f.path[0]), 0) if f.path else 0)  # stable
        if redacted_rest is rest and all(a is b for a, b in zip(redacted, messages, strict=True)):
            return thread, found
        out = dict(redacted_rest)
        out["conversation"] = {**out["conversation"], "messages": redacted}
        return Thread.model_validate(out), found

    def thread(self, thread: Thread) -> Thread:
        """The thread with every credential replaced by its marker (see :meth:`located`)."""
        return self.located(thread)[0]

    def messages(self, messages: Sequence[Message], first_index: int = 0) -> list[Message]:
        """Messages redacted (for an append; message ``n`` is message ``first_index + n`` of
        its thread); unchanged ones are the same objects."""
        out: list[Message] = []
        for n, message in enumerate(messages):
            data = message.model_dump(mode="python", exclude_unset=True, by_alias=True)
            new = self._message(data, first_index + n)[0]
            out.append(message if new is data else Message.model_validate(new))
        return out

    def value(self, value: Any) -> Any:
        """A JSON value (a patch, append fields, a summary) with every string redacted; dict
        keys are kept unless a key is a token (then its marker); the same object when nothing
        was found."""
        return self.redactor.redact_value(value)

    def text(self, text: str) -> str:
        """Plain text redacted (the raw bytes of a corrupt file, say)."""
        return self.redactor.redact_text(text)

    def scan(self, thread: Thread) -> list[Located]:
        """What :meth:`thread` replaces: kind, JSON path, message index and a masked preview
        (never the value), found by the same walk (see :meth:`located`)."""
        return self.located(thread)[1]


@functools.cache
def default_redaction() -> Redaction:
    """The shared :class:`Redaction` with no allow-list."""
    return Redaction()


__all__ = ["CLEAN_CACHE", "Redaction", "default_redaction"]
