"""A query that is a commit SHA prefix, as the server and the local search both read it (issue
14; API.md section 6: "a hex word of 7 to 40 characters also finds commits").

A query of one hex word of 7 to 40 characters (:func:`commit_prefix`) finds the threads a commit
SHA of which starts with it, and in text it matches both ways (:func:`with_hex_prefix`): as the
word itself (its stem: ``defaced``, ``acceded`` and ``effaced`` are English words made of hex
letters) **or** as an unstemmed prefix (``'26a7a89b':*``: a full hash that a tool printed or the
assistant quoted is found by its first characters, as ``thread_commits`` rows are).
"""

from __future__ import annotations

import re

from loomsync.core.textsearch.query import Query, Unit, parse

#: What the CLI and the /search page say when :func:`searchable` is False.
NOTHING_TO_SEARCH = "nothing to search for: only common words"
_HEX = re.compile(r"[0-9a-fA-F]{7,40}")


def commit_prefix(q: str) -> str | None:
    """The lowercase SHA prefix when ``q`` (query text) is one hex word of 7 to 40 characters
    once stripped of surrounding white space, else None."""
    word = q.strip()
    return word.lower() if _HEX.fullmatch(word) else None


def with_hex_prefix(query: Query, prefix: str | None) -> Query:
    """``query`` (parsed from the text :func:`commit_prefix` read ``prefix`` from) with its one
    group widened to "the word, or a SHA starting with ``prefix``": the prefix unit
    (``'26a7a89b':*``) first, then the word's own unit. Unchanged when ``prefix`` is None or the
    query is not one group of one unit. Both units rank on their own IDF; a strict (``web``)
    query needs either, as for ``a or b``."""
    if prefix is None or len(query.groups) != 1 or len(query.groups[0]) != 1:
        return query
    hexed = Unit(slots=(((prefix + "*",),),))
    return Query(((hexed, *query.groups[0]),), query.excluded, query.strict)


def searchable(q: str, syntax: str) -> bool:
    """Whether query text ``q`` holds a word the index can find (not only stop words or
    punctuation: :attr:`loomsync.core.textsearch.query.Query.searchable`) or is a commit SHA prefix.
    The CLI and the /search page say "nothing to search for" otherwise."""
    return parse(q, syntax).searchable or commit_prefix(q) is not None


__all__ = ["NOTHING_TO_SEARCH", "commit_prefix", "searchable", "with_hex_prefix"]
