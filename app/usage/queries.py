"""The aggregation of ``usage_daily`` (issue 33 item 1): a ``GROUP BY`` in PostgreSQL over
the rows of a date range, through ``(owner_id, day)`` or ``(org_id, day)``, never loading
threads. Costs are estimated in the same statement from unit prices computed in Python for
the few (model, provider) pairs of the range (loomsync.core.usage.prices), so groups can be
ranked by cost and cut to a page in SQL.

Who counts (API.md section 4, issue 33): scope ``mine`` is the caller's own threads, every
visibility; scope ``organization`` (the ``admin`` role, checked by the router) is the threads
of the caller's organization that are not private, plus the caller's own. A private thread
counts only in its owner's figures, so an admin's organization view leaves out other people's
private threads. Deleted threads have no rows (app/usage/rows.py).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.usage.tables import SUMS
from loomsync.core.usage.counting import Sums
from loomsync.core.usage.prices import PriceBook

GroupBy = Literal[
    "day", "week", "month", "model", "agent", "repository", "workspace", "person", "session"
]
Stack = Literal["none", "model", "agent"]
Scope = Literal["mine", "organization"]
#: Time groups come in time order; the others by estimated cost, highest first.
TIME_GROUPS = ("day", "week", "month")
#: The SQL expression of each grouping (a text or date column of ``usage_daily``).
_KEYS: dict[str, str] = {
    "day": "d.day",
    "week": "CAST(date_trunc('week', d.day) AS date)",
    "month": "CAST(date_trunc('month', d.day) AS date)",
    "model": "d.model",
    "agent": "d.agent",
    "repository": "d.repository",
    "workspace": "d.workspace",
    "person": "d.owner_id",
    "session": "d.thread_id",
    "none": "''",
}
#: Filters of :class:`Filters`, by the column they compare.
_FILTERS = {
    "model": "d.model",
    "agent": "d.agent",
    "repository": "d.repository",
    "workspace": "d.workspace",
    "person": "d.owner_id",
}


@dataclass(frozen=True, slots=True)
class Filters:
    """What rows count: a date range (inclusive, UTC days; ``since`` after ``until`` selects
    nothing), a scope, and optional exact matches on the grouped columns."""

    since: date
    until: date
    scope: Scope = "mine"
    equal: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Group:
    """One group's figures: ``key`` (a day, a model, a person, a thread id…), ``stack`` (the
    model or agent of a stacked series, None unstacked), the sums, distinct ``sessions``
    (threads with an assistant message in the group) and ``sessions_with_usage``, the
    estimated ``cost`` (None when no turn has a known price) and ``unpriced_turns``."""

    key: Any
    stack: str | None
    sums: Sums
    sessions: int
    sessions_with_usage: int
    cost: float | None
    unpriced_turns: int
    title: str | None = None


def _where(principal: Principal, filters: Filters, params: dict[str, Any]) -> str:
    params.update(since=filters.since, until=filters.until, me=principal.user_id)
    clauses = ["d.day >= :since", "d.day <= :until"]
    if filters.scope == "organization" and principal.org_id is not None:
        params["org"] = principal.org_id
        clauses.append("d.org_id = :org AND (d.visibility <> 'private' OR d.owner_id = :me)")
    else:
        clauses.append("d.owner_id = :me")
    for name, value in sorted(filters.equal.items()):
        params[f"f_{name}"] = value
        clauses.append(f"{_FILTERS[name]} = :f_{name}")
    return " AND ".join(clauses)


_SUM_COLUMNS = ", ".join(f"sum(d.{n}) AS {n}" for n in SUMS)


async def models_in(session: AsyncSession) -> list[tuple[str, str]]:
    """Every (model, provider) pair stored, by a loose scan of ``usage_daily_model`` (one
    index probe per pair: a few dozen, whatever the rows). A superset of a range's models is
    as good for pricing it, and costs no scan of the range."""
    rows = await session.execute(
        text(
            "WITH RECURSIVE m AS ("
            " (SELECT model, provider FROM usage_daily ORDER BY model, provider LIMIT 1)"
            " UNION ALL SELECT n.model, n.provider FROM m, LATERAL (SELECT u.model, u.provider"
            " FROM usage_daily u WHERE (u.model, u.provider) > (m.model, m.provider)"
            " ORDER BY u.model, u.provider LIMIT 1) AS n)"
            " SELECT model, provider FROM m"
        )
    )
    return [(r.model, r.provider) for r in rows]


def price_params(book: PriceBook, models: list[tuple[str, str]]) -> dict[str, list[Any]]:
    """The unit prices of ``models`` as the parallel arrays :func:`aggregate` joins (models
    without a known price left out: their cost is unknown)."""
    out: dict[str, list[Any]] = {k: [] for k in ("pm", "pp", "pi", "po", "pr", "pw")}
    for model, provider in models:
        unit = book.unit(model, provider)
        if unit is None:
            continue
        out["pm"].append(model)
        out["pp"].append(provider)
        out["pi"].append(unit.input)
        out["po"].append(unit.output)
        out["pr"].append(unit.cache_read)
        out["pw"].append(unit.cache_write)
    return out


async def aggregate(
    session: AsyncSession,
    principal: Principal,
    filters: Filters,
    book: PriceBook,
    group_by: GroupBy | Literal["none"],
    stack: Stack = "none",
    limit: int = 1000,
    priced: dict[str, list[Any]] | None = None,
    with_total: bool = True,
) -> tuple[list[Group], bool, Group]:
    """The groups of the rows that count, at most ``limit`` (the second value: more were
    left out), and the total of every row that counts (the third), from one statement
    (``GROUPING SETS``). Time groups in time order (then by cost within a time); the others
    by cost, tokens, then key. ``priced``: the :func:`price_params` of :func:`models_in`
    (looked up when None; a page asks several groupings). ``with_total=False``: the third
    value is an empty group (no ``GROUPING SETS``). Grouped by session, a group is one thread:
    its sessions are counted without ``count(DISTINCT)``, and the total is a second
    statement."""
    params: dict[str, Any] = {"limit": limit + 2}
    where = _where(principal, filters, params)
    if priced is None:
        priced = price_params(book, await models_in(session))
    params.update(priced)
    key, series = _KEYS[group_by], _KEYS[stack]
    cost = (
        "(d.input_tokens * p.pi + d.output_tokens * p.po + d.cache_read_tokens * p.pr"
        " + d.cache_write_tokens * p.pw) / 1000000.0"
    )
    order = (
        "k, cost DESC NULLS LAST, s"
        if group_by in TIME_GROUPS
        else "cost DESC NULLS LAST, tokens DESC, k, s"
    )
    one_thread = group_by == "session"
    sets = "GROUPING SETS ((k, s), ())" if with_total and not one_thread else "k, s"
    whole = "GROUPING(k, s)" if with_total and not one_thread else "0"
    sessions = (
        "1 AS sessions, CASE WHEN sum(d.turns) > 0 THEN 1 ELSE 0 END AS sessions_with_usage"
        if one_thread
        else "count(DISTINCT d.thread_id) AS sessions,"
        " count(DISTINCT d.thread_id) FILTER (WHERE d.turns > 0) AS sessions_with_usage"
    )
    sql = (
        f"SELECT k, s, {whole} AS whole, {_SUM_COLUMNS},"
        " sum(d.input_tokens + d.output_tokens + d.cache_read_tokens + d.cache_write_tokens)"
        " AS tokens,"
        f" sum({cost}) AS cost,"
        " sum(d.turns) FILTER (WHERE p.pm IS NULL) AS unpriced_turns,"
        f" {sessions}"
        f" FROM (SELECT {key} AS k, {series} AS s, d.* FROM usage_daily d WHERE {where}) AS d"
        " LEFT JOIN unnest(CAST(:pm AS text[]), CAST(:pp AS text[]),"
        " CAST(:pi AS float8[]), CAST(:po AS float8[]), CAST(:pr AS float8[]),"
        " CAST(:pw AS float8[])) AS p(pm, pp, pi, po, pr, pw)"
        " ON p.pm = d.model AND p.pp = d.provider"
        f" GROUP BY {sets} ORDER BY whole DESC, {order} LIMIT :limit"
    )
    rows = (await session.execute(text(sql), params)).all()
    made = [_group(r, stack) for r in rows]
    total = made.pop(0) if rows and rows[0].whole else Group(None, None, Sums(), 0, 0, None, 0)
    groups = made[:limit]
    if one_thread:
        await _titles(session, groups)
        if with_total:
            total = (await aggregate(session, principal, filters, book, "none", priced=priced))[2]
    return groups, len(made) > limit, total


def _group(r: Any, stack: Stack) -> Group:
    return Group(
        key=r.k,
        stack=None if stack == "none" or r.whole else r.s,
        sums=Sums(**{n: int(getattr(r, n) or 0) for n in SUMS}),
        sessions=r.sessions,
        sessions_with_usage=r.sessions_with_usage,
        cost=None if r.cost is None else float(r.cost),
        unpriced_turns=int(r.unpriced_turns or 0),
    )


async def _titles(session: AsyncSession, groups: list[Group]) -> None:
    """Set the title of each session group (one lookup by primary key)."""
    ids = [g.key for g in groups]
    if not ids:
        return
    rows = await session.execute(
        text("SELECT id, title FROM threads WHERE id = ANY(CAST(:ids AS uuid[]))"), {"ids": ids}
    )
    titles: dict[uuid.UUID, str | None] = {r.id: r.title for r in rows}
    for g in groups:
        g.title = titles.get(g.key)


def totals(groups: list[Group]) -> Sums:
    """The sums of ``groups`` added up (sessions are not additive: see :func:`aggregate`)."""
    out = Sums()
    for g in groups:
        out.add(g.sums)
    return out


__all__ = [
    "TIME_GROUPS",
    "Filters",
    "Group",
    "GroupBy",
    "Scope",
    "Stack",
    "aggregate",
    "models_in",
    "price_params",
    "totals",
]
