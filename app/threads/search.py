"""Ranked full-text search over threads and every message (API.md section 6, "Search").

How a query runs:

1. ``q`` is cleaned (NUL and lone surrogates dropped), rewritten to at most
   ``query.MAX_TERMS`` distinct words (app/threads/query.py: repeats, long phrases and ``or``
   chains cannot multiply the work) and parsed by ``plainto_tsquery`` (or
   ``websearch_to_tsquery`` for ``syntax=web``) with the ``english`` configuration; neither
   function ever raises on user input, so tsquery operators, stop words and punctuation are safe.
   A query that leaves nothing an index can find (no words, or only negated ones: ``-x``)
   matches nothing, without a scan of every message. The statements that rank run under a
   ``statement_timeout`` of ``RANKING_BUDGET_MS`` (past it: 503).
2. Candidates come from three GIN/btree-indexed sources, each already filtered by access,
   deletion, archive state and workspace in SQL: the thread vector (title/tags ``A``, git
   metadata ``B``), message vectors (content ``C``, tool calls ``D``), and, when ``q`` is one
   hex word of 7 to 40 characters, commit SHAs by prefix (``text_pattern_ops``).
3. Score = 10 x ``ts_rank`` of the thread vector (a title or git hit is at least 2.4)
   + the best message's ``ts_rank`` normalised into [0, 1) (flag 32) + 10 for a commit match,
   so title and metadata hits always rank above body-only hits. Ties: newest activity first.
4. Only for the returned page: the best matching message of each thread (``message_index``) and
   a ``ts_headline`` snippet of a bounded window of it (or of the title), HTML-escaped around
   ``<b>…</b>``, under a time budget of its own (app/threads/snippets.py).
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Text,
    bindparam,
    cast,
    func,
    literal,
    select,
    text,
    true,
    tuple_,
    union_all,
)
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.errors import RateLimited, Unavailable
from app.threads import snippets as snippet_windows
from app.threads.access import readable
from app.threads.indexing import TEXT_SEARCH_CONFIG, regconfig
from app.threads.query import bound
from app.threads.tables import thread_commits, thread_messages, threads
from loomsync.textsearch.query import parse

THREAD_WEIGHT = 10.0
#: A word the planner expects in more messages than this is "common": ranking every one of its
#: messages would cost seconds, so only the ``RECENT_CANDIDATES`` most recently active threads
#: with a matching message are ranked by their messages (title and metadata hits always count).
COMMON_MESSAGES = 50_000
RECENT_CANDIDATES = 500
COMMIT_SCORE = 10.0
_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")
#: ``statement_timeout`` of the statements that find and rank hits (the snippets have their own).
RANKING_BUDGET_MS = 5_000


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Which threads a search may return, besides access: ``scope`` (mine | visible),
    ``archived`` (false | true | any), exact ``workspace`` root."""

    scope: str = "mine"
    archived: str = "false"
    workspace: str | None = None


def _config() -> ColumnElement[Any]:
    # A literal, not a bound parameter: text-to-regconfig is only STABLE, so a bound config
    # name keeps the tsquery from being folded into a constant at plan time, and the planner
    # then guesses its selectivity blind (measured: 8x slower plans for selective words).
    return regconfig()


def _function(syntax: str) -> str:
    return "websearch_to_tsquery" if syntax == "web" else "plainto_tsquery"


def tsquery(bounded: str, syntax: str) -> ColumnElement[Any]:
    """The SQL tsquery for an already bounded query text (:func:`app.threads.query.bound`):
    ``plainto_tsquery`` or, for ``syntax="web"``, ``websearch_to_tsquery``."""
    function = func.websearch_to_tsquery if syntax == "web" else func.plainto_tsquery
    return function(_config(), bindparam("q", bounded, type_=Text))


def _tsquery_sql(syntax: str) -> str:
    """:func:`tsquery` as SQL text with a ``:q`` parameter (bind ``bound(q, syntax).text``)."""
    return f"{_function(syntax)}('{TEXT_SEARCH_CONFIG}'::regconfig, :q)"


@dataclass(frozen=True, slots=True)
class Plan:
    """What PostgreSQL made of a query: the bounded text every later statement binds as ``:q``
    (:func:`app.threads.query.bound`, worked out once a search), its lexemes (negated ones left
    out) and whether an index can find anything with it (``querytree`` is not ``T``)."""

    text: str
    lexemes: list[str]
    searchable: bool


async def plan(session: AsyncSession, q: str, syntax: str) -> Plan:
    """Parse ``q`` (bounded) once in PostgreSQL, and put the rest of the transaction under the
    ranking budget (``SET LOCAL statement_timeout``). A query of no words is not searchable
    without a round trip."""
    bounded = bound(q, syntax)
    if bounded.terms == 0:
        return Plan(text="", lexemes=[], searchable=False)
    row = (
        await session.execute(
            text(
                "SELECT querytree(t.q) AS tree, CAST(t.q AS text) AS query,"
                " set_config('statement_timeout', :budget, true)"
                f" FROM (SELECT {_tsquery_sql(syntax)} AS q) AS t"
            ),
            {"q": bounded.text, "budget": f"{RANKING_BUDGET_MS}ms"},
        )
    ).one()
    return Plan(
        text=bounded.text,
        lexemes=snippet_windows.lexemes(row.query),
        searchable=row.tree not in ("T", ""),
    )


def _thread_filter(principal: Principal, filters: SearchFilters) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = [threads.c.deleted_at.is_(None)]
    if filters.scope == "mine":
        conditions.append(threads.c.owner_id == (principal.user_id or ""))
        if principal.user_id is None:
            conditions.append(literal(False))
    else:
        conditions.append(readable(principal))
    if filters.archived == "false":
        conditions.append(threads.c.archived_at.is_(None))
    elif filters.archived == "true":
        conditions.append(threads.c.archived_at.is_not(None))
    if filters.workspace is not None:
        conditions.append(threads.c.workspace_root == filters.workspace)
    return conditions


def commit_prefix(q: str) -> str | None:
    """The lowercase SHA prefix when ``q`` is one hex word of 7 to 40 characters, else None."""
    word = q.strip()
    return word.lower() if _HEX.match(word) else None


def scored_hits(
    principal: Principal,
    q: str,
    syntax: str,
    filters: SearchFilters,
    after: tuple[float, datetime, uuid.UUID] | None,
    limit: int,
    *,
    common: bool = False,
    bounded: str | None = None,
) -> Any:
    """The search statement: up to ``limit`` + 1 rows of thread columns plus ``score``, best first.
    ``bounded`` is ``q`` bounded (:attr:`Plan.text`), worked out here when not given.

    ``common`` (see :func:`is_common`) ranks messages of the ``RECENT_CANDIDATES`` most recently
    active matching threads only, walking threads newest first instead of every matching message.
    """
    query = tsquery(bound(q, syntax).text if bounded is None else bounded, syntax)
    allowed = _thread_filter(principal, filters)
    by_thread = select(
        threads.c.id.label("id"),
        (func.ts_rank(threads.c.search_vector, query) * THREAD_WEIGHT).label("part"),
    ).where(threads.c.search_vector.op("@@")(query), *allowed)
    by_message = _recent_message_hits(query, allowed) if common else _message_hits(query, allowed)
    parts = [by_thread, by_message]
    prefix = commit_prefix(q)
    if prefix is not None:
        parts.append(
            select(
                thread_commits.c.thread_id.label("id"), literal(COMMIT_SCORE, Float).label("part")
            )
            .join(threads, threads.c.id == thread_commits.c.thread_id)
            .where(thread_commits.c.sha.startswith(prefix, autoescape=True), *allowed)
            .distinct()
        )
    hits = union_all(*parts).subquery("hits")
    scored = (
        select(hits.c.id, cast(func.sum(hits.c.part), Float).label("score"))
        .group_by(hits.c.id)
        .subquery("scored")
    )
    columns = [c for c in threads.c if c.name not in ("document", "search_vector")]
    stmt = select(*columns, scored.c.score).join(scored, scored.c.id == threads.c.id)
    if after is not None:
        stmt = stmt.where(
            tuple_(scored.c.score, threads.c.last_activity_at, threads.c.id) < tuple_(*after)
        )
    return stmt.order_by(
        scored.c.score.desc(), threads.c.last_activity_at.desc(), threads.c.id.desc()
    ).limit(limit + 1)


def _message_hits(query: ColumnElement[Any], allowed: list[ColumnElement[bool]]) -> Any:
    """(thread id, best message rank) for every allowed thread with a matching message."""
    return (
        select(
            thread_messages.c.thread_id.label("id"),
            func.max(func.ts_rank(thread_messages.c.search_vector, query, 32)).label("part"),
        )
        .join(threads, threads.c.id == thread_messages.c.thread_id)
        .where(thread_messages.c.search_vector.op("@@")(query), *allowed)
        .group_by(thread_messages.c.thread_id)
    )


def _recent_message_hits(query: ColumnElement[Any], allowed: list[ColumnElement[bool]]) -> Any:
    """As :func:`_message_hits`, for the most recently active matching threads only."""
    best = (
        select(func.max(func.ts_rank(thread_messages.c.search_vector, query, 32)).label("part"))
        .where(
            thread_messages.c.thread_id == threads.c.id,
            thread_messages.c.search_vector.op("@@")(query),
        )
        .lateral("best")
    )
    recent = (
        select(threads.c.id.label("id"), best.c.part.label("part"))
        .select_from(threads.join(best, true()))
        .where(*allowed, best.c.part.is_not(None))
        .order_by(threads.c.last_activity_at.desc())
        .limit(RECENT_CANDIDATES)
        .subquery("recent")
    )
    return select(recent.c.id, recent.c.part)


async def is_common(
    session: AsyncSession,
    bounded: str,
    syntax: str,
    threshold: int = COMMON_MESSAGES,
    lexemes: Sequence[str] = (),
) -> bool:
    """True when the planner's statistics put the bounded query text ``bounded``
    (:attr:`Plan.text`) in more than ``threshold`` messages.

    With the query's (positive) ``lexemes``, the estimate is for messages holding ``q`` *or*
    all of them: the planner multiplies the selectivities of a phrase's words, so ``"x x x x"``
    of a word in 56,000 messages is estimated at 1, while the index hands every one of them to
    a phrase check (measured: 1.1 s). The rows the index yields for any query are among those
    holding all its positive lexemes. Costs one EXPLAIN (planning only, well under a
    millisecond).
    """
    condition = f"search_vector @@ {_tsquery_sql(syntax)}"
    params = {"q": bounded}
    if lexemes:
        condition += " OR search_vector @@ CAST(:every AS tsquery)"
        params["every"] = snippet_windows.tsquery_text(lexemes, "&")
    sql = f"EXPLAIN (FORMAT JSON) SELECT 1 FROM thread_messages WHERE {condition}"
    explained = (await session.execute(text(sql), params)).scalar()
    document: Any = json.loads(explained) if isinstance(explained, str) else explained
    return int(document[0]["Plan"]["Plan Rows"]) > threshold


#: The best matching message of each hit, until the ranking returns it (i14-rank).
_BEST_MESSAGES = """
SELECT DISTINCT ON (m.thread_id) m.thread_id, m.seq
FROM thread_messages m
WHERE m.thread_id = ANY(CAST(:ids AS uuid[])) AND m.search_vector @@ CAST(:any AS tsquery)
ORDER BY m.thread_id, ts_rank(m.search_vector, CAST(:any AS tsquery), 32) DESC, m.seq
"""


async def snippets(
    session: AsyncSession,
    syntax: str,
    found: Plan,
    page: list[tuple[uuid.UUID, str | None]],
) -> dict[uuid.UUID, tuple[int | None, str | None]]:
    """For each (thread id, title) of a result page: (index of its best matching message,
    snippet), from :func:`app.threads.snippets.snippets` (own time budget; None past it)."""
    query = parse(found.text, syntax)
    best: dict[uuid.UUID, int] = {}
    if query.searchable and page:
        rows = await session.execute(
            text(_BEST_MESSAGES), {"ids": [t for t, _ in page], "any": query.any_tsquery()}
        )
        best = {row.thread_id: row.seq for row in rows}
    return await snippet_windows.snippets(
        session, query, [(t, title, best.get(t)) for t, title in page]
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
    after: tuple[float, datetime, uuid.UUID] | None,
    limit: int,
    common_threshold: int = COMMON_MESSAGES,
) -> tuple[list[Any], dict[uuid.UUID, tuple[int | None, str | None]]]:
    """One search page (API.md section 6): up to ``limit`` + 1 hit rows (thread columns and
    ``score``, best first) and, for the first ``limit``, (message index, snippet) by thread id.

    Raises :class:`app.errors.RateLimited` (429, ``Retry-After: 1``) when the caller already
    has ``MAX_SEARCHES_PER_USER`` searches running in this process, and
    :class:`app.errors.Unavailable` (503) when finding and ranking the hits take longer than
    ``RANKING_BUDGET_MS``; snippets past their own budget are None instead.
    """
    with search_slot(principal.user_id or ""):
        parsed = await plan(session, q, syntax)
        if not parsed.searchable and commit_prefix(q) is None:
            return [], {}
        try:
            common = await is_common(session, parsed.text, syntax, common_threshold, parsed.lexemes)
            statement = scored_hits(
                principal, q, syntax, filters, after, limit, common=common, bounded=parsed.text
            )
            rows = list((await session.execute(statement)).all())
        except DBAPIError as exc:
            if not snippet_windows.timed_out(exc):
                raise
            raise Unavailable(
                f"The search took longer than {RANKING_BUDGET_MS} ms; search for rarer words."
            ) from exc
        found = await snippets(session, syntax, parsed, [(r.id, r.title) for r in rows[:limit]])
        return rows, found
