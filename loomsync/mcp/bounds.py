"""What bounds the answers of ``search_threads`` and ``list_threads`` (issue 27 item 3).

Every string of an answer comes from threads (an imported file, a server's copy), so each one
goes through :func:`~loomsync.terminal.printable` (ESC, CSI, OSC 8 links, C0 and C1 controls,
bidi overrides and isolates, lone surrogates become visible escapes; newlines too: each field is
one line) and is cut (:func:`~loomsync.terminal.clip`, ``…`` at the end) to its field's limit,
:data:`FIELD_CHARS`. Then the answer as a whole, the JSON text the SDK sends as the tool
result's text (``indent=2``; the structured content is the same data), is kept within
:data:`ANSWER_BUDGET` characters by leaving out its last rows. Whatever was cut or left out
is said in the answer's ``truncated`` note, which names the threads whose fields were cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import pydantic_core
from pydantic import BaseModel

from loomsync.terminal import clip, printable

#: Characters of the JSON text of one answer (the tool result's text block) at most.
ANSWER_BUDGET = 40_000
#: Characters each field shows at most (as made printable; then ``…`` says it was cut).
FIELD_CHARS: dict[str, int] = {
    "thread_id": 64,
    "title": 200,
    "snippet": 600,
    "workspace": 500,
    "branch": 200,
    "repo": 500,
    "note": 1_000,
    "warning": 400,
}
#: Thread ids named per cut field in the note (then "and N more").
NAMED = 3

Row = TypeVar("Row")


class Cuts:
    """The fields of one answer made printable and cut, remembering which were cut."""

    def __init__(self) -> None:
        """An answer with nothing cut yet."""
        self._cut: dict[str, list[str]] = {}

    def field(self, name: str, value: str | None, thread_id: str = "") -> str | None:
        """``value`` made printable (one line) and cut to ``FIELD_CHARS[name]`` characters
        (then it ends with ``…``, and the cut is remembered against ``thread_id``); None
        stays None."""
        if value is None:
            return None
        limit = FIELD_CHARS[name]
        shown = printable(value)
        if len(shown) <= limit:
            return shown
        self._cut.setdefault(name, []).append(thread_id)
        return printable(clip(value, limit))

    def note(self, shown: set[str], left_out: int, budget: int = ANSWER_BUDGET) -> str | None:
        """What was cut among the threads ``shown``, and how many rows ``left_out`` to keep
        the answer within ``budget``; None when nothing was."""
        parts = []
        for name, owners in self._cut.items():
            named = [owner for owner in owners if owner in shown or not owner]
            if not named:
                continue
            ids = [owner for owner in named if owner][:NAMED]
            more = len(named) - len(ids)
            whose = f" of {', '.join(ids)}" if ids else ""
            whose += f" and {more} more" if more and ids else ""
            parts.append(f"{name} cut to {FIELD_CHARS[name]:,} characters{whose}")
        if left_out:
            parts.append(
                f"{left_out} more left out to keep the answer within {budget:,} characters "
                "(ask for fewer, or narrow the search)"
            )
        return "; ".join(parts) if parts else None


def size(answer: BaseModel) -> int:
    """Characters of ``answer`` as the SDK's tool result text (JSON, ``indent=2``)."""
    return len(pydantic_core.to_json(answer, indent=2).decode())


def fitted(
    rows: Sequence[Row], answer: Callable[[Sequence[Row]], BaseModel], budget: int = ANSWER_BUDGET
) -> int:
    """How many first ``rows`` the answer ``answer(rows[:n])`` can hold within ``budget``
    characters (:func:`size`): all of them when they fit, else the most that fit (at least
    0), found by bisection (about log2(len(rows)) answers made)."""
    if size(answer(rows)) <= budget:
        return len(rows)
    low, high = 0, len(rows) - 1  # answer(rows[:low]) fits, by assumption; rows[:high+1] not
    while low < high:
        middle = (low + high + 1) // 2
        if size(answer(rows[:middle])) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


__all__ = ["ANSWER_BUDGET", "FIELD_CHARS", "Cuts", "fitted", "size"]
