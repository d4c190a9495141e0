"""``GET /usage`` (issue 33 item 3): what the agents cost, as pictures. Estimated spend and
tokens over time, stacked by model or agent (server-rendered SVG, app/web/usagechart.py), the
top repositories and the top sessions; every bar segment and row links to the sessions
behind it (this page narrowed to that period and series, whose "top sessions" list them, each
linking to its thread). Same queries, prices and visibility as ``GET /api/usage``
(app/usage/queries.py): your threads, or with ``scope=organization`` (the ``admin`` role)
your organization's without other people's private ones.

Periods: days for a range of up to 62 days, weeks up to 366, months beyond; only the span
that holds usage is drawn.
"""

from __future__ import annotations

import asyncio
import calendar
from datetime import UTC, date, datetime, timedelta
from typing import Any, cast
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest, Forbidden, Unavailable
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.usage import queries
from app.usage.router import check_scope, current_book, day_range, parse_day
from app.web import usagechart
from app.web.pages import notice, render
from app.web.session import WebSessionDep
from app.web.views import thread_href
from loomsync.core.usage.counting import clean_text

router = ApiRouter(include_in_schema=False)
TOP = 10
FILTERS = ("model", "agent", "repository", "workspace", "person")


def period_of(span_days: int) -> queries.GroupBy:
    """The bar width for a range of ``span_days`` days."""
    return "day" if span_days <= 62 else "week" if span_days <= 366 else "month"


def period_end(start: date, period: str) -> date:
    """The last day of the period that starts on ``start``."""
    if period == "day":
        return start
    if period == "week":
        return start + timedelta(days=6)
    return start.replace(day=calendar.monthrange(start.year, start.month)[1])


def periods_between(first: date, last: date, period: str) -> list[date]:
    """Every period start from ``first`` to ``last`` (both period starts), in order."""
    out: list[date] = []
    current = first
    while current <= last and len(out) < 1000:
        out.append(current)
        current = period_end(current, period) + timedelta(days=1)
    return out


def money(value: float | None) -> str:
    """Dollars with cents (a tenth of a cent below one cent); "unknown" for None."""
    if value is None:
        return "unknown"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.3f}"


def plural(count: int, noun: str) -> str:
    """``1 session``, ``2 sessions``: a count and its noun."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def tokens(value: float) -> str:
    """A token count in a few characters: 950, 12.3k, 27.2M."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:.0f}"


class _Links:
    """Links to this page with the current range, scope, stack and filters, changed."""

    def __init__(self, base: dict[str, str]) -> None:
        self.base = base

    def __call__(self, **changes: str | None) -> str:
        query = {**self.base, **changes}
        return "/usage?" + urlencode({k: v for k, v in query.items() if v})


async def _read(
    reads: ReadsDep,
    web: Any,
    filters: queries.Filters,
    book: Any,
    period: queries.GroupBy,
    stack: queries.Stack,
) -> dict[str, Any]:
    """The page's four figures: the bars with the total, the top repositories and sessions,
    the three statements run at once, each on a session of its own (a page costs the slowest
    of them, not their sum)."""
    principal = web.principal
    priced = await reads.run(lambda session: _priced(session, book))

    def grouped(group_by: Any, series: queries.Stack, limit: int, total: bool) -> Any:
        return reads.run(
            lambda session: queries.aggregate(
                session, principal, filters, book, group_by, series, limit, priced, total
            )
        )

    (bars, _, total), (repositories, _, _), (sessions, _, _) = await asyncio.gather(
        grouped(period, stack, 1000, True),
        grouped("repository", "none", TOP, False),
        grouped("session", "none", 2 * TOP, False),
    )
    return {"bars": bars, "total": total, "repositories": repositories, "sessions": sessions}


async def _priced(session: AsyncSession, book: Any) -> dict[str, list[Any]]:
    return queries.price_params(book, await queries.models_in(session))


def _charts(
    bars: list[queries.Group], period: str, stack: str, links: _Links
) -> dict[str, usagechart.Chart]:
    spend: dict[tuple[date, str], float] = {}
    used: dict[tuple[date, str], float] = {}
    totals: dict[str, float] = {}
    for g in bars:
        series = g.stack or ""
        spend[(g.key, series)] = g.cost or 0.0
        used[(g.key, series)] = float(g.sums.tokens)
        totals[series] = totals.get(series, 0.0) + (g.cost or 0.0) + g.sums.tokens * 1e-12
    kept = usagechart.series_order(totals)
    starts = sorted({g.key for g in bars})
    periods = periods_between(starts[0], starts[-1], period) if starts else []

    def href(start: date, series: str) -> str:
        end = period_end(start, period)
        return links(since=start.isoformat(), until=end.isoformat(), **{stack: series or None})

    return {
        "spend": usagechart.stacked(periods, spend, kept, href, money),
        "tokens": usagechart.stacked(periods, used, kept, href, tokens),
    }


@router.get("/usage", response_class=HTMLResponse)
async def usage_page(
    request: Request,
    reads: ReadsDep,
    web: WebSessionDep,
    since: str | None = None,
    until: str | None = None,
    scope: str = "mine",
    stack: str = "model",
    model: str | None = None,
    agent: str | None = None,
    repository: str | None = None,
    workspace: str | None = None,
    person: str | None = None,
) -> Response:
    """The page (200); 401 page without a session; 400 page for a day that is not one or an
    unknown scope/stack; 403 page for the organization's figures without the admin role."""
    if web is None:
        return notice(request, 401, "Sign in to see usage", "Run `loomsync open` to sign in.")
    if scope not in ("mine", "organization") or stack not in ("model", "agent"):
        return notice(
            request, 400, "Bad request", "scope is mine or organization; stack model or agent."
        )
    try:
        check_scope(web.principal, scope)
        start, end = day_range(
            parse_day(since or None, "since"),
            parse_day(until or None, "until"),
            datetime.now(UTC).date(),
        )
        book = current_book(request)
    except BadRequest as exc:
        return notice(request, 400, "Bad request", exc.detail)
    except Forbidden as exc:
        return notice(request, 403, "Forbidden", exc.detail)
    except Unavailable as exc:
        return notice(request, 503, "Prices unavailable", exc.detail)
    given = {"model": model, "agent": agent, "repository": repository}
    given |= {"workspace": workspace, "person": person}
    equal = {
        k: clean_text(v, 1024) or v for k, v in given.items() if v is not None and len(v) <= 1024
    }
    filters = queries.Filters(start, end, cast(queries.Scope, scope), equal)
    period = period_of((end - start).days + 1)
    read = await _read(reads, web, filters, book, period, cast(queries.Stack, stack))
    base = {"since": start.isoformat(), "until": end.isoformat(), "scope": scope, "stack": stack}
    links = _Links({**base, **equal})
    total = read["total"] if read["total"].sessions else None
    context = {
        "form": base,
        "is_admin": web.principal.is_admin,
        "filters": [(k, v, links(**{k: None})) for k, v in equal.items()],
        "period": period,
        "prices": book.label,
        "total": total,
        "money": money,
        "tokens": tokens,
        "plural": plural,
        "charts": _charts(read["bars"], period, stack, links),
        "width": usagechart.WIDTH,
        "height": usagechart.HEIGHT,
        "repositories": [
            (g, links(repository=g.key) if g.key else None) for g in read["repositories"]
        ],
        "sessions": [(g, thread_href(f"T-{g.key}")) for g in read["sessions"]],
    }
    return render(request, "usage.html", context)
