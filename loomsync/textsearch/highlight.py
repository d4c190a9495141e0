"""Snippets: the passage of a text where a query matches, its matched words marked (issue 14).

The text is :func:`normalize`-d and cut by the same analyzer as the index, so a snippet marks
exactly the words that made the text match (stems, camelCase parts, joined identifiers,
bigrams), never a near miss, and never misses one because it is spelled in another Unicode
form. Output is HTML-escaped text with each matched word wrapped in ``<b>…</b>`` (API.md
section 6), ``…`` where the window cuts the text.
"""

from __future__ import annotations

import html

from loomsync.textsearch.analyzer import tokens
from loomsync.textsearch.normalize import normalize
from loomsync.textsearch.query import Query

WINDOW_CHARS = 160
LEAD_CHARS = 60


def _matches(lexeme: str, wanted: set[str], prefixes: tuple[str, ...]) -> bool:
    return lexeme in wanted or (bool(prefixes) and lexeme.startswith(prefixes))


def snippet(text: str, query: Query, window: int = WINDOW_CHARS) -> str | None:
    """A window of about ``window`` characters of normalised ``text`` around its first words
    that match ``query``, HTML-escaped, matched words in ``<b>…</b>``; None when no word of
    ``text`` matches."""
    lexemes = query.lexemes
    wanted = {lex for lex in lexemes if not lex.endswith("*")}
    prefixes = tuple(lex[:-1] for lex in lexemes if lex.endswith("*"))
    normal = normalize(text)
    spans = [(t.start, t.end) for t in tokens(normal) if _matches(t.lexeme, wanted, prefixes)]
    if not spans:
        return None
    start = max(0, spans[0][0] - LEAD_CHARS)
    end = min(len(normal), start + window)
    out: list[str] = ["…"] if start else []
    cursor = start
    for s, e in sorted(set(spans)):
        if s < cursor or e > end:
            continue
        out += [html.escape(normal[cursor:s]), "<b>", html.escape(normal[s:e]), "</b>"]
        cursor = e
    out.append(html.escape(normal[cursor:end]))
    if end < len(normal):
        out.append("…")
    return "".join(out).replace("\n", " ")
