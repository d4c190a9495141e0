"""A local hit's snippet (issue 14 review): the server's rules
(:func:`loomsync.core.textsearch.highlight.message_snippet` on the best message's indexed content
and tool-call text; else :func:`~loomsync.core.textsearch.highlight.metadata_snippet` of the title,
the git metadata or a commit SHA), read from the index's texts, summaries and commits.
"""

from __future__ import annotations

from loomsync.core.textsearch.fields import thread_fields
from loomsync.core.textsearch.highlight import message_snippet, metadata_snippet
from loomsync.core.textsearch.query import Query
from loomsync.store.localsearch.index import LocalIndex, decompress
from loomsync.store.localsearch.ranking import THREAD_SEQ
from loomsync.store.summary import ThreadSummary


def _texts(index: LocalIndex, tid: int, seq: int) -> list[str]:
    row = index.db.execute(
        "SELECT t.content, t.tool FROM docs d JOIN texts t ON t.doc = d.doc "
        "WHERE d.tid = ? AND d.seq = ?",
        (tid, seq),
    ).fetchone()
    return [decompress(text) if text else "" for text in row] if row is not None else []


def hit_snippet(index: LocalIndex, tid: int, seq: int | None, query: Query) -> str | None:
    """The snippet of thread ``tid`` (the index's row id) for ``query``: of its message
    ``seq`` when one matched, else of its title, git metadata or commit; None when nothing of
    these matches (e.g. an excluded-only or empty query)."""
    if seq is not None:
        found = message_snippet(_texts(index, tid, seq), query)
        if found is not None:
            return found
    title = next(iter(_texts(index, tid, THREAD_SEQ)), "")
    row = index.db.execute("SELECT summary FROM threads WHERE tid = ?", (tid,)).fetchone()
    git = ""
    if row is not None:
        git = thread_fields(ThreadSummary.model_validate_json(row[0]).model_dump())[1][0]
    shas = [sha for (sha,) in index.db.execute("SELECT sha FROM commits WHERE tid = ?", (tid,))]
    return metadata_snippet(query, title, git, sorted(shas))


__all__ = ["hit_snippet"]
