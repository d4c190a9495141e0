"""Test helpers for thread files: read a thread log as the JSON document it holds, and write
one as a client would have without a store (no redaction, no fsync: fast for many files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loomsync.core.document import codec
from loomsync.store import threaddocs
from loomsync.store.api import read_thread_file


def stored_text(path: Path) -> str:
    """The thread a local thread log holds, as pretty JSON text (numbers as written)."""
    return codec.encode_thread(read_thread_file(path)).decode()


def stored_doc(path: Path) -> Any:
    """The thread a local thread log holds, as a parsed JSON document."""
    return json.loads(stored_text(path))


def write_log(path: Path, doc: dict[str, Any] | bytes | str) -> None:
    """Write a thread document (with an id) as the thread log ``path``, as it is."""
    data, _ = threaddocs.encode(codec.decode_thread(doc))
    path.write_bytes(data)
