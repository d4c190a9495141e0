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
import json
from collections.abc import Sequence
from typing import Any

from loomsync import codec
from loomsync.model import Message, Thread
from loomsync.secrets import Located, Redactor, default_redactor


def _zero(_text: str) -> int:
    return 0


class Redaction:
    """Redacts threads, messages, JSON values and text with one :class:`Redactor`.

    Args:
        redactor: the detector with the user's allow-list (default: no allow-list).
    """

    def __init__(self, redactor: Redactor | None = None) -> None:
        self.redactor = redactor or default_redactor()

    def thread(self, thread: Thread) -> Thread:
        """The thread with every credential replaced by its marker, in message content,
        tool-call arguments, titles, tags, workspace paths and git fields; the same object when
        nothing was found. Unset fields stay unset."""
        doc = codec.document(thread)
        new = self.redactor.redact_value(doc)
        return thread if new is doc else Thread.model_validate(new)

    def messages(self, messages: Sequence[Message]) -> list[Message]:
        """Messages redacted (for an append); unchanged ones are the same objects."""
        out: list[Message] = []
        for message in messages:
            data = message.model_dump(mode="python", exclude_unset=True, by_alias=True)
            new = self.redactor.redact_value(data)
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


__all__ = ["Redaction", "default_redaction"]
