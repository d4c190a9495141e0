"""What text of a thread is indexed for full-text search, and how (issue 14; API.md section 6).

The vectors are made by the analyzer the local search shares (:mod:`loomsync.core.textsearch`):
:func:`message_vector` and :func:`thread_vector` return ``tsvector`` input text (lexemes,
positions, weights; :mod:`loomsync.core.textsearch.vectors`) that the write statements cast with
:data:`MESSAGE_VECTOR_SQL` / :data:`THREAD_VECTOR_SQL`. Fields, weights and caps:
:mod:`loomsync.core.textsearch.fields` (message content ``A`` user, ``B`` assistant, ``C`` other
roles, tool-call text ``D``; thread title and tags ``A``, git metadata ``B``). Documents and
messages are always stored whole.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Text, cast, literal
from sqlalchemy.dialects.postgresql import TSVECTOR

from loomsync.core.textsearch.fields import message_fields, thread_fields
from loomsync.core.textsearch.normalize import clean
from loomsync.core.textsearch.vectors import tsvector

#: SQL for a message's or a thread's vector from its ``tsvector`` input text in ``u.vector``.
MESSAGE_VECTOR_SQL = "CAST(u.vector AS tsvector)"
THREAD_VECTOR_SQL = "CAST(u.vector AS tsvector)"


def message_vector(message: dict[str, Any]) -> str:
    """``tsvector`` input text of one message (a dict of API.md section 2's shape)."""
    return tsvector(message_fields(message))


def thread_vector(doc: dict[str, Any]) -> str:
    """``tsvector`` input text of a thread document (title, tags, git metadata)."""
    return tsvector(thread_fields(doc))


def stored_vector(vector: str) -> ColumnElement[Any]:
    """SQL for a vector column's value from ``tsvector`` input text (a bound parameter)."""
    return cast(literal(vector, Text), TSVECTOR)


__all__ = ["clean"]
