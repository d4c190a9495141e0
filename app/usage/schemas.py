"""Response model of ``GET /api/usage`` (issue 33), for the OpenAPI document."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Prices(BaseModel):
    """Where the unit prices come from; every cost is an estimate at these prices."""

    estimate: bool = Field(True, description="Always true: costs are estimates")
    label: str = Field(description="e.g. 'estimate at genai-prices 0.2.3 prices of 2026-12-08'")
    source: str = Field(description="genai-prices and its version, and LOOMSYNC_PRICES_FILE's")
    date: str = Field(description="The day whose prices apply (YYYY-MM-DD, UTC)")


class UsageFigures(BaseModel):
    """Sums of a group (or of everything counted). Token counts add what agents recorded."""

    sessions: int = Field(description="Threads with an assistant message in the group")
    sessions_with_usage: int
    sessions_without_usage: int = Field(description="Sessions whose agent recorded no usage")
    turns: int = Field(description="Assistant messages with usage")
    without_usage: int = Field(description="Assistant messages without usage (not free)")
    tool_calls: int
    input_tokens: int = Field(description="Full-price prompt tokens (cache excluded)")
    output_tokens: int = Field(description="Completion tokens, reasoning included")
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    tokens: int = Field(description="input + output + cache read + cache write")
    cost_usd: float | None = Field(
        description="Estimated cost in US dollars of the turns with a known price; null when "
        "no turn has one (unknown, not zero)"
    )
    unpriced_turns: int = Field(description="Turns of models without a known price")
    cost_complete: bool = Field(
        description="True when every assistant message had usage and a known price"
    )


class UsageGroup(UsageFigures):
    """One group: ``key`` is a day/week start/month start (YYYY-MM-DD), a model, an agent, a
    repository (host/owner/repo), a workspace, a person's id or a thread id (T-…); null for
    threads without one (no repository, no workspace); ``stack`` the model or agent of a
    stacked series (null unstacked)."""

    key: str | None
    stack: str | None
    title: str | None = Field(None, description="The thread's title (group_by=session)")


class UsageAnswer(BaseModel):
    """``GET /api/usage``: the groups, their total and the prices they were estimated at."""

    since: str
    until: str
    scope: str
    group_by: str
    stack: str
    prices: Prices
    total: UsageFigures
    groups: list[UsageGroup]
    truncated: bool = Field(description="More groups than ``limit`` matched; the first are given")
