"""Cutting normalised text into the lexemes search indexes and matches (issue 14).

One analyzer serves the server's index (``tsvector`` values built from its output,
:mod:`loomsync.textsearch.vectors`), the server's queries and snippets, and the local search,
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
  (PostgreSQL's ``english.stop``, Snowball's list) take no position. A word of several parts
  also gives its **joined** lexeme (all parts, stemmed as one word), at the position of its last
  part: ``exportEnvVars``, ``export_env_vars`` and ``exportenvvars`` all hold ``exportenvvar``,
  and ``JavaScript`` is found by ``javascript``.
- **Han, kana and Hangul** text is written without spaces, so a run of these characters gives
  its overlapping character **bigrams** (``技術スタック``: ``技術 術ス スタ タッ ック``), each at
  its own position, and its last character alone at the last bigram's position; a run of one
  character is that character. A query finds any substring of two or more characters as a
  phrase of bigrams, and one character as a prefix (:mod:`loomsync.textsearch.query`).
- Lexemes longer than :data:`MAX_LEXEME_CHARS` are dropped (base64 blobs, minified code).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import NamedTuple

import regex
import Stemmer

MAX_LEXEME_CHARS = 64
_WORD = regex.compile(r"[\p{L}\p{N}\p{M}]+(?:[_\-]+[\p{L}\p{N}\p{M}]+)*")
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u3005\u3006\u30fc]+")
_PIECE = regex.compile(r"[^_\-]+")
_CAMEL = regex.compile(r"(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})")

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


def _pieces(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """Spans of the parts of the word ``text[start:end]`` (no Han/kana/Hangul inside)."""
    word = text[start:end]
    if word.isalnum() and not any(c.isupper() for c in word[1:]):
        yield start, end  # the common case: one part
        return
    for piece in _PIECE.finditer(word):
        cut = piece.start()
        for boundary in _CAMEL.finditer(word, piece.start() + 1, piece.end()):
            yield start + cut, start + boundary.start()
            cut = boundary.start()
        yield start + cut, start + piece.end()


def _word(text: str, start: int, end: int) -> Segment | None:
    spans = list(_pieces(text, start, end))
    raw = [text[s:e].casefold() for s, e in spans]
    parts = [
        Part(stem(word) if not word.isdigit() else word, s, e)
        for word, (s, e) in zip(raw, spans, strict=True)
        if word not in STOP_WORDS and len(word) <= MAX_LEXEME_CHARS
    ]
    joined = None
    if len(raw) > 1:
        whole = "".join(raw)
        if len(whole) <= MAX_LEXEME_CHARS:
            joined = stem(whole)
    if not parts and joined is None:
        return None
    return Segment(parts, joined, start, end, False)


def _cjk(run: str, start: int) -> Segment:
    if len(run) == 1:
        return Segment([Part(run, start, start + 1)], None, start, start + 1, True)
    grams = [Part(run[i : i + 2], start + i, start + i + 2) for i in range(len(run) - 1)]
    return Segment(grams, None, start, start + len(run), True)


def segments(text: str) -> Iterator[Segment]:
    """The words and Han/kana/Hangul runs of normalised ``text``, in order."""
    for match in _WORD.finditer(text):
        start, end = match.span()
        cursor = start
        for run in _CJK.finditer(text, start, end):
            if run.start() > cursor:
                yield from _latin(text, cursor, run.start())
            yield _cjk(run.group(), run.start())
            cursor = run.end()
        if cursor < end:
            yield from _latin(text, cursor, end)


def _latin(text: str, start: int, end: int) -> Iterator[Segment]:
    """The word inside ``text[start:end]`` without connectors at its ends."""
    while start < end and text[start] in "_-":
        start += 1
    while end > start and text[end - 1] in "_-":
        end -= 1
    if start < end:
        segment = _word(text, start, end)
        if segment is not None:
            yield segment


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
