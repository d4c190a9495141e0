"""What is done with a damaged sync queue file (issue 15, item 4): what was set aside and
rebuilt (:class:`Rebuilt`), which entries were dropped (:class:`Dropped`), how a dropped value is
shown (:func:`shown`, :func:`why`), and old set-aside files pruned (:func:`prune_set_aside`).
The queue itself is :class:`loomsync.sync.queue.PendingSyncQueue`."""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

log = logging.getLogger(__name__)

#: Set-aside ``<queue file>.corrupt-*`` files kept (per file name) (the newest); older ones are removed.
KEEP_SET_ASIDE = 5


@dataclass(frozen=True)
class Rebuilt:
    """A queue file (``queue.sqlite3``, an earlier ``pending.json``) that could not be used, and
    what replaced it (issue 15, item 4).

    Attributes:
        set_aside: where the unreadable file was moved (``<file>.corrupt-<UTC time>``).
        reason: why it did not parse, one line.
        thread_ids: the threads the rebuild queued (a ``save`` each): every non-private local
            thread whose content differs from its sync base, never-synced ones included.
        unreadable: it could not be read at all (an OSError: a folder in its place...).
    """

    set_aside: Path
    reason: str
    thread_ids: tuple[str, ...]
    unreadable: bool = False


@dataclass(frozen=True)
class Dropped:
    """Entries of the sync queue that were not valid (a bad thread id, an unknown
    op, a missing field...), dropped while the valid ones were kept (issue 15, item 4).

    Attributes:
        entries: one line per dropped entry: its position, its thread id and op as written
            (escaped, shortened) and why it is not valid.
        thread_ids: the threads queued afterwards because the store shows them changed and
            the queue had no entry left for them.
    """

    entries: tuple[str, ...]
    thread_ids: tuple[str, ...]


def shown(value: Any) -> str:
    """A value as written in the file, escaped (no terminal control) and at most 80 chars."""
    text = ascii(value)
    return text if len(text) <= 80 else text[:77] + "..."


def why(exc: ValidationError) -> str:
    """The first error of a validation, one line: ``field: message``."""
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "entry"
    return shown(f"{where}: {first['msg']}").strip("'\"")


_SET_ASIDE = re.compile(r"\.corrupt-\d{8}T\d{12}")


def prune_set_aside(path: Path, keep: int = KEEP_SET_ASIDE) -> list[Path]:
    """Remove all but the ``keep`` newest ``<path>.corrupt-<UTC time>`` files (or folders) next
    to ``path``, so set-aside queues do not pile up (issue 15, item 4). Returns those removed;
    one that cannot be removed is left (logged)."""
    prefix = path.name
    found = sorted(
        p
        for p in path.parent.iterdir()
        if p.name.startswith(prefix) and _SET_ASIDE.fullmatch(p.name[len(prefix) :])
    )
    removed: list[Path] = []
    for old in found[: max(0, len(found) - keep)]:
        try:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink()
        except OSError as exc:
            log.warning("could not remove the old set-aside sync queue %s: %s", old, exc)
            continue
        removed.append(old)
    return removed


__all__ = [
    "KEEP_SET_ASIDE",
    "Dropped",
    "Rebuilt",
    "prune_set_aside",
    "shown",
    "why",
]
