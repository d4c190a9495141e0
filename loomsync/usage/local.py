"""Usage of this machine's threads, grouped as ``GET /api/usage`` groups the server's:
the same counting (loomsync.core.usage.counting) and prices (loomsync.core.usage.prices),
the same figures (loomsync.core.usage.report), so the two agree on the same threads."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from loomsync.core.document.codec import normalized
from loomsync.core.document.model import Thread
from loomsync.core.usage.counting import Facts, Sums, day_sums, thread_facts, utc_day
from loomsync.core.usage.prices import PriceBook
from loomsync.core.usage.report import figures

By = Literal["model", "agent", "repo", "day"]


@dataclass
class _Group:
    sums: Sums = field(default_factory=Sums)
    sessions: set[str] = field(default_factory=set)
    with_usage: set[str] = field(default_factory=set)
    cost: float | None = None
    unpriced_turns: int = 0


def _key(by: By, day: date, model: str, facts: Facts) -> str | None:
    if by == "day":
        return day.isoformat()
    if by == "model":
        return model
    if by == "agent":
        return facts.agent
    return facts.repository


def _fallback(thread: Thread) -> date:
    return utc_day(thread.last_activity_at or thread.created_at or datetime.now(UTC))


def aggregate(
    threads: Iterable[Thread], by: By, since: date, until: date, book: PriceBook
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(groups, total) of ``threads``' assistant messages on days ``since``..``until``
    (inclusive, UTC), each group ``{"key": …, **figures}``; days in order, the other
    groupings by estimated cost (unknown last), then tokens."""
    groups: dict[str | None, _Group] = {}
    total = _Group()
    for index, thread in enumerate(threads):
        doc = normalized(thread)
        name = str(thread.id) if thread.id is not None else f"#{index}"
        facts = thread_facts(doc)
        messages = (doc.get("conversation") or {}).get("messages") or []
        found = day_sums(messages, _fallback(thread), doc.get("model"), doc.get("provider"))
        for (day, model, provider), sums in found.items():
            if not since <= day <= until:
                continue
            cost = book.cost(model, provider, sums)
            for group in (groups.setdefault(_key(by, day, model, facts), _Group()), total):
                group.sums.add(sums)
                group.sessions.add(name)
                if sums.turns:
                    group.with_usage.add(name)
                if cost is None:
                    group.unpriced_turns += sums.turns
                elif sums.turns:
                    group.cost = (group.cost or 0.0) + cost
    rows = [{"key": key, **_figures(g)} for key, g in groups.items()]
    if by == "day":
        rows.sort(key=lambda r: r["key"] or "")
    else:
        rows.sort(
            key=lambda r: (
                r["cost_usd"] is None,
                -(r["cost_usd"] or 0),
                -r["tokens"],
                r["key"] or "",
            )
        )
    return rows, _figures(total)


def _figures(group: _Group) -> dict[str, Any]:
    return figures(
        group.sums, len(group.sessions), len(group.with_usage), group.cost, group.unpriced_turns
    )


__all__ = ["By", "aggregate"]
