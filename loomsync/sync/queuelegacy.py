"""Reading the sync queue of earlier clients, ``pending.json`` (one JSON object with an
``entries`` list, rewritten whole on every change), so that a user upgrading keeps their queue:
:class:`loomsync.sync.queue.PendingSyncQueue` reads it once into ``queue.sqlite3`` and renames
it ``pending.json.migrated`` (see that class).

The rules of issue 15, item 4 hold for it as for the new file: a ``pending.json`` that does not
parse (truncated, garbage, the wrong shape) or cannot be read at all (a folder in its place) is
set aside as ``pending.json.corrupt-<UTC time>`` and the store's changes are queued instead; an
entry that is not valid is dropped (:class:`~loomsync.sync.queuerepair.Dropped`) and the others
kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from loomsync import edits
from loomsync.core.document import codec
from loomsync.errors import QueueUnreadableError
from loomsync.sync.queueentry import PendingEntry
from loomsync.sync.queuerepair import Rebuilt, prune_set_aside, shown, why

log = logging.getLogger(__name__)

#: The file name earlier clients kept their queue under, in the sync folder.
LEGACY_QUEUE_FILE = "pending.json"
#: What a read ``pending.json`` is renamed to (a backup; never read again).
MIGRATED_SUFFIX = ".migrated"


@dataclass
class LegacyQueue:
    """What a ``pending.json`` held.

    Attributes:
        entries: its valid entries, in file order.
        rebuilt: set when it did not parse and was set aside (then ``entries`` is empty).
        dropped: one line per entry that was not valid (left out of ``entries``).
    """

    entries: list[PendingEntry] = field(default_factory=list)
    rebuilt: Rebuilt | None = None
    dropped: list[str] = field(default_factory=list)


def entries_of(raw: Any) -> tuple[list[PendingEntry], list[str]]:
    """The valid entries of a parsed ``pending.json`` and a line per invalid one (dropped).

    Raises:
        ValueError: not an object with an ``entries`` list.
    """
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list):
        raise ValueError('not an object with an "entries" list')
    entries: list[PendingEntry] = []
    dropped: list[str] = []
    for index, item in enumerate(raw["entries"], start=1):
        try:
            entries.append(PendingEntry.model_validate(item))
        except ValidationError as exc:
            dropped.append(dropped_line(index, item, why(exc)))
    return entries, dropped


def dropped_line(index: int, item: Any, reason: str) -> str:
    """How a dropped entry is reported: ``entry <n> (thread_id '...', op '...'): <why>``, or
    ``entry <n> (<the value>): <why>`` when it is not an object."""
    if isinstance(item, dict):
        what = f"thread_id {shown(item.get('thread_id'))}, op {shown(item.get('op'))}"
    else:
        what = shown(item)
    return f"entry {index} ({what}): {reason}"


def read_legacy(path: Path) -> LegacyQueue:
    """Read ``path`` (a ``pending.json``); one that does not parse or cannot be read is moved
    aside to ``<path>.corrupt-<UTC time>`` (the 5 newest kept) and reported in ``rebuilt``, for
    the caller to queue the store's changes (``rebuilt.thread_ids`` is empty here).

    Raises:
        FileNotFoundError: there is no such file.
        QueueUnreadableError: it cannot be read nor moved aside.
    """
    try:
        entries, dropped = entries_of(codec.loads(path.read_bytes()))
    except FileNotFoundError:
        raise
    except (ValueError, RecursionError, OSError) as exc:
        # JSON, UTF-8, nesting and shape errors; a folder in its place, no permission...
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, OSError):
            reason = f"{type(exc).__name__}: {exc.strerror or exc}"
        moved = set_aside(path, reason[:200])
        return LegacyQueue(rebuilt=Rebuilt(moved, reason[:200], (), isinstance(exc, OSError)))
    return LegacyQueue(entries, None, dropped)


def set_aside(path: Path, reason: str) -> Path:
    """Move an unreadable queue file (or folder) to ``<path>.corrupt-<UTC time>``, prune the
    older ones, and return where it went.

    Raises:
        QueueUnreadableError: it cannot be moved (then it cannot be replaced either).
    """
    moved = path.with_name(f"{path.name}.corrupt-{edits.now():%Y%m%dT%H%M%S%f}")
    try:
        path.replace(moved)
    except OSError as exc:
        raise QueueUnreadableError(
            f"the sync queue {path} cannot be read ({reason}) nor moved aside "
            f"({type(exc).__name__}: {exc.strerror or exc}); move or remove it, and "
            "`loomsync sync` rebuilds it from the store"
        ) from None
    prune_set_aside(path)
    log.warning("sync queue %s did not parse (%s); moved to %s", path, reason, moved)
    return moved


__all__ = [
    "LEGACY_QUEUE_FILE",
    "MIGRATED_SUFFIX",
    "LegacyQueue",
    "dropped_line",
    "entries_of",
    "read_legacy",
    "set_aside",
]
