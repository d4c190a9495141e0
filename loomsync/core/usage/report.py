"""The figures of one group as both ``GET /api/usage`` and ``loomsync usage --json`` give
them (one shape, app/usage/schemas.py ``UsageFigures``)."""

from __future__ import annotations

from typing import Any

from loomsync.core.usage.counting import Sums


def figures(
    sums: Sums, sessions: int, sessions_with_usage: int, cost: float | None, unpriced_turns: int
) -> dict[str, Any]:
    """The JSON figures of a group: its sums, ``tokens``, the sessions with and without
    usage, ``cost_usd`` (rounded to a millionth of a dollar; None: no turn has a known
    price), ``unpriced_turns`` and ``cost_complete`` (every assistant message had usage and a
    known price)."""
    return {
        "sessions": sessions,
        "sessions_with_usage": sessions_with_usage,
        "sessions_without_usage": sessions - sessions_with_usage,
        **sums.as_json(),
        "tokens": sums.tokens,
        "cost_usd": None if cost is None else round(cost, 6),
        "unpriced_turns": unpriced_turns,
        "cost_complete": sums.turns > 0 and unpriced_turns == 0 and sums.without_usage == 0,
    }


__all__ = ["figures"]
