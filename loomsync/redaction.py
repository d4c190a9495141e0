"""The client's one redaction step (issue 12, item 1; API.md section 9 "Nothing secret leaves
the machine").

Every path that writes thread text to this machine's disk or to the network goes through one
:class:`Redaction`:

- disk: :meth:`loomsync.store.LocalThreadStore.save` (so SDK saves, imports, forks, shares,
  merges and adopted server copies), the quarantine copy of a corrupt file, the summary index,
  the per-thread sync bases and the pending queue's patch payloads, exports;
- network: :class:`loomsync.client.ThreadSyncClient` ``put_thread``, ``append_messages`` and
  ``patch_thread`` (so :class:`~loomsync.syncing.SyncingThreadStore` pushes and
  :class:`~loomsync.remote.RemoteThreadStore` alike).

It wraps a :class:`loomsync.secrets.Redactor` (built from the configuration's allow-list,
:meth:`loomsync.config.ClientConfig.redactor`) and works on documents as :mod:`loomsync.codec`
holds them, so exact JSON numbers (``JsonNumber``) and unset fields survive. A thread without a
finding is returned as the same object (callers test ``new is old``); redacting twice changes
nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Sequence
from typing import Any

from loomsync import codec
from loomsync.model import Message, Thread
from loomsync.secrets import Located, Redactor, default_redactor

#: Digests of clean messages a :class:`Redaction` remembers (16 bytes each).
CLEAN_CACHE = 200_000


def _zero(_text: str) -> int:
    return 0


class Redaction:
    """Redacts threads, messages, JSON values and text with one :class:`Redactor`.

    Args:
        redactor: the detector with the user's allow-list (default: no allow-list).
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or default_redactor()
        self._clean: dict[bytes, None] = {}  # digests of messages known to hold no finding
        self._guard = threading.Lock()

    def _message(self, data: dict[str, Any]) -> dict[str, Any]:
        """One message (a dumped dict) redacted; the same object when clean. A message seen
        clean before is recognised by the digest of its JSON and not scanned again, so a save
        of one more turn scans one turn (hashing is ~50x cheaper than detection)."""
        key = hashlib.blake2b(codec.dumps(data), digest_size=16).digest()
        if key in self._clean:
            return data
        new: dict[str, Any] = self.redactor.redact_value(data)
        clean = key if new is data else hashlib.blake2b(codec.dumps(new), digest_size=16).digest()
        with self._guard:
            if len(self._clean) >= CLEAN_CACHE:
                del self._clean[next(iter(self._clean))]  # oldest first
            self._clean[clean] = None
        return new

    def thread(self, thread: Thread) -> Thread:
        """The thread with every credential replaced by its marker, in message content,
        tool-call arguments, titles, tags, workspace paths and git fields; the same object when
        nothing was found. Unset fields stay unset."""
        doc = codec.document(thread)
        conversation = doc.get("conversation")
        messages = conversation.get("messages") if isinstance(conversation, dict) else None
        if not isinstance(conversation, dict) or not isinstance(messages, list):
            new = self.redactor.redact_value(doc)
            return thread if new is doc else Thread.model_validate(new)
        rest = {**doc, "conversation": {k: v for k, v in conversation.items() if k != "messages"}}
        redacted_rest = self.redactor.redact_value(rest)
        redacted = [self._message(m) if isinstance(m, dict) else m for m in messages]
        if redacted_rest is rest and all(a is b for a, b in zip(redacted, messages, strict=True)):
            return thread
        out = dict(redacted_rest)
        out["conversation"] = {**out["conversation"], "messages": redacted}
        return Thread.model_validate(out)

    def messages(self, messages: Sequence[Message]) -> list[Message]:
        """Messages redacted (for an append); unchanged ones are the same objects."""
        out: list[Message] = []
        for message in messages:
            data = message.model_dump(mode="python", exclude_unset=True, by_alias=True)
            new = self._message(data)
            out.append(message if new is data else Message.model_validate(new))
        return out

    def value(self, value: Any) -> Any:
        """A JSON value (a patch, append fields, a summary) with every string redacted; dict
        keys are kept; the same object when nothing was found."""
        return self.redactor.redact_value(value)

    def text(self, text: str) -> str:
        """Plain text redacted (the raw bytes of a corrupt file, say)."""
        return self.redactor.redact_text(text)

    def scan(self, thread: Thread) -> list[Located]:
        """What :meth:`thread` would replace: kind, JSON path, message index and a masked
        preview (never the value). Reads a copy whose numbers are zeroed: only strings are
        scanned, and the paths are those of the document."""
        plain = json.loads(
            codec.encode_thread(thread, pretty=False), parse_int=_zero, parse_float=_zero
        )
        return self.redactor.scan_thread(Thread.model_validate(plain))


@functools.cache
def default_redaction() -> Redaction:
    """The shared :class:`Redaction` with no allow-list."""
    return Redaction()


__all__ = ["CLEAN_CACHE", "Redaction", "default_redaction"]
