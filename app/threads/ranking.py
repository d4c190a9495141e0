"""The search statement: candidates, BM25-like scores, one row per thread (issue 14; API.md
section 6). The scoring rules and constants are :mod:`loomsync.core.textsearch.scoring`'s, the
statistics :mod:`app.threads.searchstats`'s.

**Candidates** (which messages are scored). Scoring every message that holds a common word
would cost seconds at 2M messages, so a :class:`Ranking` decides, from the statistics, which
messages the GIN index hands over: those holding any of the *rarest* units while their
estimated rows fit :data:`CANDIDATE_ROWS` (the planner's own estimates: ``pg_stats``), plus
those holding *every* unit (the planner's estimate: the product of the units' shares). When even
that is too big (every unit is common), the ``common`` fallback scores the matching messages of
the :data:`RECENT_CANDIDATES` most recently active allowed threads only. Threads whose title,
tags or git metadata match (the thread GIN index) and commit SHA prefixes are always found.

**Scores**, per unit ``u`` and candidate message ``m``: when ``vec_m @@ u`` (else no
contribution), ``tf = ts_rank(MESSAGE_WEIGHTS, vec_m, u's distinct lexemes or-ed)``
(:meth:`Unit.rank_tsquery`; :func:`loomsync.core.textsearch.scoring.unit_tf`), contribution
``bm25(idf_u, tf, length(vec_m), average message length)``; a message's score is the sum over units; a thread's score is its best
message's + ``SPREAD`` x (the sum over units of the unit's best contribution in the thread -
best message's score) + ``THREAD_BOOST`` x the same BM25 over the thread vector
(``THREAD_WEIGHTS``, the units' IDFs, the average thread vector length) + ``COMMIT_SCORE`` for a
SHA prefix. The phrase bonus of a plain query (:attr:`Query.phrase`) is one more unit of
these sums (:func:`scored_units`), scored on the candidates only: it brings in no candidate
and is not one of "every unit". Scores are rounded to :data:`SCORE_DIGITS` so that a float sum
added up in another order on the next page compares equal. Ties: newest activity, then id.

**Strict** queries (syntax ``web``): a thread is kept when, for every group, its thread vector
or one of its messages matches the group, and neither matches an excluded unit
(``EXISTS`` over the thread's messages by primary key, for the candidate threads only). Not one
``tsquery`` over the thread: no vector holds a whole thread, and words of two messages must
satisfy it together.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Integer,
    Numeric,
    Text,
    bindparam,
    cast,
    exists,
    func,
    literal,
    literal_column,
    not_,
    null,
    or_,
    select,
    true,
    tuple_,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY, TSQUERY, distinct_on

from app.auth import Principal
from app.threads.access import readable
from app.threads.searchstats import Stats
from app.threads.tables import thread_commits, thread_messages, threads
from loomsync.core.textsearch import scoring
from loomsync.core.textsearch.query import Query, Unit

#: Messages the rarest units may bring in as candidates (planner estimate).
CANDIDATE_ROWS = 20_000
RECENT_CANDIDATES = 500
SCORE_DIGITS = scoring.SCORE_DIGITS


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Which threads a search may return, besides access: ``scope`` (mine | visible),
    ``archived`` (false | true | any), exact ``workspace`` root."""

    scope: str = "mine"
    archived: str = "false"
    workspace: str | None = None


@dataclass(frozen=True, slots=True)
class Ranking:
    """What a search page scores with, fixed on its first page and carried by its cursor:
    ``idfs`` (one per unit of :attr:`Query.units`), the average vector lengths, and the
    candidates: ``chosen`` (bit ``i``: messages holding unit ``i``), ``every`` (messages
    holding every unit); neither means the ``common`` fallback."""

    idfs: tuple[float, ...]
    message_length: float
    thread_length: float
    chosen: int
    every: bool

    @property
    def common(self) -> bool:
        """True for the recent-threads fallback."""
        return self.chosen == 0 and not self.every

    def slots(self) -> tuple[float, ...]:
        """The ranking as cursor slots (floats)."""
        return (
            self.message_length,
            self.thread_length,
            float(self.chosen),
            1.0 if self.every else 0.0,
            *self.idfs,
        )

    @classmethod
    def from_slots(cls, values: Sequence[float]) -> Ranking:
        """The inverse of :meth:`slots` (values already checked as finite floats)."""
        return cls(
            idfs=tuple(values[4:]),
            message_length=max(values[0], 1.0),
            thread_length=max(values[1], 1.0),
            chosen=int(values[2]) if 0 <= values[2] < 2**20 else 0,
            every=values[3] != 0.0,
        )


def plan_ranking(query: Query, stats: Stats, budget: int = CANDIDATE_ROWS) -> Ranking:
    """The :class:`Ranking` of ``query`` under ``stats``: the rarest units while their
    estimated messages fit ``budget``, and every unit when the planner puts that within it."""
    units = query.units
    rows = [stats.unit_rows(u) for u in units]
    chosen = 0
    used = 0.0
    for i in sorted(range(len(units)), key=lambda i: rows[i]):
        if used + rows[i] > budget:
            break
        chosen |= 1 << i
        used += rows[i]
    product = max(stats.messages, 1.0)
    for u in units:
        product *= stats.unit_freq(u)
    every = chosen != (1 << len(units)) - 1 and len(units) > 1 and product <= budget
    return Ranking(
        idfs=tuple(stats.unit_idf(u) for u in units),
        message_length=round(stats.message_length, scoring.LENGTH_DIGITS),
        thread_length=round(stats.thread_length, scoring.LENGTH_DIGITS),
        chosen=chosen,
        every=every,
    )


def candidate_tsquery(query: Query, ranking: Ranking) -> str | None:
    """The ``tsquery`` text a candidate message matches (None: the ``common`` fallback)."""
    units = query.units
    parts = [u.tsquery() for i, u in enumerate(units) if ranking.chosen >> i & 1]
    if ranking.every:
        parts.append(f"( {query.every_tsquery()} )")
    return " | ".join(parts) if parts else None


def thread_filter(principal: Principal, filters: SearchFilters) -> list[ColumnElement[bool]]:
    """Conditions on ``threads``: not deleted, readable in ``scope``, archive state, workspace."""
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


def _tsq(name: str, value: str) -> ColumnElement[Any]:
    return cast(bindparam(name, value, type_=Text), TSQUERY)


def _bm25(
    idf: ColumnElement[Any], tf: ColumnElement[Any], vector: Any, name: str, average: float
) -> ColumnElement[Any]:
    """SQL of :func:`loomsync.core.textsearch.scoring.bm25` (``tf`` > 0 here: the row matched)."""
    length = cast(func.length(vector), Float)
    norm = scoring.K1 * (1.0 - scoring.B) + scoring.K1 * scoring.B * length / bindparam(
        name, average, type_=Float
    )
    return idf * tf * (scoring.K1 + 1.0) / (tf + norm)


def scored_units(query: Query, ranking: Ranking) -> list[tuple[Unit, float]]:
    """What scores, with its IDF: each unit of the query, then its phrase bonus
    (:attr:`Query.phrase`, :func:`loomsync.core.textsearch.scoring.phrase_idf`) when it has one."""
    scored = list(zip(query.units, ranking.idfs, strict=True))
    if query.phrase is not None:
        scored.append((query.phrase, scoring.phrase_idf(ranking.idfs)))
    return scored


def _units_table(query: Query, ranking: Ranking) -> Any:
    scored = scored_units(query, ranking)
    matches = bindparam("units", [u.tsquery() for u, _ in scored], type_=ARRAY(Text))
    ranks = bindparam("ranks", [u.rank_tsquery() for u, _ in scored], type_=ARRAY(Text))
    idfs = bindparam("idfs", [idf for _, idf in scored], type_=ARRAY(Float))
    return (
        func.unnest(cast(matches, ARRAY(TSQUERY)), cast(ranks, ARRAY(TSQUERY)), idfs)
        .table_valued("q", "r", "idf", with_ordinality="i")
        .render_derived(name="u")
    )


def _candidates(query: Query, ranking: Ranking, allowed: list[ColumnElement[bool]]) -> Any:
    m = thread_messages
    wanted = candidate_tsquery(query, ranking)
    if wanted is not None:
        return (
            select(m.c.thread_id, m.c.seq, m.c.search_vector.label("v"))
            .join(threads, threads.c.id == m.c.thread_id)
            .where(m.c.search_vector.op("@@")(_tsq("candidates", wanted)), *allowed)
            .cte("cand")
            .prefix_with("MATERIALIZED")
        )
    anything = _tsq("any", query.any_tsquery())
    has_match = exists().where(m.c.thread_id == threads.c.id, m.c.search_vector.op("@@")(anything))
    recent = (
        select(threads.c.id)
        .where(*allowed, has_match)
        .order_by(threads.c.last_activity_at.desc())
        .limit(RECENT_CANDIDATES)
        .subquery("recent")
    )
    return (
        select(m.c.thread_id, m.c.seq, m.c.search_vector.label("v"))
        .join(recent, recent.c.id == m.c.thread_id)
        .where(m.c.search_vector.op("@@")(anything))
        .cte("cand")
        .prefix_with("MATERIALIZED")
    )


def _strict(query: Query) -> list[ColumnElement[bool]]:
    """Conditions on ``threads`` for a strict query (module docstring)."""
    m = thread_messages
    conditions: list[ColumnElement[bool]] = []

    def holds(name: str, tsquery: str) -> ColumnElement[bool]:
        q = _tsq(name, tsquery)
        return or_(
            threads.c.search_vector.op("@@")(q),
            exists().where(m.c.thread_id == threads.c.id, m.c.search_vector.op("@@")(q)),
        )

    for g, group in enumerate(query.groups):
        conditions.append(holds(f"group_{g}", " | ".join(u.tsquery() for u in group)))
    for x, unit in enumerate(query.excluded):
        conditions.append(not_(holds(f"excluded_{x}", unit.tsquery())))
    return conditions


def scored_hits(
    principal: Principal,
    query: Query,
    ranking: Ranking,
    filters: SearchFilters,
    after: tuple[float, datetime, uuid.UUID] | None,
    limit: int,
    commit_prefix: str | None = None,
) -> Any:
    """The search statement: up to ``limit`` + 1 rows of thread columns, ``score`` and
    ``best_seq`` (the seq of the best message, None for title- or commit-only hits), best
    first, after the keyset ``after`` (score, last activity, id)."""
    allowed = thread_filter(principal, filters)
    parts: list[Any] = []
    if query.searchable:
        units = _units_table(query, ranking)
        cand = _candidates(query, ranking, allowed)
        tf = cast(
            func.ts_rank(
                literal_column(scoring.weights_sql(scoring.MESSAGE_WEIGHTS)), cand.c.v, units.c.r
            ),
            Float,
        )
        per = (
            select(
                cand.c.thread_id,
                cand.c.seq,
                units.c.i,
                _bm25(units.c.idf, tf, cand.c.v, "message_length", ranking.message_length).label(
                    "c"
                ),
            )
            .select_from(cand.join(units, true()))
            .where(cand.c.v.op("@@")(units.c.q))
            .cte("per")
        )
        msg = (
            select(per.c.thread_id, per.c.seq, func.sum(per.c.c).label("score"))
            .group_by(per.c.thread_id, per.c.seq)
            .subquery("msg")
        )
        best = (
            select(msg.c.thread_id, msg.c.seq, msg.c.score)
            .ext(distinct_on(msg.c.thread_id))
            .order_by(msg.c.thread_id, msg.c.score.desc(), msg.c.seq)
            .subquery("best")
        )
        unit_best = (
            select(per.c.thread_id, func.max(per.c.c).label("top"))
            .group_by(per.c.thread_id, per.c.i)
            .subquery("unit_best")
        )
        spread = (
            select(unit_best.c.thread_id, func.sum(unit_best.c.top).label("total"))
            .group_by(unit_best.c.thread_id)
            .subquery("spread")
        )
        parts.append(
            select(
                best.c.thread_id.label("id"),
                best.c.seq.label("seq"),
                (best.c.score + scoring.SPREAD * (spread.c.total - best.c.score)).label("part"),
            ).join(spread, spread.c.thread_id == best.c.thread_id)
        )
        t_units = _units_table(query, ranking)
        t_tf = cast(
            func.ts_rank(
                literal_column(scoring.weights_sql(scoring.THREAD_WEIGHTS)),
                threads.c.search_vector,
                t_units.c.r,
            ),
            Float,
        )
        t_score = _bm25(
            t_units.c.idf, t_tf, threads.c.search_vector, "thread_length", ranking.thread_length
        )
        parts.append(
            select(
                threads.c.id.label("id"),
                cast(null(), Integer).label("seq"),
                (scoring.THREAD_BOOST * func.sum(t_score)).label("part"),
            )
            .select_from(threads.join(t_units, true()))
            .where(
                threads.c.search_vector.op("@@")(_tsq("any", query.any_tsquery())),
                threads.c.search_vector.op("@@")(t_units.c.q),
                *allowed,
            )
            .group_by(threads.c.id)
        )
    if commit_prefix is not None:
        parts.append(
            select(
                thread_commits.c.thread_id.label("id"),
                cast(null(), Integer).label("seq"),
                literal(scoring.COMMIT_SCORE, Float).label("part"),
            )
            .join(threads, threads.c.id == thread_commits.c.thread_id)
            .where(thread_commits.c.sha.startswith(commit_prefix, autoescape=True), *allowed)
            .distinct()
        )
    hits = union_all(*parts).subquery("hits")
    scored = (
        select(
            hits.c.id,
            cast(func.round(cast(func.sum(hits.c.part), Numeric), SCORE_DIGITS), Float).label(
                "score"
            ),
            func.max(hits.c.seq).label("best_seq"),
        )
        .group_by(hits.c.id)
        .subquery("scored")
    )
    columns = [c for c in threads.c if c.name not in ("document", "search_vector")]
    stmt = select(*columns, scored.c.score, scored.c.best_seq).join(
        scored, scored.c.id == threads.c.id
    )
    if query.strict:
        stmt = stmt.where(*_strict(query))
    if after is not None:
        stmt = stmt.where(
            tuple_(scored.c.score, threads.c.last_activity_at, threads.c.id) < tuple_(*after)
        )
    return stmt.order_by(
        scored.c.score.desc(), threads.c.last_activity_at.desc(), threads.c.id.desc()
    ).limit(limit + 1)
