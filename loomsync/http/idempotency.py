"""Idempotency keys the client sends with every POST (the server's side: app/idempotency/keys.py;
IETF httpapi draft "The Idempotency-Key HTTP Header Field").

One key names one logical operation and is sent again with each retry of it, so a retry after a
lost answer gets the first answer instead of writing twice. A fork (or create) gets a random
UUIDv4 per call. An append's key is derived from what makes it that operation: the thread, the
base version it follows (If-Match) and the exact body. The same append sent again after a crash
or restart, from the sync queue or by hand, thus carries the same key with nothing persisted,
while an append of other messages, or after another version, gets another key. (Versions only
grow, so no later, different append can share all three.)
"""

from __future__ import annotations

import hashlib
import uuid

HEADER = "Idempotency-Key"
#: Namespace of the derived (UUIDv5) append keys.
_APPEND_NAMESPACE = uuid.UUID("6f3b8f8e-2f7c-4b8e-9a53-0c7d1e6b9a41")


def new_key() -> str:
    """A fresh random key (UUIDv4 text) for one operation."""
    return str(uuid.uuid4())


def append_key(thread_id: str, base_version: int, content: bytes) -> str:
    """The key of appending ``content`` (the request body bytes) to ``thread_id`` after
    ``base_version``: a UUIDv5 of the three, the same on every device and after every restart."""
    digest = hashlib.sha256(content).hexdigest()
    return str(uuid.uuid5(_APPEND_NAMESPACE, f"{thread_id}\n{base_version}\n{digest}"))


def header_value(key: str) -> str:
    """``key`` as the draft's structured-field string: ``"<key>"``. Keys made here hold no
    ``"`` or ``\\``; any that do are escaped (RFC 8941 section 3.3.3)."""
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'
