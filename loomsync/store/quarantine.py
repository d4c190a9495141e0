"""Moving a corrupt thread file aside (``.quarantine/``) without copying a credential into it."""

from __future__ import annotations

import os
from pathlib import Path

from loomsync.store.files import atomic_write
from loomsync.store.redaction import Redaction


def move_redacted(path: Path, moved: Path, redaction: Redaction) -> None:
    """Move ``path`` to ``moved``, its text redacted (its bytes kept where nothing is found).

    Raises:
        FileNotFoundError: ``path`` is gone.
        OSError: the move failed.
    """
    raw = path.read_bytes()
    text = raw.decode("utf-8", "surrogateescape")
    clean = redaction.text(text)
    if clean is text:
        os.replace(path, moved)
        return
    atomic_write(moved, clean.encode("utf-8", "surrogateescape"))
    path.unlink()


__all__ = ["move_redacted"]
