"""A search of a syncing store (:meth:`loomsync.sync.syncing.SyncingThreadStore.search`): the
server's hits merged with the threads only this machine holds (issue 14 review).

Threads the server lacks (pending in the push queue, or ``is_private``) are found by the local
search of the whole store (:meth:`loomsync.store.local.LocalThreadStore.search`), so their scores use
the store's statistics, on the server's scale (same analyzer, scoring and constants; API.md
section 6), not those of an index of just these threads (scores of 0.94 against 12.75 for
the same thread, which fell off the page). Hits of other local threads are dropped (the
server's answer has them, newer); what is left is merged with the server's page by score,
each hit's ``origin`` saying where it came from.

When the server cannot be reached (or refuses the token) the local search answers, with
``source="local"`` and ``fallback_reason`` saying why; a refused token (401) also sets
``token_refused`` (issue 16 item 3: it is not "offline", and the CLI says to log in).

``workspace`` keeps only threads of that workspace root (the server filters its own; local
hits are those of the local threads with that root, found by :func:`local_only_hits`);
``scope`` is the server's (``visible``: also threads others share with the user's
organization, API.md section 6); this machine holds only the user's threads either way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from loomsync.errors import (
    AuthError,
    NetworkError,
    ServerError,
    TokenRefusedError,
    token_refused_text,
)
from loomsync.store.local import LocalThreadStore
from loomsync.store.summary import SearchHit, SearchResults, Syntax

if TYPE_CHECKING:  # the HTTP client is imported by whoever makes one
    from loomsync.http.client import Scope, ThreadSyncClient

#: Most hits the local search is asked for at once while looking for local-only threads
#: (doubled from ``limit`` until enough are found or the rest score below the page).
MAX_LOCAL_LIMIT = 10_000


def local_only_hits(
    local: LocalThreadStore, query: str, ids: set[str], limit: int, floor: float, syntax: Syntax
) -> list[SearchHit]:
    """The best ``limit`` hits of threads ``ids`` in the local search of the whole store, best
    first; asks for more hits (doubling) until ``limit`` of them are found, the search has no
    more, or its last hit scores below ``floor`` (the rest could not enter the page)."""
    if not ids:
        return []
    asked = limit
    while True:
        hits = local.search(query, limit=asked, syntax=syntax).hits
        kept = [hit for hit in hits if hit.thread.id in ids]
        if len(kept) >= limit or len(hits) < asked or hits[-1].score < floor:
            return kept[:limit]
        if asked >= MAX_LOCAL_LIMIT:
            return kept[:limit]
        asked = min(asked * 2, MAX_LOCAL_LIMIT)


def search(
    client: ThreadSyncClient | None,
    local: LocalThreadStore,
    local_only: Callable[[], set[str]],
    query: str,
    *,
    limit: int = 20,
    syntax: Syntax = "plain",
    scope: Scope = "mine",
    workspace: str | None = None,
    cursor: str | None = None,
) -> SearchResults:
    """Server search merged with local-only threads (module docstring); ``local_only`` gives
    the ids of the threads the server lacks. ``cursor``: a later page of the server's hits
    (the ``next_cursor`` of the one before: API.md section 6), as the server gives it (the
    local-only threads were merged into the first page). Raises ValueError for ``limit`` < 1."""
    if limit < 1:
        raise ValueError("limit must be at least 1")
    if client is None:
        results = local_search(local, query, limit, syntax, workspace)
        return results.model_copy(update={"fallback_reason": "not logged in to a server"})
    try:
        page = client.search(
            query, limit=limit, syntax=syntax, scope=scope, workspace=workspace, cursor=cursor
        )
    except TokenRefusedError as exc:
        results = local_search(local, query, limit, syntax, workspace)
        reason = token_refused_text(client.server_url, exc.detail or str(exc.status))
        return results.model_copy(update={"fallback_reason": reason, "token_refused": True})
    except (NetworkError, ServerError, AuthError) as exc:
        results = local_search(local, query, limit, syntax, workspace)
        reason = f"server unreachable ({exc})" if exc.retryable else f"server refused: {exc}"
        return results.model_copy(update={"fallback_reason": reason})
    if cursor is not None:
        return page.results()
    seen = {hit.thread.id for hit in page.hits}
    ids = local_only() - seen
    if workspace is not None:
        ids &= _in_workspace(local, workspace)
    floor = page.hits[-1].score if len(page.hits) >= limit else float("-inf")
    extra = local_only_hits(local, query, ids, limit, floor, syntax)
    merged = sorted([*page.hits, *extra], key=lambda hit: hit.score, reverse=True)
    return page.results(merged[:limit])


def _in_workspace(local: LocalThreadStore, workspace: str) -> set[str]:
    return {row.id for row in local.list(workspace=workspace)}


def local_search(
    local: LocalThreadStore, query: str, limit: int, syntax: Syntax, workspace: str | None
) -> SearchResults:
    """The local search (``source="local"``), of the threads of ``workspace`` (an exact
    ``workspace_root``) only when it is given: ``search --local --workspace`` and the fallback
    of an online search filter alike (issue 16 item 6). One hit more than ``limit`` is asked
    for, to set ``more_here`` when there are more (issue 30 item 8)."""
    if workspace is None:
        found = local.search(query, limit=limit + 1, syntax=syntax)
    else:
        ids = _in_workspace(local, workspace)
        hits = local_only_hits(local, query, ids, limit + 1, float("-inf"), syntax)
        found = SearchResults(hits=hits)
    more = len(found.hits) > limit
    return found.model_copy(update={"hits": found.hits[:limit], "more_here": more})


__all__ = ["MAX_LOCAL_LIMIT", "local_only_hits", "local_search", "search"]
