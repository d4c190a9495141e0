"""Per-caller rate limits on ``/api`` (429 with ``Retry-After``), with the ``limits`` library.

The budget is ``LOOMSYNC_RATE_LIMIT`` (``1200/minute`` by default, ``off`` to disable; the
embedded server turns it off unless it is set) over a moving window, kept per user: the
verified token's ``sub``, so every token of one user shares one budget and a forged token cannot
spend someone else's. Requests without a token are counted per client IP.

The counters live where ``LOOMSYNC_RATE_LIMIT_STORAGE`` says: ``memory://`` (the default) in
this process, so each server instance keeps its own; ``redis://…`` in Redis, so every instance
pointed at it enforces one budget per user (issue 18 item 4, docs/scaling.md).

**Redis failing fails open**: when the storage errs or does not answer within
:data:`STORAGE_TIMEOUT` seconds, the request is let through unchecked, a WARNING is logged and
``loomsync_rate_limit_storage_errors_total`` counts it; for the next :data:`BACKOFF` seconds the
storage is not asked (requests go through unchecked, counted by
``loomsync_rate_limit_unchecked_total``), so a hung Redis costs one slow request every
:data:`BACKOFF` seconds, not one per request. A rate limit protects the service; refusing
everyone (or answering 500) because its bookkeeping is down would do the harm it guards against.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable
from typing import TypeVar

from fastapi import Request
from limits import RateLimitItem, parse
from limits.aio.storage import Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string
from prometheus_client import Counter

from app.auth import CurrentPrincipal, Principal
from app.config import rate_limit_storage_uri
from app.errors import RateLimited

log = logging.getLogger(__name__)

#: Seconds one storage call may take before the request goes through unchecked.
STORAGE_TIMEOUT = 0.5
#: Seconds the storage is left alone after it failed.
BACKOFF = 5.0
#: Prefix of every key in a shared storage (one Redis may serve other applications too).
KEY_PREFIX = "loomsync-ratelimit"
T = TypeVar("T")


def make_storage(url: str) -> Storage:
    """The ``limits`` async storage for ``LOOMSYNC_RATE_LIMIT_STORAGE`` ``url``; a Redis one
    (coredis, the ``limits[async-redis]`` extra) gives up on connecting or reading after
    :data:`STORAGE_TIMEOUT` seconds. Connecting happens on first use.

    Raises:
        ValueError: ``url`` is not a storage URL (:func:`app.config.rate_limit_storage_uri`).
        limits.errors.ConfigurationError: the Redis client library is not installed.
    """
    uri = rate_limit_storage_uri(url)
    if uri.startswith("async+memory"):
        storage = storage_from_string(uri)
    else:
        timeouts = {"stream_timeout": STORAGE_TIMEOUT, "connect_timeout": STORAGE_TIMEOUT}
        storage = storage_from_string(uri, key_prefix=KEY_PREFIX, **timeouts)
    assert isinstance(storage, Storage)
    return storage


class RateLimiter:
    """One budget (e.g. ``1200/minute``) per caller key, in ``storage`` (memory by default).

    ``errors`` and ``unchecked`` are the Prometheus counters of storage failures and of requests
    let through without a check (module docstring); None counts nothing.
    """

    def __init__(
        self,
        limit: str,
        storage: Storage | None = None,
        errors: Counter | None = None,
        unchecked: Counter | None = None,
    ) -> None:
        self.item: RateLimitItem = parse(limit)
        self.storage = storage if storage is not None else make_storage("memory://")
        self._strategy = MovingWindowRateLimiter(self.storage)
        self._errors = errors
        self._unchecked = unchecked
        self._skip_until = 0.0

    async def hit(self, key: str) -> None:
        """Count one request for ``key``; with the storage failing, let it through (fail open).

        Raises:
            RateLimited: the key's budget is spent; ``retry_after`` says for how long.
        """
        allowed = await self._ask(self._strategy.hit(self.item, key))
        if allowed is None or allowed:
            return
        stats = await self._ask(self._strategy.get_window_stats(self.item, key))
        reset = stats.reset_time if stats is not None else time.time() + 1
        retry_after = max(1, math.ceil(reset - time.time()))
        raise RateLimited(
            f"Too many requests: the limit is {self.item}. Retry after {retry_after} seconds.",
            retry_after=retry_after,
        )

    async def _ask(self, call: Awaitable[T]) -> T | None:
        """``await call`` bounded by :data:`STORAGE_TIMEOUT`; None when the storage failed or is
        in its back-off (logged and counted)."""
        if time.monotonic() < self._skip_until:
            _close(call)
            self._count(self._unchecked)
            return None
        try:
            async with asyncio.timeout(STORAGE_TIMEOUT):
                return await call
        except Exception as exc:  # any storage failure: connection, timeout, protocol, script
            self._skip_until = time.monotonic() + BACKOFF
            self._count(self._errors)
            self._count(self._unchecked)
            log.warning(
                "rate-limit storage failed (%s: %s); letting requests through unchecked for %.0f s",
                type(exc).__name__,
                exc,
                BACKOFF,
            )
            return None

    @staticmethod
    def _count(counter: Counter | None) -> None:
        if counter is not None:
            counter.inc()

    async def check(self) -> bool:
        """True when the storage answers (a start-up check; memory always does)."""
        try:
            async with asyncio.timeout(STORAGE_TIMEOUT * 4):
                return bool(await self.storage.check())
        except Exception:
            return False


def _close(call: Awaitable[object]) -> None:
    """Drop a coroutine that will not be awaited without a "never awaited" warning."""
    close = getattr(call, "close", None)
    if close is not None:
        close()


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
