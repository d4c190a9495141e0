"""Ranked full-text search over threads and every message (API.md section 6, "Search").

How a query runs:

1. ``q`` is cleaned (NUL and lone surrogates dropped) and parsed by ``plainto_tsquery`` (or
   ``websearch_to_tsquery`` for ``syntax=web``) with the ``english`` configuration; neither
   function ever raises on user input, so tsquery operators, stop words and punctuation are safe.
2. Candidates come from three GIN/btree-indexed sources, each already filtered by access,
   deletion, archive state and workspace in SQL: the thread vector (title/tags ``A``, git
   metadata ``B``), message vectors (content ``C``, tool calls ``D``), and, when ``q`` is one
   hex word of 7 to 40 characters, commit SHAs by prefix (``text_pattern_ops``).
3. Score = 10 x ``ts_rank`` of the thread vector (a title or git hit is at least 2.4)
   + the best message's ``ts_rank`` normalised into [0, 1) (flag 32) + 10 for a commit match,
   so title and metadata hits always rank above body-only hits. Ties: newest activity first.
4. Only for the returned page: the best matching message of each thread (``message_index``) and
   a ``ts_headline`` snippet of it (or of the title), HTML-escaped around ``<b>…</b>``.
"""

from __future__ import annotations

import html
import json
import re
import uuid
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
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.threads.access import readable
from app.threads.indexing import (
    MESSAGE_HEAD_CHARS,
    MESSAGE_TAIL_CHARS,
    TEXT_SEARCH_CONFIG,
    cap,
    clean,
    index_text,
    regconfig,
)
from app.threads.tables import thread_commits, thread_messages, threads
from loomsync import jsontext

THREAD_WEIGHT = 10.0
#: A word the planner expects in more messages than this is "common": ranking every one of its
#: messages would cost seconds, so only the ``RECENT_CANDIDATES`` most recently active threads
#: with a matching message are ranked by their messages (title and metadata hits always count).
COMMON_MESSAGES = 50_000
RECENT_CANDIDATES = 500
COMMIT_SCORE = 10.0
_HEX = re.compile(r"^[0-9a-fA-F]{7,40}$")
_START, _STOP = "\x02", "\x03"
_HEADLINE_OPTIONS = f"StartSel={_START}, StopSel={_STOP}, MaxWords=30, MinWords=12, MaxFragments=2, FragmentDelimiter= … "


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


def tsquery(q: str, syntax: str) -> ColumnElement[Any]:
    """The SQL tsquery for ``q``: ``plainto_tsquery`` or, for ``syntax="web"``, ``websearch_to_tsquery``."""
    function = func.websearch_to_tsquery if syntax == "web" else func.plainto_tsquery
    return function(_config(), bindparam("q", index_text(q), type_=Text))


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
) -> Any:
    """The search statement: up to ``limit`` + 1 rows of thread columns plus ``score``, best first.

    ``common`` (see :func:`is_common`) ranks messages of the ``RECENT_CANDIDATES`` most recently
    active matching threads only, walking threads newest first instead of every matching message.
    """
    query = tsquery(q, syntax)
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


_BEST_MESSAGES = f"""
SELECT DISTINCT ON (m.thread_id) m.thread_id, m.seq, CAST(m.body AS text) AS body
FROM thread_messages m
WHERE m.thread_id = ANY(CAST(:ids AS uuid[])) AND m.search_vector @@ {{function}}('{TEXT_SEARCH_CONFIG}'::regconfig, :q)
ORDER BY m.thread_id, ts_rank(m.search_vector, {{function}}('{TEXT_SEARCH_CONFIG}'::regconfig, :q), 32) DESC, m.seq
"""
_HEADLINES = f"""
SELECT u.ord, CASE WHEN u.must_match AND NOT to_tsvector('{TEXT_SEARCH_CONFIG}'::regconfig, u.t)
                         @@ {{function}}('{TEXT_SEARCH_CONFIG}'::regconfig, :q)
                   THEN NULL
                   ELSE ts_headline('{TEXT_SEARCH_CONFIG}'::regconfig, u.t,
                                    {{function}}('{TEXT_SEARCH_CONFIG}'::regconfig, :q), :options) END
FROM unnest(CAST(:texts AS text[]), CAST(:must_match AS boolean[])) WITH ORDINALITY AS u(t, must_match, ord)
"""


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
    session: AsyncSession, q: str, syntax: str, threshold: int = COMMON_MESSAGES
) -> bool:
    """True when the planner's statistics put ``q`` in more than ``threshold`` messages.

    Costs one EXPLAIN (planning only, well under a millisecond).
    """
    function = "websearch_to_tsquery" if syntax == "web" else "plainto_tsquery"
    sql = (
        "EXPLAIN (FORMAT JSON) SELECT 1 FROM thread_messages WHERE search_vector @@"
        f" {function}('{TEXT_SEARCH_CONFIG}'::regconfig, :q)"
    )
    plan = (await session.execute(text(sql), {"q": index_text(q)})).scalar()
    document: Any = json.loads(plan) if isinstance(plan, str) else plan
    return int(document[0]["Plan"]["Plan Rows"]) > threshold


def _snippet_source(text_value: str) -> str:
    """Text fit for ``ts_headline``: cleaned, markers blanked, capped as the index caps it, and
    HTML-escaped *before* the headline is cut. PostgreSQL's parser drops raw tags such as
    ``<script>`` from a headline but keeps entities (``&lt;``) whole, so escaping first keeps
    code like ``a < b`` visible and leaves nothing to break out of the snippet."""
    cleaned = clean(cap(text_value, MESSAGE_HEAD_CHARS, MESSAGE_TAIL_CHARS))
    return html.escape(cleaned.replace(_START, " ").replace(_STOP, " "), quote=False)


def render_snippet(headline: str | None) -> str | None:
    """Turn the markers of a ``ts_headline`` of escaped text (see :func:`_snippet_source`) into
    ``<b>…</b>``."""
    if not headline:
        return None
    return headline.replace(_START, "<b>").replace(_STOP, "</b>")


async def snippets(
    session: AsyncSession, q: str, syntax: str, page: list[tuple[uuid.UUID, str | None]]
) -> dict[uuid.UUID, tuple[int | None, str | None]]:
    """For each (thread id, title) of a result page: (index of its best matching message,
    snippet). The snippet comes from that message or, for title and metadata hits, from the
    title when the title matches; else it is None."""
    if not page:
        return {}
    function = "websearch_to_tsquery" if syntax == "web" else "plainto_tsquery"
    cleaned_q = index_text(q)
    rows = await session.execute(
        text(_BEST_MESSAGES.format(function=function)),
        {"q": cleaned_q, "ids": [thread_id for thread_id, _ in page]},
    )
    best: dict[uuid.UUID, tuple[int, str]] = {}
    for row in rows:
        content = jsontext.loads(row.body).get("content")
        best[row.thread_id] = (row.seq, content if isinstance(content, str) else "")
    sources: list[str] = []
    must_match: list[bool] = []
    for thread_id, title in page:
        if thread_id in best:
            sources.append(_snippet_source(best[thread_id][1]))
            must_match.append(False)
        else:
            sources.append(_snippet_source(title or ""))
            must_match.append(True)
    headlines = await session.execute(
        text(_HEADLINES.format(function=function)),
        {"q": cleaned_q, "texts": sources, "must_match": must_match, "options": _HEADLINE_OPTIONS},
    )
    by_position = {int(ord_) - 1: headline for ord_, headline in headlines}
    return {
        thread_id: (
            best[thread_id][0] if thread_id in best else None,
            render_snippet(by_position.get(i)),
        )
        for i, (thread_id, _) in enumerate(page)
    }
