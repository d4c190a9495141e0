"""What a search query asks for, by the shared analyzer's rules (issue 14; API.md section 6).

A query is :func:`normalize`-d and cut into **units**, each something a matching text must
hold (:mod:`loomsync.core.textsearch.analyzer` says how text becomes lexemes):

- a plain word is a unit of one lexeme (``servers`` looks for ``server``);
- a white-space-free chunk of several words, parts or bigrams is a **phrase**: its words must
  appear in that order, next to each other. So identifiers (``_ - . / :``, camelCase, paths:
  ``messages_unique_session_uuid_index``, ``missing_colon.py``, ``0.0.0.0``) never match
  their parts scattered in any order, and a word of several parts also matches its joined
  lexeme (``missingColon`` finds ``missing_colon`` and ``missingcolon``);
- Han, kana and Hangul text matches as a phrase of its bigrams, so any substring of two or
  more characters is found; a single such character matches as a prefix of the bigrams.

Syntax ``plain`` (the default) ranks threads by how many units they hold and how well
(:mod:`loomsync.core.textsearch.scoring`): no unit is required, so a question asked in other words
still finds the thread that holds most of them; ``"quoted words"`` are one phrase unit (ranked,
not required either), and a query of two units or more also scores its units in order as one
more phrase, :attr:`Query.phrase` (a bonus for the words written together, as Lucene's edismax
``pf``: it only adds to the score of a text that holds it, and neither finds nor requires
anything). Syntax ``web`` is strict, as ``websearch_to_tsquery``: every term is required,
``"quoted words"`` are one phrase, ``or`` between two terms accepts either, and a leading ``-``
excludes a term. A thread has no one vector that holds all its text (each message has its
own), so a strict query is checked group by group (:attr:`Query.groups`, :attr:`Query.excluded`:
``app.threads.ranking`` and ``loomsync.store.localsearch.search``), not as one ``tsquery``.

Bounds (issue 11 item 4): a query keeps at most :data:`MAX_TERMS` lexemes (repeated units are
dropped, a phrase is cut to the budget, which only widens what it matches), so no query can
multiply the work of matching, ranking or highlighting (the phrase bonus is made of the same
lexemes: it at most doubles them, for the scoring of the candidates only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from loomsync.core.textsearch.analyzer import Segment, segments
from loomsync.core.textsearch.normalize import normalize

MAX_TERMS = 16
PLAIN, WEB = "plain", "web"
_WEB_TOKEN = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')
_PLAIN_TOKEN = re.compile(r'"([^"]*)"?|([^\s"]+)')

Alternative = tuple[str, ...]
"""Lexemes at consecutive positions; a lexeme ending in ``*`` matches as a prefix."""
Slot = tuple[Alternative, ...]
"""One word of a unit: any of its alternatives (a word's parts, or its joined lexeme)."""


def lexeme_tsquery(lexeme: str) -> str:
    """One lexeme as ``tsquery`` text: ``'x'``, or ``'x':*`` for a prefix (``x*``)."""
    return f"'{lexeme[:-1]}':*" if lexeme.endswith("*") else f"'{lexeme}'"


@dataclass(frozen=True, slots=True)
class Unit:
    """A word or a phrase a text must hold: ``slots`` at consecutive positions."""

    slots: tuple[Slot, ...]

    @property
    def lexemes(self) -> tuple[str, ...]:
        """Every lexeme of the unit, once, in order (a prefix keeps its ``*``)."""
        seen = dict.fromkeys(lex for slot in self.slots for alt in slot for lex in alt)
        return tuple(seen)

    @property
    def size(self) -> int:
        """Lexemes the unit costs against :data:`MAX_TERMS`."""
        return sum(len(alt) for slot in self.slots for alt in slot)

    @property
    def is_phrase(self) -> bool:
        """True when the unit is more than one lexeme at one position."""
        return len(self.slots) > 1 or any(len(alt) > 1 for alt in self.slots[0])

    def tsquery(self) -> str:
        """The unit as PostgreSQL ``tsquery`` text (``<->`` between positions, ``|`` between
        alternatives), parenthesised so that it can be combined."""
        rendered = []
        for slot in self.slots:
            alternatives = [" <-> ".join(lexeme_tsquery(lex) for lex in alt) for alt in slot]
            rendered.append(alternatives[0] if len(slot) == 1 else f"({' | '.join(alternatives)})")
        return f"( {' <-> '.join(rendered)} )"

    def rank_tsquery(self) -> str:
        """The ``tsquery`` text whose ``ts_rank`` is the unit's ``tf``: its distinct lexemes
        or-ed (:func:`loomsync.core.textsearch.scoring.unit_tf`), linear in the text, where
        ``ts_rank`` of a phrase would compare every pair of its words' positions."""
        return " | ".join(lexeme_tsquery(lex) for lex in self.lexemes)


@dataclass(frozen=True, slots=True)
class Query:
    """A parsed query: ``groups`` of units (a group matches when any of its units does),
    ``excluded`` units, and ``strict`` (syntax ``web``: every group required, no excluded unit
    allowed; ``plain``: ranked, any unit may match, nothing excluded)."""

    groups: tuple[tuple[Unit, ...], ...]
    excluded: tuple[Unit, ...]
    strict: bool

    @property
    def units(self) -> tuple[Unit, ...]:
        """Every positive unit, once, in order."""
        return tuple(dict.fromkeys(unit for group in self.groups for unit in group))

    @property
    def lexemes(self) -> tuple[str, ...]:
        """Every positive lexeme, once, in order (prefixes keep their ``*``)."""
        return tuple(dict.fromkeys(lex for unit in self.units for lex in unit.lexemes))

    @property
    def searchable(self) -> bool:
        """False when nothing can match (no positive unit)."""
        return bool(self.groups)

    def any_tsquery(self) -> str:
        """``tsquery`` text matching what may rank: any positive unit."""
        return " | ".join(unit.tsquery() for unit in self.units)

    def every_tsquery(self) -> str:
        """``tsquery`` text matching a text that holds every positive unit."""
        return " & ".join(unit.tsquery() for unit in self.units)

    @property
    def phrase(self) -> Unit | None:
        """For a ``plain`` query of two units or more: its units in order as one phrase, which
        only scores (module docstring; :data:`loomsync.core.textsearch.scoring.PHRASE_WEIGHT`);
        None otherwise: ``web`` queries, one unit, or a group of alternative units (a hex
        word's prefix or the word, :func:`loomsync.core.textsearch.commits.with_hex_prefix`), which
        are not words written one after the other."""
        if self.strict or len(self.groups) < 2 or any(len(group) != 1 for group in self.groups):
            return None
        return Unit(tuple(slot for (unit,) in self.groups for slot in unit.slots))


def unit_of(found: Iterable[Segment]) -> Unit | None:
    """The unit for consecutive segments (one white-space-free chunk, or a quoted phrase);
    None when they hold no lexeme (stop words, punctuation)."""
    slots: list[Slot] = []
    for segment in found:
        if segment.cjk:
            run = segment.end - segment.start
            lexemes = tuple(p.lexeme for p in segment.parts)
            slots.append(((lexemes[0] + "*",),) if run == 1 else (lexemes,))
            continue
        alternatives: list[Alternative] = []
        if segment.parts:
            alternatives.append(tuple(p.lexeme for p in segment.parts))
        if segment.joined is not None and (segment.joined,) not in alternatives:
            alternatives.append((segment.joined,))
        slots.append(tuple(alternatives))
    return Unit(tuple(slots)) if slots else None


def _cut(unit: Unit, budget: int) -> Unit | None:
    """``unit`` within ``budget`` lexemes: whole, or its first whole slots; when not even the
    first slot fits (a word of more parts than the budget), the first ``budget`` of its parts
    as a phrase. Every cut only widens what the unit matches."""
    if unit.size <= budget:
        return unit
    slots: list[Slot] = []
    used = 0
    for slot in unit.slots:
        cost = sum(len(alternative) for alternative in slot)
        if used + cost > budget:
            break
        slots.append(slot)
        used += cost
    if not slots and budget > 0:
        return Unit(((unit.slots[0][0][:budget],),))
    return Unit(tuple(slots)) if slots else None


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_TERMS
        self.seen: set[Unit] = set()

    def take(self, unit: Unit | None) -> Unit | None:
        if unit is None or unit in self.seen or self.left <= 0:
            return None
        kept = _cut(unit, self.left)
        if kept is not None:
            self.seen.add(unit)
            self.left -= kept.size
        return kept


def _chunk(text: str) -> Unit | None:
    return unit_of(segments(normalize(text)))


def parse(q: str, syntax: str = PLAIN) -> Query:
    """Parse query text ``q`` in ``syntax`` (``plain`` or ``web``; module docstring). Never
    raises on any text; a query of no lexemes is not :attr:`Query.searchable`."""
    budget = _Budget()
    if syntax != WEB:
        plain = [
            (unit,)
            for match in _PLAIN_TOKEN.finditer(normalize(q))
            if (unit := budget.take(_chunk(match.group(1) or match.group(2) or "")))
        ]
        return Query(tuple(plain), (), strict=False)
    groups: list[tuple[Unit, ...]] = []
    excluded: list[Unit] = []
    joining = False
    for match in _WEB_TOKEN.finditer(normalize(q)):
        negated, phrase, word = match.group(1), match.group(2), match.group(3)
        if phrase is None and word.lower() == "or" and not negated:
            joining = bool(groups)
            continue
        unit = _chunk(phrase if phrase is not None else word)
        if negated:
            if unit is not None and unit not in excluded and len(excluded) < MAX_TERMS:
                excluded.append(unit)
            joining = False
            continue
        kept = budget.take(unit)
        if kept is None:
            continue
        if joining and groups:
            groups[-1] = (*groups[-1], kept)
        else:
            groups.append((kept,))
        joining = False
    return Query(tuple(dict.fromkeys(groups)), tuple(excluded), strict=True)
