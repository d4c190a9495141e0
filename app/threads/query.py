"""Bounding what a search query may ask of PostgreSQL (issue 11 item 4; API.md section 6).

``plainto_tsquery`` and ``websearch_to_tsquery`` keep every word they are given: ``x x x …``
becomes ``'x' & 'x' & 'x' & …`` and ``ts_headline`` then grows with the cube of the repeats
(measured: 40 repeats over an 80 KB message, 17 s). So before PostgreSQL sees it, a query is
rewritten into an equivalent or narrower one of at most :data:`MAX_TERMS` words:

- *plain*: the words (runs of letters and digits and hyphenated compounds of up to
  :data:`MAX_COMPOUND_PARTS` parts, longer ones split: the words ``plainto_tsquery`` would
  see, as it ignores every other character), deduplicated
  case-insensitively, in order, while the budget lasts (a compound costs one term a part);
- *web*: the same for each term of ``websearch_to_tsquery``'s syntax (a word, a quoted phrase,
  either negated by a leading ``-``, joined by ``or``): duplicate terms inside an ``or`` group
  and duplicate groups are dropped, a phrase is cut before its first repeated word, and a
  phrase costs one term a word (a longer phrase is cut to the budget, which only widens what
  it matches). A compound with a repeated part (``x-x``) is searched as its parts.

A query cut this way finds a superset of what the whole query would have found (every kept
term is one the user asked for), ranked by the kept terms. Prefix operators (``:*``) do not
exist in either syntax (both read them as punctuation), so no query expands to many lexemes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.threads.indexing import index_text

#: Distinct words a query keeps. 16 covers a pasted error message; ts_headline and ts_rank
#: stay in milliseconds over a bounded snippet window (bench/search_dos.py).
MAX_TERMS = 16
_WORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
_WEB_TOKEN = re.compile(r'(-?)(?:"([^"]*)"?|([^\s"]+))')


@dataclass(frozen=True, slots=True)
class BoundedQuery:
    """``text``: the rewritten query for the tsquery function of ``syntax``; ``terms``: how many
    words it holds (0: nothing to search for)."""

    text: str
    syntax: str
    terms: int


#: A hyphenated compound of more parts is searched as its separate parts.
MAX_COMPOUND_PARTS = 4


def _words(text: str) -> list[str]:
    words: list[str] = []
    for word in _WORD.findall(index_text(text)):
        parts = word.casefold().split("-")
        too_long = len(parts) > MAX_COMPOUND_PARTS or len(set(parts)) < len(parts)
        words += word.split("-") if too_long else [word]
    return words


def _distinct_prefix(words: tuple[str, ...]) -> tuple[str, ...]:
    """A phrase cut before its first repeated word: ``"x y x y"`` → ``"x y"``. Any text holding
    the phrase holds this part of it, and the index cannot narrow a phrase by a repeated word
    (every message with ``x`` gets a phrase check for ``"x x x x"``: 56,000 of them, 1.1 s)."""
    seen: set[str] = set()
    for i, word in enumerate(words):
        if word.casefold() in seen:
            return words[:i]
        seen.add(word.casefold())
    return words


def _cost(word: str) -> int:
    return word.count("-") + 1


def _bound_plain(q: str, budget: int) -> tuple[str, int]:
    kept: list[str] = []
    seen: set[str] = set()
    used = 0
    for word in _words(q):
        key = word.casefold()
        if key in seen or used + _cost(word) > budget:
            continue
        seen.add(key)
        kept.append(word)
        used += _cost(word)
    return " ".join(kept), used


def _web_groups(q: str) -> list[list[tuple[bool, tuple[str, ...], bool]]]:
    """The ``or`` groups of a web query, each a list of (negated, words, quoted) terms."""
    groups: list[list[tuple[bool, tuple[str, ...], bool]]] = []
    joining = False
    for match in _WEB_TOKEN.finditer(index_text(q).replace("\x00", " ")):
        negated, phrase, bare = match.group(1) == "-", match.group(2), match.group(3)
        if phrase is None and not negated and bare is not None and bare.casefold() == "or":
            joining = bool(groups)
            continue
        source = phrase if phrase is not None else bare or ""
        words = tuple(_words(source))
        if not words:
            continue
        terms: list[tuple[bool, tuple[str, ...], bool]]
        if phrase is None and len(words) > 1:  # "a,b" outside quotes: separate AND terms
            terms = [(negated if i == 0 else False, (w,), False) for i, w in enumerate(words)]
        else:
            terms = [(negated, _distinct_prefix(words), phrase is not None)]
        for term in terms:
            if joining and groups:
                groups[-1].append(term)
            else:
                groups.append([term])
            joining = False
    return groups


def _render_term(negated: bool, words: tuple[str, ...], quoted: bool) -> str:
    body = '"' + " ".join(words) + '"' if quoted or len(words) > 1 else words[0]
    return ("-" if negated else "") + body


def _bound_web(q: str, budget: int) -> tuple[str, int]:
    rendered: list[str] = []
    seen_groups: set[frozenset[tuple[bool, tuple[str, ...]]]] = set()
    used = 0
    for group in _web_groups(q):
        kept: list[tuple[bool, tuple[str, ...], bool]] = []
        keys: set[tuple[bool, tuple[str, ...]]] = set()
        cost = 0
        for negated, words, quoted in group:
            key = (negated, tuple(w.casefold() for w in words))
            if key in keys:
                continue
            cut: list[str] = []
            for word in words:
                if used + cost + sum(map(_cost, cut)) + _cost(word) > budget:
                    break
                cut.append(word)
            if not cut:
                break
            keys.add(key)
            kept.append((negated, tuple(cut), quoted))
            cost += sum(map(_cost, cut))
        if kept and frozenset(keys) not in seen_groups:
            seen_groups.add(frozenset(keys))
            rendered.append(" or ".join(_render_term(*term) for term in kept))
            used += cost
        if used >= budget:
            break
    return " ".join(rendered), used


def bound(q: str, syntax: str, budget: int = MAX_TERMS) -> BoundedQuery:
    """``q`` rewritten for ``syntax`` ("plain" or "web") to at most ``budget`` distinct words.

    Never raises: a query with no words (punctuation, operators only) has ``terms`` 0.
    """
    text, used = _bound_web(q, budget) if syntax == "web" else _bound_plain(q, budget)
    return BoundedQuery(text=text, syntax=syntax, terms=used)
