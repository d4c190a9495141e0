"""What the local index stores of a text: the very lexemes, positions and weights the server's
``tsvector`` holds, and how a query unit matches them (issue 14, item 3).

:func:`entries` makes what :func:`loomsync.core.textsearch.vectors.tsvector` writes (the text the
server casts to ``tsvector``) as PostgreSQL's ``tsvector_in`` reads it (``tsvector.c``,
``uniquePos``): each lexeme's positions sorted, a repeated position kept once with its highest
weight, at most 256 positions, none past 16383, from the same analyzer walk, so the local
index holds the server's vectors (a test compares them with PostgreSQL's).

A position is packed as PostgreSQL's ``WordEntryPos``: 14 bits of position, 2 bits of weight
(``3`` = ``A`` … ``0`` = ``D``), two bytes each (:func:`pack`, :func:`unpack`).

:func:`match` evaluates one :class:`~loomsync.core.textsearch.query.Unit` over a vector's lexemes
exactly as PostgreSQL evaluates :meth:`Unit.tsquery` (``TS_phrase_execute`` in
``tsvector_op.c``): ``a <-> b`` holds where ``b`` sits one position after the end of ``a``;
``x | y`` merges the position lists, each side shifted to the wider matching side's width (so
where a word's parts and its joined lexeme both match, the joined one is shifted); a prefix
lexeme (``'x':*``) takes the positions of every lexeme it starts. Each matched occurrence keeps
a weight (the lowest of a phrase's words, the highest of alternatives at one position), and
:func:`term_frequency` is :func:`loomsync.core.textsearch.scoring.rank_or` of those weights (for
one word, its ``ts_rank``). The search's ``tf`` of a unit is the server's instead
(:func:`loomsync.core.textsearch.scoring.unit_tf` over every occurrence of each of the unit's
lexemes, ``loomsync.store.localsearch.search``), which is not the same for a phrase.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Mapping

from loomsync.core.textsearch.fields import Field
from loomsync.core.textsearch.query import Slot, Unit
from loomsync.core.textsearch.scoring import rank_or
from loomsync.core.textsearch.vectors import MAX_POSITION, positions

#: Weight letter → the 2-bit code of ``WordEntryPos`` (PostgreSQL: D 0, C 1, B 2, A 3).
WEIGHT_CODES = {"A": 3, "B": 2, "C": 1, "D": 0}
_LETTERS = "DCBA"

Occurrences = dict[int, int]
"""Position → weight code of where a lexeme (or a unit) occurs."""
Vector = dict[str, Occurrences]
"""Lexeme → its occurrences: one ``tsvector``."""
Lookup = Callable[[str], Occurrences]
"""The occurrences of a lexeme (``'x*'``: of every lexeme starting with ``x``) in one vector."""


def entries(fields: Iterable[Field]) -> Vector:
    """The vector of ``fields`` ((text, weight letter) pairs) as PostgreSQL stores
    ``CAST(tsvector(fields) AS tsvector)`` (module docstring): the same walk over the
    analyzer's lexemes as :func:`~loomsync.core.textsearch.vectors.positions` (each field's positions
    after the previous field's last, a lexeme's first 256 positions, clamped), then
    ``tsvector_in``'s rule for a repeated position (kept once, with its highest weight).
    tests/client/test_localsearch_postgres.py checks it against PostgreSQL."""
    vector: Vector = {}
    for lexeme, found in positions(fields).items():
        occurrences: Occurrences = {}
        for position, weight in found:  # positions only grow: already sorted
            code = WEIGHT_CODES[weight]
            held = occurrences.get(position)
            if held is None:
                occurrences[position] = code
                if position == MAX_POSITION:  # uniquePos stops at the last position
                    break
            elif held < code:
                occurrences[position] = code
        vector[lexeme] = occurrences
    return vector


def pack(occurrences: Occurrences) -> bytes:
    """Occurrences as ``WordEntryPos`` values (2 bytes each, position order)."""
    return array("H", (code << 14 | pos for pos, code in sorted(occurrences.items()))).tobytes()


def unpack(data: bytes) -> Occurrences:
    """The inverse of :func:`pack`."""
    values = array("H")
    values.frombytes(data)
    return {value & 0x3FFF: value >> 14 for value in values}


def weights_of(occurrences: Occurrences, weights: Mapping[str, float]) -> list[float]:
    """The weights (``weights`` by letter, e.g. ``MESSAGE_WEIGHTS``) in position order."""
    return [weights[_LETTERS[code]] for _, code in sorted(occurrences.items())]


def _phrase(
    left: Occurrences, left_width: int, right: Occurrences, right_width: int
) -> tuple[Occurrences, int]:
    """``left <-> right``: a position of ``right`` one past the end of ``left``."""
    offset = 1 + right_width
    out: Occurrences = {}
    for position, code in right.items():
        other = left.get(position - offset)
        if other is not None:
            out[position] = min(code, other)
    return out, (1 + left_width + right_width) if out else 0


def _either(
    left: Occurrences, left_width: int, right: Occurrences, right_width: int
) -> tuple[Occurrences, int]:
    """``left | right`` inside a phrase: positions aligned to the wider side's end, a side
    that did not match counting as width 0 (PostgreSQL: "undefined output width from failed
    submatch")."""
    left_width = left_width if left else 0
    right_width = right_width if right else 0
    width = max(left_width, right_width)
    out: Occurrences = {}
    for side, side_width in ((left, left_width), (right, right_width)):
        for position, code in side.items():
            at = position + width - side_width
            if out.get(at, -1) < code:
                out[at] = code
    return out, width


def _chain(lexemes: Iterable[str], lookup: Lookup) -> tuple[Occurrences, int] | None:
    result: tuple[Occurrences, int] | None = None
    for lexeme in lexemes:
        found = lookup(lexeme)
        result = (found, 0) if result is None else _phrase(*result, found, 0)
        if not result[0]:
            return {}, 0
    return result


def _slot(slot: Slot, lookup: Lookup) -> tuple[Occurrences, int]:
    result: tuple[Occurrences, int] | None = None
    for alternative in slot:
        found = _chain(alternative, lookup) or ({}, 0)
        result = found if result is None else _either(*result, *found)
    return result or ({}, 0)


def match(unit: Unit, lookup: Lookup) -> Occurrences:
    """Where ``unit`` occurs in a vector (empty: it does not match), by PostgreSQL's rules
    (module docstring). A unit of one slot of several alternatives is an ``|`` at the top of
    the ``tsquery``, which PostgreSQL evaluates without positions: its occurrences are those of
    each alternative unshifted (a word's parts and its joined lexeme end at one position), so a
    word is counted once."""
    if len(unit.slots) == 1 and len(unit.slots[0]) > 1:
        merged: Occurrences = {}
        for alternative in unit.slots[0]:
            found = _chain(alternative, lookup)
            for position, code in (found[0] if found else {}).items():
                if merged.get(position, -1) < code:
                    merged[position] = code
        return merged
    result: tuple[Occurrences, int] | None = None
    for slot in unit.slots:
        found = _slot(slot, lookup)
        result = found if result is None else _phrase(*result, *found)
        if not result[0]:
            return {}
    return result[0] if result else {}


def term_frequency(occurrences: Occurrences, weights: Mapping[str, float]) -> float:
    """``tf`` of a unit in a vector: :func:`rank_or` of its occurrences' weights (0 for none)."""
    return rank_or(weights_of(occurrences, weights)) if occurrences else 0.0


__all__ = [
    "WEIGHT_CODES",
    "Lookup",
    "Occurrences",
    "Vector",
    "entries",
    "match",
    "pack",
    "term_frequency",
    "unpack",
    "weights_of",
]
