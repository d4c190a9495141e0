"""Short thread ids (issue 16, item 4): the one resolver every command that takes a thread id
calls, like git's abbreviated hashes.

``show 5c187f31``, ``show T-5c18``: any prefix of at least :data:`MIN_HEX` hex digits of an id
(with or without ``T-``, any case) names the one thread on this machine whose id starts so. A
whole id is taken as it is, held here or not (commands that reach the server for a thread
this machine does not hold need it whole). Nothing matching, or several: a
:class:`~loomsync.errors.LoomsyncError`, so exit code 1 with a message that says what to do
(the candidates, with their titles, for an ambiguous prefix).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from loomsync.core.document.ids import PREFIX, InvalidThreadId, ThreadId
from loomsync.errors import (
    AmbiguousThreadIdError,
    NotAThreadIdError,
    ThreadNotFoundError,
)

if TYPE_CHECKING:
    from loomsync.store.local import LocalThreadStore

#: The fewest hex digits a short id may have.
MIN_HEX = 4
#: Candidates listed for an ambiguous prefix.
_SHORT = re.compile(r"[0-9a-f][0-9a-f-]*")
_WHOLE = re.compile(r"T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_THREAD_FILE = re.compile(r"(T-[0-9a-f-]{36})\.jsonl?")  # the log, or an older client's file


def local_ids(local: LocalThreadStore) -> list[str]:
    """Ids of the thread files on this machine (names only; nothing is parsed)."""
    try:
        names = [entry.name for entry in local.root.iterdir()]
    except OSError:
        return []
    found = {match.group(1) for name in names if (match := _THREAD_FILE.fullmatch(name))}
    return sorted(found)


def resolve(local: LocalThreadStore, ref: str) -> str:
    """The whole thread id ``ref`` names (see the module docstring).

    Raises:
        NotAThreadIdError: not a thread id nor a prefix of at least :data:`MIN_HEX` hex digits.
        ThreadNotFoundError: no thread on this machine starts so.
        AmbiguousThreadIdError: several do.
    """
    return resolve_among(local_ids(local), ref, local)


def resolve_among(candidates: Iterable[str], ref: str, local: LocalThreadStore) -> str:
    """As :func:`resolve`, among ``candidates`` (e.g. the threads of the failed sync entries,
    some of them deleted here: ``loomsync sync --drop``); ``local`` gives the titles of an
    ambiguous prefix's candidates.

    Raises:
        NotAThreadIdError, ThreadNotFoundError, AmbiguousThreadIdError: as :func:`resolve`.
    """
    try:
        return str(ThreadId.parse(ref))
    except InvalidThreadId:
        pass
    short = ref.strip()
    body = short[len(PREFIX) :] if short.upper().startswith(PREFIX) else short
    body = body.lower()
    if not _SHORT.fullmatch(body) or len(body.replace("-", "")) < MIN_HEX:
        raise NotAThreadIdError(
            f"{ref!r} is not a thread id: give the id (T-…) or at least {MIN_HEX} of its first "
            "hex digits, as `loomsync list` shows"
        )
    matches = sorted({tid for tid in candidates if tid[len(PREFIX) :].startswith(body)})
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ThreadNotFoundError(
            short,
            f"no thread on this machine has an id starting with {short}; `loomsync list` shows "
            "them (a thread only on the server needs its whole id, as `loomsync list --server` "
            "shows)",
        )
    raise AmbiguousThreadIdError(short, _titled(local, matches))


#: The fewest hex digits a short id shown at a terminal has (``loomsync list``).
SHOWN_HEX = 8


def abbreviations(listed: Iterable[str], among: Iterable[str]) -> dict[str, str]:
    """Per id of ``listed``, its short form at a terminal (issue 16 items 1 and 4): ``T-``
    and the fewest leading characters, at least :data:`SHOWN_HEX` hex digits, that no other id
    of ``among`` (this machine's ids, :func:`local_ids`) starts with, the same length for every
    row (like git's abbreviated hashes). :func:`resolve` takes each back to its id.

    An id with a shared 36-character body (never: ids are unique) is shown whole.
    """
    wanted = [tid for tid in dict.fromkeys(listed) if _WHOLE.fullmatch(tid)]
    others = sorted({tid[len(PREFIX) :] for tid in among} | {t[len(PREFIX) :] for t in wanted})
    length = SHOWN_HEX
    bodies = {t[len(PREFIX) :] for t in wanted}
    for before, after in itertools.pairwise(others):
        if before not in bodies and after not in bodies:
            continue  # two ids not listed: how alike they are does not matter here
        common = next(
            (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b),
            min(len(before), len(after)),
        )
        length = max(length, common + 1)
    body = wanted[0][len(PREFIX) :] if wanted else ""
    if length < len(body) and body[length - 1] == "-":
        length += 1  # never end on a dash
    return {tid: tid[: len(PREFIX) + length] for tid in wanted}  # others: shown whole


def _titled(local: LocalThreadStore, ids: Iterable[str]) -> list[tuple[str, str]]:
    wanted = set(ids)
    rows = [row for row in local.list(archived="any") if row.id in wanted]
    titled = [(row.id, row.title or "(untitled)") for row in rows]
    listed = {tid for tid, _ in titled}
    return titled + [(tid, "(unreadable)") for tid in sorted(wanted - listed)]


__all__ = [
    "MIN_HEX",
    "SHOWN_HEX",
    "AmbiguousThreadIdError",
    "NotAThreadIdError",
    "abbreviations",
    "local_ids",
    "resolve",
    "resolve_among",
]
