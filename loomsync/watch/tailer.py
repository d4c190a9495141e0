"""Reading what a growing file gained (issue 17 item 1): the complete lines after an offset.

A line is complete once its newline is written; a half-written last line is left for the next
read, so a JSON record is never parsed from half of its bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from loomsync.watch.offsets import tail_digest


@dataclass(frozen=True, slots=True)
class Tail:
    """What :func:`read_lines` found: ``data`` (whole lines, possibly empty), the ``offset``
    just past them, the file's ``stat`` when read and the ``tail`` digest at ``offset``."""

    data: bytes
    offset: int
    stat: os.stat_result
    tail: str


def read_lines(path: Path, offset: int) -> Tail:
    """The complete lines of ``path`` from byte ``offset`` on: O(new bytes).

    Raises:
        OSError: the file cannot be read (gone, no permission).
    """
    with open(path, "rb") as handle:
        stat = os.fstat(handle.fileno())
        handle.seek(offset)
        data = handle.read(max(0, stat.st_size - offset))
        end = data.rfind(b"\n") + 1  # a half-written last line waits for its newline
        position = offset + end
        return Tail(data[:end], position, stat, tail_digest(handle, position))


__all__ = ["Tail", "read_lines"]
