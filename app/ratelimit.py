"""Per-caller rate limits on ``/api`` (429 with ``Retry-After``), with the ``limits`` library.

The budget is ``LOOMSYNC_RATE_LIMIT`` (``1200/minute`` by default, ``off`` to disable; the
embedded server turns it off unless it is set) over a moving window, kept per user: the
verified token's ``sub``, so every token of one user shares one budget and a forged token cannot
spend someone else's. Requests without a token are counted per client IP. The counters live in
this process's memory: each server instance keeps its own (docs/scaling.md).
"""

from __future__ import annotations

import math
import time

from fastapi import Request
from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage
from limits.aio.strategies import MovingWindowRateLimiter

from app.auth import CurrentPrincipal, Principal
from app.errors import RateLimited


class RateLimiter:
    """One budget (e.g. ``1200/minute``) per caller key, in process memory."""

    def __init__(self, limit: str) -> None:
        self.item: RateLimitItem = parse(limit)
        self._strategy = MovingWindowRateLimiter(MemoryStorage())

    async def hit(self, key: str) -> None:
        """Count one request for ``key``.

        Raises:
            RateLimited: the key's budget is spent; ``retry_after`` says for how long.
        """
        if await self._strategy.hit(self.item, key):
            return
        stats = await self._strategy.get_window_stats(self.item, key)
        retry_after = max(1, math.ceil(stats.reset_time - time.time()))
        raise RateLimited(
            f"Too many requests: the limit is {self.item}. Retry after {retry_after} seconds.",
            retry_after=retry_after,
        )


def caller_key(request: Request, principal: Principal) -> str:
    """``user:<sub>`` for a verified token, else ``ip:<client address>``."""
    if principal.user_id is not None:
        return f"user:{principal.user_id}"
    client = request.client
    return f"ip:{client.host if client else 'unknown'}"


async def enforce_rate_limit(request: Request, principal: CurrentPrincipal) -> None:
    """FastAPI dependency for the ``/api`` routers: counts the request against the caller's
    budget. A bad token is refused (401) before it is counted.

    Raises:
        RateLimited: 429 with ``Retry-After``.
    """
    limiter: RateLimiter | None = request.app.state.rate_limiter
    if limiter is not None:
        await limiter.hit(caller_key(request, principal))
