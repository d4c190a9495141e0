"""Cutting normalised text into the lexemes search indexes and matches (issue 14).

One analyzer serves the server's index (``tsvector`` values built from its output,
:mod:`loomsync.core.textsearch.vectors`), the server's queries and snippets, and the local search,
so that the same words match the same words everywhere. Input is :func:`normalize`-d first.

- A **word** is a run of letters, digits and combining marks, where ``_`` and ``-`` between
  two such runs join them (``missing_colon``, ``provider-env-export-plugin``). Everything else
  separates words: white space, punctuation, ``. / : @``, so ``README.md``, ``src/app/main.py``
  and ``github.com/o/r`` are words of their own.
- A word is cut into **parts** at ``_`` and ``-`` and at camelCase boundaries (``exportEnvVars``:
  ``export Env Vars``; ``HTTPServer``: ``HTTP Server``; letters and digits stay together:
  ``sha256``, ``a0y``). Each part is a lexeme at its own position: casefolded, stemmed with
  Snowball's English (Porter2) stemmer, as PostgreSQL's ``english`` configuration does
  (``timedeltas`` is ``timedelta``, ``serializing`` is ``serial``); English stop words
  (PostgreSQL's ``english.stop``, Snowball's list) take no position when they stand alone; a
  part of an identifier is kept whatever it is (``is_valid`` is ``is valid``, never ``valid``). A word of several parts
  also gives its **joined** lexeme (all parts, stemmed as one word), at the position of its last
  part: ``exportEnvVars``, ``export_env_vars`` and ``exportenvvars`` all hold ``exportenvvar``,
  and ``JavaScript`` is found by ``javascript``.
- **Han, kana and Hangul** (and Thai, Lao, Khmer and Myanmar) text is written without spaces, so a run of these characters gives
  its overlapping character **bigrams** (``技術スタック``: ``技術 術ス スタ タッ ック``), each at
  its own position, and its last character alone at the last bigram's position; a run of one
  character is that character. A query finds any substring of two or more characters as a
  phrase of bigrams, and one character as a prefix (:mod:`loomsync.core.textsearch.query`).
- Lexemes longer than :data:`MAX_LEXEME_CHARS` are dropped (base64 blobs, minified code).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NamedTuple

import regex
import Stemmer

MAX_LEXEME_CHARS = 64
_CJK_CLASS = (
    r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}"
    r"\u3005\u3006\u30fc"
)
_LETTER = rf"[[\p{{L}}\p{{N}}\p{{M}}]--[{_CJK_CLASS}]]"
#: A run of Han/kana/Hangul characters (group ``cjk``), or a word: letters, digits and marks,
#: with ``_`` or ``-`` joining two runs of them.
_TOKEN = regex.compile(
    rf"(?P<cjk>[{_CJK_CLASS}]+)|(?P<word>{_LETTER}+(?:[_\-]+{_LETTER}+)*)", regex.V1
)
_PIECE = regex.compile(r"[^_\-]+")
_CAMEL = regex.compile(r"(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})")
#: Analysed words by their text (words repeat: most lookups hit); cleared when full.
_WORDS: dict[str, tuple[tuple[tuple[str, int, int], ...], str | None]] = {}
_WORDS_MAX = 200_000

#: PostgreSQL's ``english.stop`` (Snowball's English stop word list), casefolded.
STOP_WORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom this
    that these those am is are was were be been being have has had having do does did doing a an
    the and but if or because as until while of at by for with about against between into through
    during before after above below to from up down in out on off over under again further then
    once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now""".split()
)

_local = threading.local()


def stem(word: str) -> str:
    """The Porter2 stem of a casefolded ``word`` (PyStemmer keeps a cache per stemmer; one
    stemmer per thread, as PyStemmer's objects are not thread-safe)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = Stemmer.Stemmer("english", 100_000)
    result: str = stemmer.stemWord(word)
    return result


class Part(NamedTuple):
    """One part of a segment: its lexeme and where it is in the normalised text."""

    lexeme: str
    start: int
    end: int


class Segment(NamedTuple):
    """A word (``cjk`` False: its kept parts, in order, and its joined lexeme or None) or a run of
    Han, kana or Hangul characters (``cjk`` True: its bigrams, or its one character), with its
    span in the normalised text."""

    parts: list[Part]
    joined: str | None
    start: int
    end: int
    cjk: bool


class Token(NamedTuple):
    """A lexeme at a ``position`` (1-based, as in a ``tsvector``) and its span in the normalised
    text; ``joined`` marks the joined lexeme of a word of several parts."""

    lexeme: str
    position: int
    start: int
    end: int
    joined: bool


def _pieces(word: str) -> Iterator[tuple[int, int]]:
    """Spans of the parts of ``word`` (no Han/kana/Hangul inside)."""
    if word.isalnum() and not any(c.isupper() for c in word[1:]):
        yield 0, len(word)  # the common case: one part
        return
    for piece in _PIECE.finditer(word):
        cut = piece.start()
        for boundary in _CAMEL.finditer(word, piece.start() + 1, piece.end()):
            yield cut, boundary.start()
            cut = boundary.start()
        yield cut, piece.end()


def _analyse(word: str) -> tuple[tuple[tuple[str, int, int], ...], str | None]:
    """A word's kept parts as (lexeme, start, end) relative to the word, and its joined lexeme
    (None for a word of one part, or one too long)."""
    found = _WORDS.get(word)
    if found is not None:
        return found
    spans = list(_pieces(word))
    raw = [word[s:e].casefold() for s, e in spans]
    parts = tuple(
        (part if part.isdigit() else stem(part), s, e)
        for part, (s, e) in zip(raw, spans, strict=True)
        if (len(raw) > 1 or part not in STOP_WORDS) and len(part) <= MAX_LEXEME_CHARS
    )
    joined = None
    if len(raw) > 1:
        whole = "".join(raw)
        if len(whole) <= MAX_LEXEME_CHARS:
            joined = stem(whole)
    if len(_WORDS) >= _WORDS_MAX:
        _WORDS.clear()
    _WORDS[word] = found = (parts, joined)
    return found


def _cjk(run: str, start: int) -> Segment:
    if len(run) == 1:
        return Segment([Part(run, start, start + 1)], None, start, start + 1, True)
    grams = [Part(run[i : i + 2], start + i, start + i + 2) for i in range(len(run) - 1)]
    return Segment(grams, None, start, start + len(run), True)


def segments(text: str) -> Iterator[Segment]:
    """The words and Han/kana/Hangul runs of normalised ``text``, in order (a word of stop
    words only, or of over-long parts only, is left out)."""
    for match in _TOKEN.finditer(text):
        start = match.start()
        if match.group("cjk") is not None:
            yield _cjk(match.group(), start)
            continue
        parts, joined = _analyse(match.group())
        if parts or joined is not None:
            found = [Part(lex, start + s, start + e) for lex, s, e in parts]
            yield Segment(found, joined, start, match.end(), False)


def lexemes(text: str) -> Iterator[tuple[str, int]]:
    """(lexeme, position) of every token of normalised ``text``: :func:`tokens` without the
    spans, for indexing (about twice as fast)."""
    position = 0
    for run, word in _TOKEN.findall(text):
        if run:
            if len(run) == 1:
                position += 1
                yield run, position
                continue
            for i in range(len(run) - 1):
                position += 1
                yield run[i : i + 2], position
            yield run[-1], position
            continue
        parts, joined = _analyse(word)
        for part in parts:
            position += 1
            yield part[0], position
        if joined is not None:
            if not parts:
                position += 1
            yield joined, position


def tokens(text: str) -> Iterator[Token]:
    """Every lexeme of normalised ``text`` with its position and span (module docstring):
    parts and bigrams at consecutive positions from 1; a joined lexeme, and the last character
    of a Han/kana/Hangul run, at the position of the part or bigram before it."""
    position = 0
    for segment in segments(text):
        for part in segment.parts:
            position += 1
            yield Token(part.lexeme, position, part.start, part.end, False)
        if segment.joined is not None:
            if not segment.parts:
                position += 1
            yield Token(segment.joined, position, segment.start, segment.end, True)
        elif segment.cjk and segment.end - segment.start > 1:
            yield Token(text[segment.end - 1], position, segment.end - 1, segment.end, False)
