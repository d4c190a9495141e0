"""``GET /api/usage`` (issue 33 items 1 and 5): tokens, turns, tool calls, sessions and the
estimated cost, grouped over a date range, as JSON or CSV.

- ``since``/``until``: UTC days, inclusive (default: the 30 days up to today); a ``since``
  after ``until`` selects nothing (an empty answer, not an error).
- ``group_by``: ``day`` (default), ``week`` (ISO, from Monday), ``month``, ``model``,
  ``agent``, ``repository``, ``workspace``, ``person``, ``session``; ``stack``: ``none``
  (default), ``model`` or ``agent`` splits each group into series (the page's stacked bars).
- ``scope``: ``mine`` (default, your threads of every visibility) or ``organization`` (the
  ``admin`` role, else 403: your organization's threads, without other people's private ones,
  app/usage/queries.py).
- ``model``, ``agent``, ``repository``, ``workspace``, ``person``: count only rows equal to it.
- ``limit``: at most this many groups (1-1000, default 1000); ``truncated`` says more matched.
- ``format``: ``json`` (default) or ``csv`` (one line per group, the header first).
"""

from __future__ import annotations

import csv
import io
import re
import uuid
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from fastapi import Query, Request, Response

from app.auth import Principal
from app.config import Settings
from app.errors import BadRequest, Forbidden, Unavailable
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads.collection import _LISTER_401, _TOKEN_REQUIRED, Lister
from app.threads.responses import json_response
from app.threads.schemas import problem_responses
from app.usage import queries
from app.usage.schemas import UsageAnswer
from app.usage.tables import SUMS
from loomsync.core.usage import report
from loomsync.core.usage.counting import clean_text
from loomsync.core.usage.prices import PriceBook, PricesFileError, price_book

router = ApiRouter(tags=["usage"])

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
#: Days counted when ``since`` is not given: ``until`` and the 29 before.
DEFAULT_DAYS = 30
MAX_GROUPS = 1000
#: Columns of the CSV export, in order.
CSV_COLUMNS = (
    "key",
    "stack",
    "title",
    "sessions",
    "sessions_with_usage",
    "sessions_without_usage",
    *SUMS,
    "tokens",
    "cost_usd",
    "unpriced_turns",
    "cost_complete",
)
DayParam = Annotated[
    str | None,
    Query(
        description="UTC day YYYY-MM-DD (inclusive)",
        json_schema_extra={"format": "date", "pattern": DATE_PATTERN},
        max_length=10,
    ),
]
Equal = Annotated[str | None, Query(max_length=1024, description="Count only rows equal to it")]


def parse_day(value: str | None, name: str) -> date | None:
    """A ``YYYY-MM-DD`` day; None when absent. Raises BadRequest (400) for another text or a
    day no calendar has (2026-02-30, year 0)."""
    if value is None:
        return None
    if not _DATE.fullmatch(value):
        raise BadRequest(f"{name} is a day written YYYY-MM-DD.")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{name} is not a day of the calendar: {value}.") from None


def day_range(since: date | None, until: date | None, today: date) -> tuple[date, date]:
    """The inclusive range asked for: ``until`` defaults to today, ``since`` to
    :data:`DEFAULT_DAYS` days up to ``until``."""
    end = until or today
    if since is not None:
        return since, end
    days = DEFAULT_DAYS - 1
    return (end - timedelta(days=days) if end.toordinal() > days else date.min), end


def current_book(request: Request) -> PriceBook:
    """The price book of today (UTC), made once a day per server (``LOOMSYNC_PRICES_FILE``
    read then). Raises Unavailable (503) when the prices file is unreadable."""
    today = datetime.now(UTC).date()
    book: PriceBook | None = getattr(request.app.state, "usage_prices", None)
    if book is None or book.date != today:
        settings: Settings = request.app.state.settings
        try:
            book = price_book(today, settings.prices_file or "")
        except PricesFileError as exc:
            raise Unavailable(f"The prices file cannot be read: {exc}") from None
        request.app.state.usage_prices = book
    return book


def check_scope(principal: Principal, scope: str) -> None:
    """Raise Forbidden (403) when a caller without the ``admin`` role asks for the
    organization's figures (API.md section 4, issue 33)."""
    if scope == "organization" and not principal.is_admin:
        raise Forbidden("The organization's usage needs the admin role.")


def key_text(value: Any) -> str | None:
    """A group key as JSON text: days ISO, thread ids ``T-…``, None kept."""
    if value is None:
        return None
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, uuid.UUID):
        return f"T-{value}"
    return str(value)


def figures(group: queries.Group) -> dict[str, Any]:
    """The :class:`~app.usage.schemas.UsageFigures` of ``group`` (loomsync.core.usage.report)."""
    return report.figures(
        group.sums, group.sessions, group.sessions_with_usage, group.cost, group.unpriced_turns
    )


def group_json(group: queries.Group) -> dict[str, Any]:
    """One :class:`~app.usage.schemas.UsageGroup`."""
    return {
        "key": key_text(group.key),
        "stack": group.stack,
        "title": group.title,
        **figures(group),
    }


def _cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text: a leading ``= + - @`` (a formula) or tab
    gets a ``'`` (OWASP "CSV injection")."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return "" if value is None else value


def to_csv(groups: list[dict[str, Any]]) -> str:
    """The groups as CSV (RFC 4180, CRLF), :data:`CSV_COLUMNS` as the header."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for g in groups:
        writer.writerow([_cell(g.get(c)) for c in CSV_COLUMNS])
    return out.getvalue()


async def usage_answer(
    reads: ReadsDep,
    principal: Principal,
    book: PriceBook,
    filters: queries.Filters,
    group_by: queries.GroupBy,
    stack: queries.Stack,
    limit: int,
) -> dict[str, Any]:
    """The JSON answer (:class:`~app.usage.schemas.UsageAnswer`) for these parameters."""

    async def read(session: Any) -> dict[str, Any]:
        groups, truncated, total = await queries.aggregate(
            session, principal, filters, book, group_by, stack, limit
        )
        return {
            "since": filters.since.isoformat(),
            "until": filters.until.isoformat(),
            "scope": filters.scope,
            "group_by": group_by,
            "stack": stack,
            "prices": {
                "estimate": True,
                "label": book.label,
                "source": book.source,
                "date": book.date.isoformat(),
            },
            "total": figures(total),
            "groups": [group_json(g) for g in groups],
            "truncated": truncated,
        }

    return await reads.run(read)


@router.get(
    "/api/usage",
    response_model=UsageAnswer,
    responses={
        200: {"content": {"text/csv": {"schema": {"type": "string"}}}},
        **problem_responses(400, 403, 422, 503),
        **_LISTER_401,
    },
    openapi_extra=_TOKEN_REQUIRED,
)
async def usage(
    request: Request,
    reads: ReadsDep,
    principal: Lister,
    since: DayParam = None,
    until: DayParam = None,
    group_by: queries.GroupBy = "day",
    stack: queries.Stack = "none",
    scope: queries.Scope = "mine",
    model: Equal = None,
    agent: Equal = None,
    repository: Equal = None,
    workspace: Equal = None,
    person: Equal = None,
    limit: Annotated[int, Query(ge=1, le=MAX_GROUPS)] = MAX_GROUPS,
    format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
) -> Response:
    """Usage and estimated cost grouped over a range of UTC days (module docstring): 400 for
    a day that is not a calendar day, 403 for ``scope=organization`` without the ``admin``
    role. Costs are estimates at the dated prices named in ``prices`` (JSON) or the
    ``Loomsync-Prices`` header (CSV); a model without a known price has an unknown cost."""
    check_scope(principal, scope)
    book = current_book(request)
    start, end = day_range(
        parse_day(since, "since"), parse_day(until, "until"), datetime.now(UTC).date()
    )
    equal = {
        name: value
        for name, value in (
            ("model", model),
            ("agent", agent),
            ("repository", repository),
            ("workspace", workspace),
            ("person", person),
        )
        if value is not None
    }
    # as stored (loomsync.core.usage.counting.clean_text): NUL is a space in a text column
    equal = {k: clean_text(v, 1024) or v for k, v in equal.items()}
    filters = queries.Filters(start, end, scope, equal)
    answer = await usage_answer(reads, principal, book, filters, group_by, stack, limit)
    if format == "csv":
        return Response(
            to_csv(answer["groups"]),
            media_type="text/csv; charset=utf-8",
            headers={
                "Loomsync-Prices": book.label.encode("ascii", "backslashreplace").decode(),
                "Content-Disposition": 'attachment; filename="usage.csv"',
            },
        )
    return json_response(answer)
