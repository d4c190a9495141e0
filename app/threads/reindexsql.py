"""The statements of the online rebuild of search vectors (app/threads/reindex.py), per table.

Each table has: the walk in key order over stale rows (first batch, then after a key: keys and
stored sizes only), the read of given keys (a batch's texts), the sweep's sequential scan for stale keys, and the
compare-and-set write: rows locked with ``FOR UPDATE SKIP LOCKED`` only while they still hold
what was read (``content_hash`` of a message, ``version`` of a thread) and are still stale,
rechecked by the ``UPDATE`` itself.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Key = tuple[uuid.UUID, int]
"""A row's key: ``(thread_id, seq)`` for a message, ``(id, 0)`` for a thread."""


@dataclass(frozen=True, slots=True)
class Table:
    """How one target table is read and written."""

    walk_first: str
    walk_after: str
    by_keys: str
    sweep: str
    write: str
    progress_after: Callable[[Key], dict[str, Any]]


MESSAGES = Table(
    walk_first=(
        "SELECT thread_id, seq, pg_column_size(body) AS size FROM thread_messages"
        " WHERE search_version < :version ORDER BY thread_id, seq LIMIT :n"
    ),
    walk_after=(
        "SELECT thread_id, seq, pg_column_size(body) AS size FROM thread_messages"
        " WHERE (thread_id, seq) > (CAST(:after_thread AS uuid), CAST(:after_seq AS integer))"
        " AND search_version < :version ORDER BY thread_id, seq LIMIT :n"
    ),
    by_keys=(
        "SELECT m.thread_id, m.seq, m.content_hash AS guard, m.body::text AS source"
        " FROM thread_messages m JOIN unnest(CAST(:ids AS uuid[]), CAST(:seqs AS integer[]))"
        " AS k(thread_id, seq) ON m.thread_id = k.thread_id AND m.seq = k.seq"
        " WHERE m.search_version < :version ORDER BY m.thread_id, m.seq"
    ),
    sweep="SELECT thread_id, seq FROM thread_messages WHERE search_version < :version LIMIT :n",
    write=(
        "WITH u AS (SELECT * FROM unnest(CAST(:ids AS uuid[]), CAST(:seqs AS integer[]),"
        " CAST(:guards AS bytea[]), CAST(:vectors AS text[])) AS u(thread_id, seq, guard, vector)),"
        " locked AS (SELECT m.thread_id, m.seq, u.guard, u.vector FROM thread_messages m"
        " JOIN u ON m.thread_id = u.thread_id AND m.seq = u.seq AND m.content_hash = u.guard"
        " WHERE m.search_version < :version FOR UPDATE OF m SKIP LOCKED)"
        " UPDATE thread_messages m SET search_vector = CAST(locked.vector AS tsvector),"
        " search_version = :version FROM locked WHERE m.thread_id = locked.thread_id"
        " AND m.seq = locked.seq AND m.content_hash = locked.guard"
    ),
    progress_after=lambda key: {"after_thread": key[0], "after_seq": key[1]},
)
THREADS = Table(
    walk_first=(
        "SELECT id, 0 AS seq, pg_column_size(document) AS size FROM threads"
        " WHERE search_version < :version ORDER BY id LIMIT :n"
    ),
    walk_after=(
        "SELECT id, 0 AS seq, pg_column_size(document) AS size FROM threads"
        " WHERE id > CAST(:after_thread AS uuid) AND search_version < :version"
        " ORDER BY id LIMIT :n"
    ),
    by_keys=(
        "SELECT id, 0 AS seq, version AS guard, document::text AS source FROM threads"
        " WHERE id = ANY(CAST(:ids AS uuid[])) AND search_version < :version ORDER BY id"
    ),
    sweep="SELECT id, 0 FROM threads WHERE search_version < :version LIMIT :n",
    write=(
        "WITH u AS (SELECT * FROM unnest(CAST(:ids AS uuid[]), CAST(:guards AS integer[]),"
        " CAST(:vectors AS text[])) AS u(id, guard, vector)),"
        " locked AS (SELECT t.id, u.guard, u.vector FROM threads t"
        " JOIN u ON t.id = u.id AND t.version = u.guard"
        " WHERE t.search_version < :version FOR UPDATE OF t SKIP LOCKED)"
        " UPDATE threads t SET search_vector = CAST(locked.vector AS tsvector),"
        " search_version = :version FROM locked WHERE t.id = locked.id"
        " AND t.version = locked.guard"
    ),
    progress_after=lambda key: {"after_thread": key[0], "after_seq": None},
)


TABLES = {"threads": THREADS, "thread_messages": MESSAGES}
