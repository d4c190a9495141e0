"""Snippets: the passages of a text where a query matches, its matched words marked (issue 14).

The text is :func:`normalize`-d and cut by the same analyzer as the index, so a snippet marks
exactly the words that made the text match (stems, camelCase parts, joined identifiers,
bigrams, one Han/kana/Hangul character as a prefix), never a near miss, and never misses one
because it is spelled in another Unicode form. A phrase unit (an identifier, a quoted phrase,
a run of bigrams) is marked only where its words stand next to each other, in order, any of a
slot's alternatives (parts or joined lexeme) counting.

How a snippet is chosen, at a cost bounded whatever the text's length (10 MB included):

1. **Candidates, cheaply**: one case-insensitive regular expression per lexeme finds where a
   word could start to match it (the lexeme's stem prefix, or a character whose case folding
   begins where the prefix stops: ``stras`` also finds ``straß``), at most
   :data:`MAX_CANDIDATES_PER_LEXEME` places each, in the text as given. Only the regions
   analysed are normalised (:func:`normalize` changes nothing across white space, so a region
   cut at white space normalises as it would inside the whole text). When no region holds a
   match (the text matches only in a spelling the raw search cannot see: full-width letters, a
   soft hyphen inside the word), the whole text is normalised and searched again (linear,
   about 10 ms a megabyte).
2. **Windows, exactly**: the candidate places where most distinct units could meet are
   analysed (at most :data:`MAX_REGIONS` regions of a few hundred characters each): tokens,
   then the units' exact matches.
3. **Fragments**: the best fragment (at most ``window`` characters) holds most distinct units,
   then most matches; up to :data:`MAX_FRAGMENTS` - 1 shorter fragments add units it lacks.
   Fragments are in text order, joined by `` … ``, with ``…`` where a fragment cuts the text.

**Bounds**: a fragment shows at most its width of text (``window``, the others ``window // 2``),
phrases included: a match longer than that (a phrase of :data:`~.query.MAX_TERMS` long words,
or words joined by long punctuation) is shown cut at its width, what is shown of it marked, and
matches that overlap each other (``x x x`` for the phrase ``"x x"``) are marked as one span but
never widen the fragment. So a snippet's text (without its marks) is at most ``window`` +
(``MAX_FRAGMENTS`` - 1) * ``window // 2`` characters before HTML escaping, plus separators.

**Redacted first** (issue 27 item 5): each region is redacted as part of the text around it
before anything is cut from it (:func:`loomsync.core.textsearch.redacted.redacted_piece`), so a
value whose name lies outside the snippet is a marker too.

Output is HTML-escaped text with each match wrapped in ``<b>…</b>`` (API.md section 6), runs of
white space as one space. Cuts fall on white space when one is near, and never inside a
terminal escape sequence (``ESC [ 31 m``, OSC … BEL: kept whole or left out, as
:func:`loomsync.terminal.clip` does) or a grapheme cluster (a letter and its combining marks, an
emoji ZWJ sequence, a flag); escaping after cutting means no HTML entity is ever split, and
Python strings hold code points, so no surrogate pair is either (lone surrogates are removed by
:func:`normalize`).
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from loomsync.core.redactionmark import MARKER_PREFIX
from loomsync.core.textsearch.analyzer import tokens
from loomsync.core.textsearch.cuts import boundary, prefix_pattern
from loomsync.core.textsearch.normalize import normalize
from loomsync.core.textsearch.query import Query, Unit
from loomsync.core.textsearch.redacted import redacted_piece

WINDOW_CHARS = 160
#: Fragments of one snippet at most (the first of ``window`` characters, others half as long).
MAX_FRAGMENTS = 3
#: Candidate places kept per lexeme (the first ones in the text).
MAX_CANDIDATES_PER_LEXEME = 200
#: Regions analysed exactly per snippet at most.
MAX_REGIONS = 6
#: How far a word may run past a region's edge without being cut (longest lexeme and more).
MARGIN_CHARS = 80
_SPACE = re.compile(r"\s+")
_MARKER = re.compile(re.escape(MARKER_PREFIX) + r"[a-z0-9\-]+\]")
_BREAK = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class Match:
    """One match of a unit (index into the query's units) over ``[start, end)`` of a region."""

    start: int
    end: int
    unit: int


@dataclass(frozen=True, slots=True)
class Region:
    """A normalised piece of the text, where it sits (``offset`` in the text searched;
    ``at_start``/``at_end``: it begins or ends the whole text) and its exact matches, sorted."""

    text: str
    offset: int
    at_start: bool
    at_end: bool
    matches: tuple[Match, ...]


def _prefix(lexeme: str) -> str:
    """Text every word holding ``lexeme`` contains, casefolded: an English stem ends where the
    word may go on (``happi`` for ``happy``), so its last letter is dropped when longer than 3."""
    if lexeme.endswith("*"):
        return lexeme[:-1]
    return lexeme[:-1] if len(lexeme) > 3 and not lexeme.isdigit() else lexeme


def _candidates(source: str, units: Sequence[Unit]) -> list[tuple[int, int]]:
    """(offset, unit) places in ``source`` where a unit's lexeme may match, sorted."""
    found: list[tuple[int, int]] = []
    by_prefix: dict[str, set[int]] = {}
    for index, unit in enumerate(units):
        for lexeme in unit.lexemes:
            by_prefix.setdefault(_prefix(lexeme), set()).add(index)
    for prefix, owners in by_prefix.items():
        if not prefix:
            continue
        for count, hit in enumerate(prefix_pattern(prefix).finditer(source)):
            if count >= MAX_CANDIDATES_PER_LEXEME:
                break
            found += [(hit.start(), unit) for unit in owners]
    found.sort()
    return found


def _anchors(found: list[tuple[int, int]], span: int) -> list[int]:
    """Candidate offsets, best first: most distinct units within ``span`` characters after
    them, then most candidates, then earliest."""
    scored: list[tuple[int, int, int]] = []
    inside: Counter[int] = Counter()
    high = 0
    for low, (offset, _) in enumerate(found):
        while high < len(found) and found[high][0] < offset + span:
            inside[found[high][1]] += 1
            high += 1
        scored.append((-len(inside), -(high - low), offset))
        unit = found[low][1]
        inside[unit] -= 1
        if not inside[unit]:
            del inside[unit]
    return [offset for _, _, offset in sorted(scored)]


def _leaf(lexeme: str, at: dict[str, list[tuple[int, int, int]]]) -> list[tuple[int, int, int]]:
    if not lexeme.endswith("*"):
        return at.get(lexeme, [])
    prefix = lexeme[:-1]
    return [
        (position, start, min(end, start + len(prefix)))
        for key, found in at.items()
        if key.startswith(prefix)
        for position, start, end in found
    ]


def unit_matches(unit: Unit, at: dict[str, list[tuple[int, int, int]]]) -> list[tuple[int, int]]:
    """Spans ``(start, end)`` where ``unit`` matches, from ``at``: lexeme → (position, start,
    end) of its tokens. Slots must follow each other (the first lexeme of a slot's alternative
    at the position after the last of the previous slot); within an alternative, its lexemes at
    consecutive positions."""
    # Partial matches: end position -> earliest start offset, extended slot by slot.
    partial: dict[int, int] | None = None
    last_end: dict[int, int] = {}
    for slot in unit.slots:
        step: dict[int, int] = {}
        ends: dict[int, int] = {}
        for alternative in slot:
            # Each way through the alternative: (first position, last position, start, end).
            ways = [(p, p, s, e) for p, s, e in _leaf(alternative[0], at)]
            for lexeme in alternative[1:]:
                following: dict[int, tuple[int, int]] = {}
                for p, s, e in _leaf(lexeme, at):
                    following.setdefault(p, (s, e))
                ways = [
                    (first, p + 1, s, following[p + 1][1])
                    for first, p, s, _ in ways
                    if p + 1 in following
                ]
            for first, last, s, e in ways:
                if partial is None:
                    begin = s
                elif first - 1 in partial:
                    begin = partial[first - 1]
                else:
                    continue
                if last not in step or begin < step[last]:
                    step[last] = begin
                ends[last] = max(ends.get(last, e), e)
        partial, last_end = step, ends
        if not partial:
            return []
    assert partial is not None
    return [(begin, last_end[last]) for last, begin in partial.items()]


def analyse(text: str, units: Sequence[Unit]) -> list[Match]:
    """Every match of ``units`` in normalised ``text``, sorted by start."""
    at: dict[str, list[tuple[int, int, int]]] = {}
    for token in tokens(text):
        at.setdefault(token.lexeme, []).append((token.position, token.start, token.end))
    found = [
        Match(start, end, index)
        for index, unit in enumerate(units)
        for start, end in unit_matches(unit, at)
    ]
    return sorted(found, key=lambda m: (m.start, m.end))


def _region(source: str, start: int, end: int, raw: bool, units: Sequence[Unit]) -> Region:
    """``source[start:end]`` widened to white space (within :data:`MARGIN_CHARS`; else cut
    where no escape sequence or grapheme cluster is split), normalised when ``raw`` (``source``
    is the text as given), with its exact matches."""
    if start > 0:
        space = _BREAK.search(source, max(0, start - MARGIN_CHARS), start)
        start = space.end() if space else boundary(source, start - MARGIN_CHARS, forward=True)
    if end < len(source):
        space = _BREAK.search(source, end, end + MARGIN_CHARS)
        end = space.start() if space else boundary(source, end + MARGIN_CHARS, forward=False)
    piece = redacted_piece(source, start, end)  # redacted before it is cut (issue 27 item 5)
    redacted = MARKER_PREFIX in piece and piece != source[start:end]
    if raw:
        while start > 0 and piece.startswith("n") and source[start - 1] == "\\":
            piece, start = piece[1:], start + 1  # not half of an escaped line break
        piece = normalize(piece)
    matches = tuple(analyse(piece, units))
    if redacted:  # a word of a marker this made ([REDACTED:aws-access-key]) is no match
        markers = [m.span() for m in _MARKER.finditer(piece)]
        matches = tuple(
            m for m in matches if not any(s < m.end and m.start < e for s, e in markers)
        )
    return Region(piece, start, start == 0, end >= len(source), matches)


def _regions(source: str, raw: bool, query: Query, window: int) -> list[Region]:
    """Regions of ``source`` to cut fragments from: the whole text when short, else up to
    :data:`MAX_REGIONS` regions around the best candidate places."""
    units = query.units
    if len(source) <= 4 * window:
        return [_region(source, 0, len(source), raw, units)]
    found = _candidates(source, units)
    regions: list[Region] = []
    covered: list[tuple[int, int]] = []
    seen: set[int] = set()
    for offset in _anchors(found, window):
        if len(regions) >= MAX_REGIONS or len(seen) == len(units):
            break
        start, end = offset - window, offset + 2 * window
        if any(s <= offset < e for s, e in covered):
            continue
        region = _region(source, max(0, start), min(len(source), end), raw, units)
        covered.append((start, end))
        if region.matches:
            regions.append(region)
            seen |= {m.unit for m in region.matches}
    return sorted(regions, key=lambda r: r.offset)


def _best(
    region: Region, width: int, wanted: set[int], blocked: list[tuple[int, int]]
) -> tuple[int, int, int, int] | None:
    """The best fragment of ``region`` of at most ``width`` characters, counting only units in
    ``wanted`` and clear of the ``blocked`` spans: (distinct units, matches, index of its first
    match, of its last), or None."""
    matches = region.matches
    best: tuple[int, int, int, int] | None = None
    for i, first in enumerate(matches):
        if first.unit not in wanted:
            continue
        units: set[int] = set()
        count = 0
        last = i
        for j in range(i, len(matches)):
            if matches[j].end - first.start > width:
                break
            if matches[j].unit in wanted:
                units.add(matches[j].unit)
                count += 1
                last = j
        low, high = first.start, matches[last].end
        if any(low < e + MARGIN_CHARS and s - MARGIN_CHARS < high for s, e in blocked):
            continue
        if best is None or (len(units), count) > (best[0], best[1]):
            best = (len(units), count, i, last)
    return best


def _merge(matches: Sequence[Match]) -> list[Match]:
    """Overlapping matches as one span (the first's unit), so no mark nests or repeats."""
    merged: list[Match] = []
    for match in matches:
        if merged and match.start < merged[-1].end:
            top = merged[-1]
            merged[-1] = Match(top.start, max(top.end, match.end), top.unit)
        else:
            merged.append(match)
    return merged


def _escape(piece: str) -> str:
    return html.escape(_SPACE.sub(" ", piece), quote=False)


def _render(
    region: Region, low: int, high: int, width: int, blocked: list[tuple[int, int]]
) -> tuple[int, int, str]:
    """The fragment of ``region`` holding ``[low, high)`` (its first ``width`` characters when
    longer), at most ``width`` characters, clear of ``blocked`` spans, cut at white space when
    one is near and never inside an escape sequence, a grapheme cluster or a match it does not
    show whole: (its start, its end, its text)."""
    text = region.text
    marks = _merge(region.matches)
    cut = high - low > width  # one match longer than the fragment: shown cut, marked
    high = min(high, low + width)
    room = width - (high - low)
    floor = max([0, *(e for s, e in blocked if e <= low)])
    ceiling = min([len(text), *(s for s, e in blocked if s >= high)])
    start = max(floor, low - room // 3)
    end = min(ceiling, high + room - (low - start))
    if 0 < start < low:
        space = _BREAK.search(text, start, low)
        start = space.end() if space and space.end() - start < 30 else start
    if end < len(text):
        spaces = [
            m.start() for m in _BREAK.finditer(text, max(low + 1 if cut else high, end - 30), end)
        ]
        end = spaces[-1] if spaces else end
    for mark in marks:  # a match cut at an edge is left out, unless it holds the chosen ones
        if mark.start < start < mark.end and mark.end <= low:
            start = mark.end
        if mark.start < end < mark.end and mark.start >= high:
            end = mark.start
    start = boundary(text, start, forward=True)
    end = max(start, boundary(text, end, forward=False))
    out: list[str] = []
    cursor = start
    for mark in marks:
        left, right = max(mark.start, start), min(mark.end, end)
        if left >= right:
            continue
        out += [_escape(text[cursor:left]), "<b>", _escape(text[left:right]), "</b>"]
        cursor = right
    out.append(_escape(text[cursor:end]))
    body = "".join(out).strip()
    if start > 0 or not region.at_start:
        body = "… " + body
    if end < len(text) or not region.at_end:
        body += " …"
    return start, end, body


def snippet(text: str, query: Query, window: int = WINDOW_CHARS) -> str | None:
    """Up to :data:`MAX_FRAGMENTS` passages of normalised ``text`` where most of ``query``'s
    units match (the first at most ``window`` characters, the others half as long), in text
    order, joined by `` … ``, HTML-escaped with each match in ``<b>…</b>``; None when no unit
    of ``query`` matches ``text``. Cost bounded for any length (module docstring)."""
    if not text or not query.units:
        return None
    regions = _regions(text, True, query, window)
    if not any(r.matches for r in regions) and not text.isascii() and len(text) > 4 * window:
        regions = _regions(normalize(text), False, query, window)  # a spelling only NFKC finds
    chosen: list[tuple[int, int, str]] = []  # (region, start, text)
    blocked: dict[int, list[tuple[int, int]]] = {}
    missing = set(range(len(query.units)))
    width = window
    while missing and len(chosen) < MAX_FRAGMENTS:
        options = []
        for index, region in enumerate(regions):
            best = _best(region, width, missing, blocked.get(index, []))
            if best is not None:
                options.append((best[0], best[1], -index, best))
        if not options:
            break
        _, _, negative, (_, _, first, last) = max(options)
        region = regions[-negative]
        inside = region.matches[first : last + 1]
        spans = blocked.setdefault(-negative, [])
        low, high = inside[0].start, max(m.end for m in inside)
        start, end, body = _render(region, low, high, width, spans)
        chosen.append((-negative, start, body))
        spans.append((start, end))
        missing -= {m.unit for m in inside}
        width = window // 2
    if not chosen:
        return None
    chosen.sort()
    out = chosen[0][2]
    for _, _, body in chosen[1:]:
        out = out.removesuffix(" …") + " … " + body.removeprefix("… ")
    return out


def message_snippet(texts: Sequence[str], query: Query) -> str | None:
    """A message's snippet from its indexed texts in order of preference (content, then its
    tool-call text, then any more: a content tail): the one whose snippet marks most matches,
    the earlier on a tie; None when none matches. The one rule of the server
    (app/threads/snippets.py) and the local search (issue 14 review: they chose differently)."""
    best: str | None = None
    for text in texts:
        found = snippet(text, query) if text else None
        if found is not None and (best is None or found.count("<b>") > best.count("<b>")):
            best = found
    return best


_SHA_PREFIX = re.compile(r"[0-9a-f]{7,40}")


def metadata_snippet(
    query: Query, title: str | None, metadata: str, shas: Sequence[str] = ()
) -> str | None:
    """The snippet of a hit no message of which matched (issue 14 review): of its ``title``
    (title and tags) when it matches, else of its git ``metadata`` text (branches, remote,
    workspace, provider, model: :func:`loomsync.core.textsearch.fields.thread_fields`' second
    field), else ``commit <b>0294234</b>…`` for the first of ``shas`` (lowercase hex) that one
    of the query's hex lexemes (7 to 40 characters, a prefix unit's too) starts; else None."""
    for text in (title, metadata):
        found = snippet(text, query) if text else None
        if found is not None:
            return found
    prefixes = [p for p in (x.removesuffix("*") for x in query.lexemes) if _SHA_PREFIX.fullmatch(p)]
    for sha in shas:
        for prefix in prefixes:
            if sha.startswith(prefix):
                return f"commit <b>{prefix}</b>" + ("…" if len(sha) > len(prefix) else "")
    return None
