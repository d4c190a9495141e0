"""A replica that stops answering, or falls behind past LOOMSYNC_REPLICA_MAX_LAG, is skipped
with no failed request and rejoins by itself (app/replicas/routing.py, monitor.py), while
clients keep writing and reading back through both instances."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import pytest

from tests.replicas.load import Tally, keep_writing
from tests.replicas.support import REPLICA_ENV, Setup, gauge, reads

MAX_LAG = float(REPLICA_ENV["LOOMSYNC_REPLICA_MAX_LAG"])


@asynccontextmanager
async def writing(setup: Setup) -> AsyncIterator[Tally]:
    """Clients writing and reading back (tests/replicas/load.py) for the block's length."""
    tally, stop = Tally(), asyncio.Event()
    task = asyncio.create_task(keep_writing(setup.pair(), tally, stop))
    try:
        yield tally
    finally:
        stop.set()
        await task


async def until(check: Callable[[], bool], what: str, seconds: float = 30.0) -> None:
    """Poll ``check`` (run in a thread: it reads /metrics) until true, or fail."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not await asyncio.to_thread(check):
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"not within {seconds} s: {what}")
        await asyncio.sleep(0.1)


def _count(setup: Setup, target: str, reason: str) -> Callable[[], float]:
    return lambda: sum(reads(s.base_url).get((target, reason), 0) for s in (setup.a, setup.b))


def _everywhere(setup: Setup, name: str, test: Callable[[float], bool]) -> Callable[[], bool]:
    return lambda: all(test(gauge(s.base_url, name)) for s in (setup.a, setup.b))


async def test_a_stopped_replica_fails_no_request_and_rejoins_when_it_starts(
    setup: Setup,
) -> None:
    replica = setup.cluster.replicas[0]
    on_replica = _count(setup, "replica", "caught-up")
    down = _count(setup, "primary", "replica-down")
    async with writing(setup) as tally:
        await until(lambda: on_replica() > 0, "reads on the replica before it stops")
        down_before = await asyncio.to_thread(down)
        await asyncio.to_thread(replica.stop, "immediate")
        try:
            await until(_everywhere(setup, "loomsync_replica_up", lambda v: v == 0), "skipped")
            await until(lambda: down() > down_before + 4, "reads on the primary meanwhile")
            requests_while_down = tally.requests
            await asyncio.sleep(1.0)
            assert tally.requests > requests_while_down  # the clients kept being answered
        finally:
            await asyncio.to_thread(replica.start)
        rejoined = await asyncio.to_thread(on_replica)
        await until(_everywhere(setup, "loomsync_replica_up", lambda v: v == 1), "rejoined")
        await until(lambda: on_replica() > rejoined + 4, "reads on the replica again")
    assert tally.failed == []
    assert tally.stale == []


async def test_a_replica_behind_past_the_max_lag_is_skipped_until_it_catches_up(
    setup: Setup,
) -> None:
    replica = setup.cluster.replicas[0]
    on_replica = _count(setup, "replica", "caught-up")
    lagging = _count(setup, "primary", "lagging")
    async with writing(setup) as tally:
        await asyncio.to_thread(replica.sql, "SELECT pg_wal_replay_pause()")
        try:
            await until(
                _everywhere(setup, "loomsync_replica_lag_seconds", lambda v: v > MAX_LAG),
                "lag past the maximum",
            )
            skipped = await asyncio.to_thread(lagging)
            await until(lambda: lagging() > skipped + 4, "reads skipping the lagging replica")
            assert await asyncio.to_thread(
                _everywhere(setup, "loomsync_replica_up", lambda v: v == 1)
            )  # answering, only behind
        finally:
            await asyncio.to_thread(replica.sql, "SELECT pg_wal_replay_resume()")
        await until(
            _everywhere(setup, "loomsync_replica_lag_seconds", lambda v: v < MAX_LAG), "caught up"
        )
        back = await asyncio.to_thread(on_replica)
        await until(lambda: on_replica() > back + 4, "reads on the replica again")
    assert tally.failed == []
    assert tally.stale == []
