"""Local search with the server's semantics (issue 14 item 3): ``loomsync search --local``,
:meth:`loomsync.store.local.LocalThreadStore.search` and the fallback when the server is away.

- :mod:`.source`: where threads come from ("threads changed since"), free of file formats;
- :mod:`.vectors`: the server's ``tsvector`` of a text, packed, and PostgreSQL's phrase and
  prefix matching of a query unit;
- :mod:`.index`: the SQLite index in the store folder, refreshed before each search;
- :mod:`.ranking`: the server's thread score on exact statistics;
- :mod:`.search`: a query in, ranked hits with snippets out.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from loomsync.core.document.model import Thread
from loomsync.core.textsearch.query import PLAIN
from loomsync.store.localsearch.index import INDEX_NAME, LocalIndex
from loomsync.store.localsearch.search import search
from loomsync.store.localsearch.source import FolderSource, ListSource, ThreadSource
from loomsync.store.summary import SearchHit

log = logging.getLogger(__name__)


def search_source(
    source: ThreadSource, q: str, *, path: Path | None, limit: int = 20, syntax: str = PLAIN
) -> list[SearchHit]:
    """Refresh the index at ``path`` (None: a fresh one in memory) from ``source`` and search
    it for ``q`` (see :func:`.search.search`; raises ValueError for ``limit`` < 1). When the
    file cannot be used (a read-only folder, or held locked too long by another process), a
    warning is logged and the search runs on an index built in memory for the call."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if path is not None:
        try:
            return _search_at(source, q, path, limit, syntax)
        except sqlite3.OperationalError as exc:
            log.warning("search index %s cannot be used (%s); searching without it", path, exc)
    return _search_at(source, q, None, limit, syntax)


def _search_at(
    source: ThreadSource, q: str, path: Path | None, limit: int, syntax: str
) -> list[SearchHit]:
    with LocalIndex.open(path) as index:
        index.refresh(source)
        return search(index, q, limit=limit, syntax=syntax)


def search_threads(
    threads: Iterable[Thread], q: str, *, limit: int = 20, syntax: str = PLAIN
) -> list[SearchHit]:
    """Search threads at hand (each with an id) through an index in memory."""
    return search_source(ListSource(threads), q, path=None, limit=limit, syntax=syntax)


__all__ = [
    "INDEX_NAME",
    "FolderSource",
    "ListSource",
    "LocalIndex",
    "ThreadSource",
    "search",
    "search_source",
    "search_threads",
]
