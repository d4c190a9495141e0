"""A replica that freezes in the middle of a read (its backend stopped with SIGSTOP: the socket
stays open, nothing answers) costs the read ``LOOMSYNC_REPLICA_READ_TIMEOUT`` seconds, then
the read runs on the primary and the replica is skipped (issue 18 review: without the bound
the request hung until the request timeout)."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal

from prometheus_client import CollectorRegistry
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.database import make_engine, make_sessionmaker
from app.replicas.routing import ReplicaReads, make_reads
from tests.replicas.support import DATABASE, Setup


async def test_a_replica_frozen_mid_read_leaves_the_read_to_the_primary(setup: Setup) -> None:
    settings = Settings(  # type: ignore[call-arg]
        jwt_secret=secrets.token_urlsafe(48),
        database_replica_urls=setup.cluster.replicas[0].url(DATABASE),
        replica_read_timeout=1.0,
        replica_wait=0.5,
        replica_check_interval=600.0,  # no probe lets it rejoin during the test
        _env_file=None,
    )
    primary = make_engine(setup.cluster.primary.url(DATABASE), settings)
    registry = CollectorRegistry()
    reads = make_reads(settings, primary, make_sessionmaker(primary), registry)
    assert isinstance(reads, ReplicaReads)
    frozen: list[int] = []

    async def read(session: AsyncSession) -> str:
        if not await session.scalar(text("SELECT pg_is_in_recovery()")):
            return "primary"
        pid = int(await session.scalar(text("SELECT pg_backend_pid()")))
        os.kill(pid, signal.SIGSTOP)
        frozen.append(pid)
        await session.execute(text("SELECT count(*) FROM threads"))
        return "replica"

    try:
        async with asyncio.timeout(30):  # far below the hang it was (forever)
            assert await reads.run(read) == "primary"
        assert frozen  # the replica was really tried, and froze
        assert not reads.replicas[0].up
        down = registry.get_sample_value(
            "loomsync_db_reads_total", {"target": "primary", "reason": "replica-down"}
        )
        assert down == 1
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
        await reads.close()
        await primary.dispose()
