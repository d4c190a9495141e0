"""PostgreSQL ``tsvector`` values made by the shared analyzer (issue 14).

The server does not let PostgreSQL's parser and dictionaries read the text: they would split,
stem and drop words differently from the local search, and know nothing of camelCase parts,
joined identifiers or Han/kana/Hangul bigrams. Instead :func:`tsvector` writes the analyzer's
lexemes, positions and weights as ``tsvector`` input text (PostgreSQL documentation, section
8.11.1, "tsvector"), which the server casts: ``CAST(:vector AS tsvector)``. Lexemes hold only
letters, digits and marks, so they need no escaping. Positions past :data:`MAX_POSITION` are
written as it, and a lexeme keeps its first :data:`MAX_POSITIONS` positions, as PostgreSQL
itself does.
"""

from __future__ import annotations

from collections.abc import Iterable

from loomsync.core.textsearch.analyzer import lexemes
from loomsync.core.textsearch.fields import Field
from loomsync.core.textsearch.normalize import normalize

MAX_POSITION = 16_383
MAX_POSITIONS = 256


def positions(fields: Iterable[Field]) -> dict[str, list[tuple[int, str]]]:
    """Each lexeme of ``fields`` ((text, weight) pairs, in order) with its (position, weight)
    pairs in position order: each field's positions follow the previous field's last one, as
    ``||`` concatenates vectors; a lexeme keeps its first :data:`MAX_POSITIONS`, none past
    :data:`MAX_POSITION` (written as it). The walk both the server's ``tsvector`` text
    (:func:`tsvector`) and the local index (:func:`loomsync.store.localsearch.vectors.entries`) take."""
    found: dict[str, list[tuple[int, str]]] = {}
    offset = 0
    for text, weight in fields:
        if not text:
            continue
        last = 0
        for lexeme, last in lexemes(normalize(text)):
            entry = found.get(lexeme)
            if entry is None:
                entry = found[lexeme] = []
            if len(entry) < MAX_POSITIONS:
                entry.append((min(offset + last, MAX_POSITION), weight))
        offset += last
    return found


def tsvector(fields: Iterable[Field]) -> str:
    """``tsvector`` input text for ``fields`` (:func:`positions`); weight ``D`` is written as
    none (its default)."""
    return " ".join(
        f"'{lexeme}':" + ",".join(f"{at}{'' if w == 'D' else w}" for at, w in found)
        for lexeme, found in positions(fields).items()
    )


#: The version of the vectors this analyzer makes (``search_version`` of the server's rows,
#: migration 0007). Bump it whenever the analyzer, the fields or this format change what a
#: stored vector holds: ``loomsync-server serve`` then rebuilds every older row online
#: (app/threads/reindex.py). Version 0 is PostgreSQL's own ``to_tsvector('english')`` (before
#: issue 14); 2: parts of identifiers keep stop words, Thai, Lao, Khmer and Myanmar in bigrams.
VERSION = 2
