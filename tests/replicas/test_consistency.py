"""Read-your-writes across two server instances under concurrent writers: every list and search
that follows a write, through the other instance, shows it (app/replicas/routing.py)."""

from __future__ import annotations

from tests.replicas.load import run_writers
from tests.replicas.support import Setup, reads

CLIENTS = 12
ROUNDS = 8


def _replica_reads(setup: Setup) -> float:
    return sum(reads(s.base_url).get(("replica", "caught-up"), 0) for s in (setup.a, setup.b))


async def test_every_read_sees_the_write_before_it_through_either_instance(setup: Setup) -> None:
    before = _replica_reads(setup)
    tally = await run_writers(setup.pair(), CLIENTS, ROUNDS)
    assert tally.failed == []
    assert tally.stale == []
    assert tally.reads == CLIENTS * ROUNDS * 2
    assert _replica_reads(setup) > before  # the replica served reads, not only the primary


async def test_a_replica_that_has_not_replayed_leaves_the_read_to_the_primary(
    setup: Setup,
) -> None:
    replica = setup.cluster.replicas[0]
    replica.sql("SELECT pg_wal_replay_pause()")
    try:
        before = reads(setup.b.base_url)
        tally = await run_writers(setup.pair(), 2, 2, search=False)
    finally:
        replica.sql("SELECT pg_wal_replay_resume()")
    assert tally.ok(), (tally.failed, tally.stale)
    after = reads(setup.b.base_url)
    waited = ("primary", "not-replicated-yet")
    lagging = ("primary", "lagging")
    assert after.get(waited, 0) + after.get(lagging, 0) > before.get(waited, 0) + before.get(
        lagging, 0
    )
