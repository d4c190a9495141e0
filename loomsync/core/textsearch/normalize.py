"""Text as search sees it: one normal form on both sides (issue 14, "Unicode").

:func:`normalize` is applied to everything that is indexed and to every query before
:mod:`loomsync.core.textsearch.analyzer` cuts it into words, on the server and in the local search
alike, so that spellings that look the same match each other:

- NUL characters and lone surrogates (which PostgreSQL ``text`` cannot hold) become spaces;
- an escaped line break or tab (a backslash and ``n``, ``r`` or ``t``, as JSON text inside a
  tool output shows them: ``{"output":"a\\nb"}``) is a space, not the start of a word ``nb``;
- invisible format characters (Unicode category ``Cf``: soft hyphen U+00AD, zero-width space
  U+200B, zero-width (non-)joiners, word joiner, bidirectional marks, byte order mark, ...) are
  removed, so ``pass\\u00adword`` is the word ``password``;
- then NFKC (Unicode Standard Annex #15): NFD and NFC spellings, full-width letters, ligatures
  and compatibility characters become one form (the ligature U+FB01 is ``fi``, full-width ``U+FF54`` is ``t``).
"""

from __future__ import annotations

import re
import unicodedata

import regex

_SURROGATES = re.compile("[\ud800-\udfff]")
_ESCAPED_WHITESPACE = re.compile(r"\\[nrt]")
#: Invisible characters: every format character, plus the combining grapheme joiner and the
#: Hangul fillers, which render as nothing.
_INVISIBLE = regex.compile(r"[\p{Cf}\u034f\u115f\u1160\u3164\uffa0]+")


def clean(text: str) -> str:
    """``text`` without NUL characters and lone surrogates (each becomes a space)."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    return _SURROGATES.sub(" ", text)


def normalize(text: str) -> str:
    """``text`` in the form search indexes and matches (see the module docstring): cleaned,
    escaped white space as spaces, invisible characters removed, then NFKC."""
    text = _ESCAPED_WHITESPACE.sub(" ", clean(text))
    text = _INVISIBLE.sub("", text)
    if not unicodedata.is_normalized("NFKC", text):
        text = unicodedata.normalize("NFKC", text)
    return text
