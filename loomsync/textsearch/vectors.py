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

from loomsync.textsearch.analyzer import lexemes
from loomsync.textsearch.fields import Field
from loomsync.textsearch.normalize import normalize

MAX_POSITION = 16_383
MAX_POSITIONS = 256


def tsvector(fields: Iterable[Field]) -> str:
    """``tsvector`` input text for ``fields`` ((text, weight) pairs, in order): each field's
    positions follow the previous field's last one, as ``||`` concatenates vectors; weight
    ``D`` is written as none (its default)."""
    positions: dict[str, list[str]] = {}
    offset = 0
    for text, weight in fields:
        if not text:
            continue
        suffix = "" if weight == "D" else weight
        last = 0
        for lexeme, last in lexemes(normalize(text)):
            entry = positions.get(lexeme)
            if entry is None:
                entry = positions[lexeme] = []
            if len(entry) < MAX_POSITIONS:
                entry.append(f"{min(offset + last, MAX_POSITION)}{suffix}")
        offset += last
    return " ".join(f"'{lexeme}':{','.join(at)}" for lexeme, at in positions.items())


#: The version of the vectors this analyzer makes (``search_version`` of the server's rows,
#: migration 0007). Bump it whenever the analyzer, the fields or this format change what a
#: stored vector holds: ``loomsync-server serve`` then rebuilds every older row online
#: (app/threads/reindex.py). Version 0 is PostgreSQL's own ``to_tsvector('english')`` (before
#: issue 14); 2: parts of identifiers keep stop words, Thai, Lao, Khmer and Myanmar in bigrams.
VERSION = 2
