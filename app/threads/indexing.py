"""What text of a thread is indexed for full-text search, and how (issue 14; API.md section 6).

The vectors are made by the analyzer the local search shares (:mod:`loomsync.textsearch`):
:func:`message_vector` and :func:`thread_vector` return ``tsvector`` input text (lexemes,
positions, weights; :mod:`loomsync.textsearch.vectors`) that the write statements cast with
:data:`MESSAGE_VECTOR_SQL` / :data:`THREAD_VECTOR_SQL`. Fields, weights and caps:
:mod:`loomsync.textsearch.fields` (message content ``A`` user, ``B`` assistant, ``C`` other
roles, tool-call text ``D``; thread title and tags ``A``, git metadata ``B``). Documents and
messages are always stored whole.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import ColumnElement, Text, cast, literal, literal_column
from sqlalchemy.dialects.postgresql import TSVECTOR

from loomsync.textsearch.fields import (
    MESSAGE_HEAD_CHARS,
    MESSAGE_TAIL_CHARS,
    THREAD_TEXT_CHARS,
    TOOL_TEXT_CHARS,
    cap,
    message_fields,
    remote_slug,
    thread_fields,
)
from loomsync.textsearch.normalize import clean
from loomsync.textsearch.vectors import tsvector

TEXT_SEARCH_CONFIG = "english"

#: SQL for a message's or a thread's vector from its ``tsvector`` input text in ``u.vector``.
MESSAGE_VECTOR_SQL = "CAST(u.vector AS tsvector)"
THREAD_VECTOR_SQL = "CAST(u.vector AS tsvector)"

# Tool outputs are often JSON text inside a string (Codex: {"output":"a\\nb"}): a literal
# backslash-n is a line break there, not the start of the word "nb".
_ESCAPED_WHITESPACE = re.compile(r"\\[nrt]")
_SEPARATORS = str.maketrans(dict.fromkeys("<>/\\.:@", " "))


def index_text(text: str) -> str:
    """Text as it is handed to ``to_tsvector`` (and every query to ``*_to_tsquery``):
    :func:`clean`, with ``< > / \\ . : @`` as spaces.

    PostgreSQL's parser reads ``<script>…</script>`` as tags and indexes nothing inside them,
    and reads ``README.md``, ``src/app/main.py`` or ``github.com/o/r`` as single file, host or
    URL tokens, so ``readme``, ``main`` or ``o/r`` would never match them. Blanking these
    separators in documents and queries alike makes every part a word of its own. Escaped
    line breaks and tabs (a literal backslash and ``n``, ``r`` or ``t``) count as spaces.
    """
    return _ESCAPED_WHITESPACE.sub(" ", clean(text)).translate(_SEPARATORS)


def message_vector(message: dict[str, Any]) -> str:
    """``tsvector`` input text of one message (a dict of API.md section 2's shape)."""
    return tsvector(message_fields(message))


def thread_vector(doc: dict[str, Any]) -> str:
    """``tsvector`` input text of a thread document (title, tags, git metadata)."""
    return tsvector(thread_fields(doc))


def stored_vector(vector: str) -> ColumnElement[Any]:
    """SQL for a vector column's value from ``tsvector`` input text (a bound parameter)."""
    return cast(literal(vector, Text), TSVECTOR)


def regconfig() -> ColumnElement[Any]:
    """The text search configuration as an SQL literal (``'english'::regconfig``)."""
    return literal_column(f"'{TEXT_SEARCH_CONFIG}'::regconfig")


__all__ = [
    "MESSAGE_HEAD_CHARS",
    "MESSAGE_TAIL_CHARS",
    "THREAD_TEXT_CHARS",
    "TOOL_TEXT_CHARS",
    "cap",
    "clean",
    "remote_slug",
]
