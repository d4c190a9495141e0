"""``loomsync usage`` (issue 33 item 4; docs/client.md): tokens, turns, sessions and the
estimated cost of the agents' work, grouped by model, agent, repository or day.

Offline by default: this machine's threads, counted and priced here with the server's code
(loomsync.core.usage). ``--online`` asks the server (``GET /api/usage``): every device's
threads, and with ``--scope organization`` (the ``admin`` role) the team's. A table fitted
to the terminal (80 columns when unknown), tab-separated full numbers when piped, ``--json``
for scripts (the API's group shape). Costs are estimates at dated prices, said under the
table; ``?`` is a cost nobody knows (a model without a price, or no usage recorded).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.text import Text

from loomsync.cli.main import JsonOption, _require_login, _store, app, console, errors
from loomsync.cli.render import print_json, print_table
from loomsync.cli.tables import Column
from loomsync.terminal import printable

#: Days counted without ``--since``: the 30 up to ``--until``.
DEFAULT_DAYS = 30


class By(StrEnum):
    """What the rows are."""

    model = "model"
    agent = "agent"
    repo = "repo"
    day = "day"


class Scope(StrEnum):
    """Whose threads the server counts (``--online``)."""

    mine = "mine"
    organization = "organization"


#: ``--by`` as the API's ``group_by``.
_GROUP_BY = {"model": "model", "agent": "agent", "repo": "repository", "day": "day"}


def _day(value: str | None, name: str) -> date | None:
    if value is None:
        return None
    try:
        if len(value) != 10 or value[4] != "-" or value[7] != "-":
            raise ValueError(value)  # not 20260105: the server's form only
        return date.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter("a day written YYYY-MM-DD", param_hint=name) from None


def compact(n: int) -> str:
    """A token count in at most 6 characters: 950, 12.3k, 27.2M, 1.4G."""
    for size, unit in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def money(value: float | None) -> str:
    """Dollars with cents (``$0.004`` below a cent); ``?`` for an unknown cost."""
    if value is None:
        return "?"
    return f"${value:,.2f}" if value >= 0.01 or value == 0 else f"${value:.3f}"


def _columns(*, at_terminal: bool) -> list[Column[dict[str, Any]]]:
    def count(name: str) -> Column[dict[str, Any]]:
        header = name.replace("_tokens", "").replace("_", " ").upper()
        return Column(
            header,
            lambda r: str(r[name]),
            terminal=lambda r: compact(r[name]),
            justify="right",
            min_width=6,
        )

    return [
        Column("KEY", lambda r: r["key"] or "-", shrink=True, min_width=12, weight=1),
        Column("SESSIONS", lambda r: str(r["sessions"]), justify="right"),
        Column("NO USAGE", lambda r: str(r["sessions_without_usage"]), justify="right", drop=2),
        Column("TURNS", lambda r: str(r["turns"]), justify="right", min_width=5),
        count("input_tokens"),
        count("output_tokens"),
        count("cache_read_tokens"),
        Column(
            "CACHE WRITE",
            lambda r: str(r["cache_write_tokens"]),
            terminal=lambda r: compact(r["cache_write_tokens"]),
            justify="right",
            drop=1,
        ),
        Column(
            "COST",
            lambda r: "" if r["cost_usd"] is None else f"{r['cost_usd']:.6f}",
            terminal=lambda r: money(r["cost_usd"]) + ("" if r["cost_complete"] else "*"),
            justify="right",
        ),
        *(  # piped: whether COST covers every turn (at a terminal, the * after the cost)
            []
            if at_terminal
            else [Column("COMPLETE", lambda r: "yes" if r["cost_complete"] else "no")]
        ),
    ]


def _online(by: By, since: date, until: date, scope: Scope) -> dict[str, Any]:
    with _store() as store:
        client = _require_login(store)
        params = {
            "group_by": _GROUP_BY[by.value],
            "since": since.isoformat(),
            "until": until.isoformat(),
            "scope": scope.value,
        }
        body: dict[str, Any] = client.request("GET", "/api/usage", params=params).json()
    body["source"] = "server"
    return body


def _offline(by: By, since: date, until: date) -> dict[str, Any]:
    from loomsync.core.usage.prices import PRICES_FILE_ENV, PricesFileError, price_book
    from loomsync.errors import ConfigError
    from loomsync.usage import local

    try:
        book = price_book()
    except PricesFileError as exc:  # the operator's file: said in words, exit 1
        raise ConfigError(f"{PRICES_FILE_ENV}: {exc}") from None
    from loomsync.cli import tokens
    from loomsync.config import load_config

    me = tokens.current_user(load_config())  # others' threads `show` pulled here: not mine
    with _store() as store:
        mine = (
            t
            for t in store.local.iter_threads()
            if me is None or (t.model_extra or {}).get("owner_id") in (None, me)
        )
        groups, total = local.aggregate(mine, by.value, since, until, book)
    return {
        "source": "this machine",
        "since": since.isoformat(),
        "until": until.isoformat(),
        "group_by": _GROUP_BY[by.value],
        "prices": {
            "estimate": True,
            "label": book.label,
            "source": book.source,
            "date": book.date.isoformat(),
        },
        "total": total,
        "groups": groups,
        "truncated": False,
    }


@app.command("usage")
def usage_command(
    by: Annotated[By, typer.Option("--by", help="Rows by model, agent, repo or day.")] = By.model,
    since: Annotated[
        str | None, typer.Option(help="First day counted, YYYY-MM-DD (UTC; 30 days back).")
    ] = None,
    until: Annotated[str | None, typer.Option(help="Last day counted (UTC; today).")] = None,
    online: Annotated[
        bool, typer.Option("--online", help="The server's figures: every device's threads.")
    ] = False,
    scope: Annotated[
        Scope,
        typer.Option(help="With --online: mine, or organization (the admin role; the team's)."),
    ] = Scope.mine,
    as_json: JsonOption = False,
) -> None:
    """Tokens, turns, sessions and estimated cost of your agents' sessions."""
    end = _day(until, "--until") or datetime.now(UTC).date()
    start = _day(since, "--since") or end - timedelta(days=DEFAULT_DAYS - 1)
    body = (
        _online(by, start, end, scope)
        if online or scope is Scope.organization
        else _offline(by, start, end)
    )
    if as_json:
        print_json(console, body)
        return
    rows: list[dict[str, Any]] = body["groups"]
    if not rows:
        errors.print(Text(printable(f"No agent session from {start} to {end} ({body['source']}).")))
        return
    print_table(console, _columns(at_terminal=console.is_terminal), rows)
    if console.is_terminal:
        total = body["total"]
        sessions = total["sessions"]
        without = total["sessions_without_usage"]
        note = (
            f"{sessions} session{'' if sessions == 1 else 's'}"
            + (f" ({without} without recorded usage)" if without else "")
            + f", {compact(total['tokens'])} tokens,"
            f" {money(total['cost_usd'])} ({body['prices']['label']}; * some cost unknown)"
            f" from {start} to {end}, {body['source']}"
        )
        errors.print(Text(printable(note), style="dim"))


__all__ = ["usage_command"]
