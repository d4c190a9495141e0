"""Files in a watched folder that hold no conversation, reported once each (issue 27 item 7).

Two kinds of junk: a file no watched format recognises (a ``notes.jsonl``, a binary file), and
a file a format recognises, often by its name alone (a Codex ``rollout-…<uuid>.jsonl``), that
holds no conversation. Each is said once per file, in one ``ignored …`` log line naming it,
whatever made it junk, and never again for that file (the offsets row keeps it, across
restarts: :attr:`loomsync.watch.offsets.Offset.ignored`).

A file no format recognises is judged once it holds :data:`JUDGED_AFTER` whole lines (an
agent's first line may still be being written), or once it has gone quiet: unchanged for
:data:`QUIET_SECONDS`, so a short junk file is judged too, not only when a third line arrives.
A file a format recognises is judged only once it has gone quiet: while it grows it is a
session being written (a Claude Code transcript may open with several lines that tell nothing
yet). A file judged that later holds a conversation is imported as any other.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from loomsync.watch.sources import Source

#: Complete lines a file must hold before it is judged without going quiet.
JUDGED_AFTER = 3
#: Seconds a file waiting for judgement must stay unchanged to be judged with what it holds.
#: Long enough for an agent to write its first turn after creating a session file.
QUIET_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class Waiting:
    """A file waiting to be judged: the watched ``source`` it is in, the ``format`` that
    recognised it (None: none did), and when it last changed (``time.monotonic`` seconds)."""

    path: str
    source: Source
    format: str | None
    since: float


class Junk:
    """The files waiting to be judged, and those said to be junk already.

    Args:
        said: the paths said before (the offsets rows marked ignored).
        clock: seconds, monotonic (``time.monotonic``).
    """

    def __init__(
        self, said: Iterable[str] = (), clock: Callable[[], float] = time.monotonic
    ) -> None:
        """See the class docstring."""
        self.said: set[str] = set(said)
        self._clock = clock
        self._waiting: dict[str, Waiting] = {}

    def wait(self, path: str, source: Source, format: str | None) -> None:
        """``path`` changed and cannot be judged yet: judge it once it has been quiet for
        :data:`QUIET_SECONDS` (each change starts the wait again)."""
        self._waiting[path] = Waiting(path, source, format, self._clock())

    def settled(self, path: str) -> None:
        """``path`` was judged, imported or removed: nothing to wait for."""
        self._waiting.pop(path, None)

    def quiet(self, seconds: float = QUIET_SECONDS) -> list[Waiting]:
        """The files that have waited unchanged for ``seconds``, oldest first; they wait no
        more (a later change makes them wait again)."""
        now = self._clock()
        due = [entry for entry in self._waiting.values() if now - entry.since >= seconds]
        for entry in due:
            del self._waiting[entry.path]
        return sorted(due, key=lambda entry: entry.since)

    def say(self, path: str) -> bool:
        """True the first time ``path`` is said to be junk (the caller logs it), False after."""
        if path in self.said:
            return False
        self.said.add(path)
        return True


def plainly_not(path: Path) -> bool:
    """True when the start of ``path`` already shows it is no session, however it grows: a NUL
    byte (no session format is binary), or a ``.jsonl`` whose first whole line is not a JSON
    object (newcomer finding 7: short junk files were never reported)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    if b"\0" in head:
        return True
    first, newline, _ = head.partition(b"\n")
    if path.suffix != ".jsonl" or not newline:
        return False
    try:
        return not isinstance(json.loads(first), dict)
    except ValueError:
        return True


def has_lines(path: Path, count: int) -> bool:
    """True when the first 64 KiB of ``path`` hold ``count`` newlines, or are all there."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    return head.count(b"\n") >= count or len(head) == 65536


__all__ = ["JUDGED_AFTER", "QUIET_SECONDS", "Junk", "Waiting", "has_lines", "plainly_not"]
