"""Ranked full-text search over threads and every message (API.md section 6, "Search"; issue 14).

How a query runs:

1. ``q`` is parsed by the shared analyzer (:func:`loomsync.core.textsearch.query.parse`): units
   (words; phrases for identifiers, paths and Han/kana/Hangul text), at most ``MAX_TERMS``
   lexemes, ``plain`` (ranked, nothing required) or ``web`` (strict). Parsing never fails; a
   query with no positive unit matches nothing without touching the database (but a commit SHA
   prefix is still looked up). The statements that rank run under a ``statement_timeout`` of
   :data:`RANKING_BUDGET_MS` (past it: 503).
2. Corpus statistics (IDF per unit, average vector lengths: :mod:`app.threads.searchstats`,
   cached per process) fix a :class:`app.threads.ranking.Ranking` on the first page; its
   numbers travel in the signed cursor, so every later page scores with the same ones.
3. One statement (:func:`app.threads.ranking.scored_hits`) finds candidates, scores them
   BM25-like and returns a page of threads with the seq of each one's best message.
   The same statement reads the head of each hit's best message (:func:`with_heads`), the
   text its snippet is cut from, so that no more round trips are spent on it.
4. Only for the returned page: snippets and ``message_index``
   (:func:`app.threads.snippets.snippets`, its own time budget).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, Text, bindparam, cast, func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import RateLimited, Unavailable
from app.threads import searchstats
from app.threads import snippets as snippet_windows
from app.threads.cursors import CursorCodec
from app.threads.ranking import (
    CANDIDATE_ROWS,
    Ranking,
    SearchFilters,
    plan_ranking,
    scored_hits,
)
from app.threads.tables import thread_messages
from loomsync.core.textsearch.commits import commit_prefix, with_hex_prefix
from loomsync.core.textsearch.normalize import normalize
from loomsync.core.textsearch.query import Query, parse

__all__ = [
    "SearchFilters",
    "SearchPage",
    "cursor_binding",
    "run",
    "scored_hits",
    "search_slot",
]

#: ``statement_timeout`` of the statements that find and rank hits (the snippets have their own).
RANKING_BUDGET_MS = 5_000
#: Cursor slots before the ranking's: score, last activity, thread id.
_KEY_TYPES: tuple[type, ...] = (float, datetime, uuid.UUID)


def with_heads(statement: Select[Any]) -> Select[Any]:
    """``statement`` (:func:`scored_hits`: a page of threads with ``score`` and ``best_seq``, in
    ranking order) with one more column, ``head``: the first
    :data:`app.threads.snippets.BODY_PREFIX_CHARS` characters of the best message's JSON text
    (NULL without a best message), read for the page's rows only, in the same order.

    The snippets' first read (:data:`app.threads.snippets.HEADS`) done by the ranking statement:
    three round trips fewer (a savepoint and its timeout, the read) on every page, measured as
    about 0.6 ms each on bench.search. It runs under the ranking's budget; a head is a prefix of
    a TOASTed value (a few ms for 14 MB), 21 of them at most.
    """
    page = statement.subquery("page")
    m = thread_messages
    head = (
        select(
            func.substr(
                cast(m.c.body, Text),
                1,
                bindparam("head_chars", snippet_windows.BODY_PREFIX_CHARS, literal_execute=True),
            )
        )
        .where(m.c.thread_id == page.c.id, m.c.seq == page.c.best_seq)
        .scalar_subquery()
    )
    return select(page, head.label("head")).order_by(
        page.c.score.desc(), page.c.last_activity_at.desc(), page.c.id.desc()
    )


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page: ``rows`` (thread columns, ``score``, ``best_seq``; at most ``limit``), for each
    thread (message index, snippet), and the cursor of the next page (None: the last page)."""

    rows: list[Any]
    found: dict[uuid.UUID, tuple[int | None, str | None]]
    next_cursor: str | None


def cursor_binding(q: str, syntax: str, filters: SearchFilters) -> bytes:
    """The canonical bytes a search cursor is bound to (:meth:`CursorCodec.encode`'s
    ``bound``): the query text normalised as the analyzer reads it (NFKC, invisible characters
    dropped, white space collapsed), the syntax, scope, archive filter and workspace. A cursor
    carries the first page's IDFs and candidates, so it is only valid for the very query and
    filters it was issued for (issue 14 review)."""
    words = " ".join(normalize(q).split())
    fields = [words, syntax, filters.scope, filters.archived, filters.workspace]
    return json.dumps(fields, ensure_ascii=False, separators=(",", ":")).encode()


def decode_cursor(
    codec: CursorCodec, cursor: str, query: Query, bound: bytes
) -> tuple[tuple[float, datetime, uuid.UUID], Ranking]:
    """The keyset and the :class:`Ranking` a search cursor carries (one IDF per unit of
    ``query``). Raises :class:`app.errors.BadRequest` (400) for a cursor this server did not
    issue, or issued for other parameters than ``bound`` (:func:`cursor_binding`)."""
    ranking_types = (float,) * (4 + len(query.units))
    values = codec.decode("search", cursor, *_KEY_TYPES, *ranking_types, bound=bound)
    return (values[0], values[1], values[2]), Ranking.from_slots(values[3:])


def encode_cursor(codec: CursorCodec, row: Any, ranking: Ranking, bound: bytes) -> str:
    """The cursor after ``row`` (its score, last activity and id) with the page's ranking,
    valid for the parameters ``bound`` only (:func:`cursor_binding`)."""
    return codec.encode(
        "search", row.score, row.last_activity_at, row.id, *ranking.slots(), bound=bound
    )


#: Searches one user may have running at once in one server process (measured with 32 hostile
#: clients, bench/search_dos.py: 2 a user left ordinary users at p99 1.5 s, 1 at 0.75 s; an SDK
#: client retries a 429 after its Retry-After). Each search can cost up
#: to its budgets of database time; without this, one user's 32 concurrent hostile searches
#: held every pooled connection and both cores (issue 11 item 4), and other users got 503.
MAX_SEARCHES_PER_USER = 1
_running: Counter[str] = Counter()


@contextmanager
def search_slot(user: str) -> Iterator[None]:
    """Hold one of ``user``'s ``MAX_SEARCHES_PER_USER`` search slots (per process; the event
    loop is single-threaded, so no lock). Raises :class:`app.errors.RateLimited` (429) when
    none is free: the client retries after ``Retry-After`` (API.md section 7)."""
    if _running[user] >= MAX_SEARCHES_PER_USER:
        raise RateLimited(
            f"At most {MAX_SEARCHES_PER_USER} searches at a time per user; retry shortly.",
            retry_after=1,
        )
    _running[user] += 1
    try:
        yield
    finally:
        _running[user] -= 1
        if not _running[user]:
            del _running[user]


async def run(
    session: AsyncSession,
    principal: Principal,
    q: str,
    syntax: str,
    filters: SearchFilters,
    cursor: str | None,
    codec: CursorCodec,
    limit: int,
    candidate_rows: int = CANDIDATE_ROWS,
) -> SearchPage:
    """One search page (API.md section 6): up to ``limit`` hits, best first, their (message
    index, snippet) and the next cursor. ``candidate_rows`` bounds the messages the rarest
    units bring in (:mod:`app.threads.ranking`).

    Raises :class:`app.errors.BadRequest` (400) for a cursor this server did not issue for
    this query, syntax and filters (:func:`cursor_binding`), :class:`app.errors.RateLimited` (429, ``Retry-After: 1``) when the caller
    already has ``MAX_SEARCHES_PER_USER`` searches running in this process, and
    :class:`app.errors.Unavailable` (503) when finding and ranking the hits take longer than
    ``RANKING_BUDGET_MS``; snippets past their own budget are None instead.
    """
    prefix = commit_prefix(q)
    query = with_hex_prefix(parse(q, "web" if syntax == "web" else "plain"), prefix)
    bound = cursor_binding(q, syntax, filters)
    after = ranking = None
    if cursor:
        after, ranking = decode_cursor(codec, cursor, query, bound)
    with search_slot(principal.user_id or ""):
        if not query.searchable and prefix is None:
            return SearchPage([], {}, None)
        try:
            # Custom plans only: a generic plan of the ranking statement cannot see the
            # tsquery and guesses every word's selectivity alike (asyncpg prepares statements).
            await session.execute(
                text(
                    "SELECT set_config('statement_timeout', :budget, true),"
                    " set_config('plan_cache_mode', 'force_custom_plan', true)"
                ),
                {"budget": f"{RANKING_BUDGET_MS}ms"},
            )
            if ranking is None:
                stats = await searchstats.current(session)
                ranking = plan_ranking(query, stats, candidate_rows)
            statement = scored_hits(principal, query, ranking, filters, after, limit, prefix)
            rows = list((await session.execute(with_heads(statement))).all())
        except DBAPIError as exc:
            if not snippet_windows.timed_out(exc):
                raise
            raise Unavailable(
                f"The search took longer than {RANKING_BUDGET_MS} ms; search for rarer words."
            ) from exc
        page = rows[:limit]
        heads = {r.id: r.head for r in page if r.head is not None}
        found = await snippet_windows.snippets(
            session, query, [(r.id, r.title, r.best_seq) for r in page], heads=heads
        )
        more = len(rows) > limit and bool(page)
        next_cursor = encode_cursor(codec, page[-1], ranking, bound) if more else None
        return SearchPage(page, found, next_cursor)
