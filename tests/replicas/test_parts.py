"""The parts of read routing that need no replica: the settings, the default path (no replicas:
nothing changes), staleness from the primary's positions, and one primary reading shared by
many waiting reads (on the tests' own database)."""

from __future__ import annotations

import asyncio
import secrets

import httpx
import pytest
from pydantic import ValidationError
from sqlalchemy import event

from app.config import Settings
from app.database import make_engine
from app.main import create_app
from app.replicas.lsn import PrimaryLsn
from app.replicas.routing import PrimaryReads
from app.replicas.state import PrimaryHistory, replica_name


def _settings(**values: object) -> Settings:
    return Settings(jwt_secret=secrets.token_urlsafe(48), _env_file=None, **values)  # type: ignore[arg-type]


def test_replica_urls_are_a_comma_list_of_postgresql_urls() -> None:
    settings = _settings(database_replica_urls=" postgres://r1/db , postgresql://u:p@r2:6432/db,")
    assert settings.replica_urls == [
        "postgresql+asyncpg://r1/db",
        "postgresql+asyncpg://u:p@r2:6432/db",
    ]
    assert replica_name(settings.replica_urls[1]) == "r2:6432/db"  # no user, no password
    assert _settings().replica_urls == []
    with pytest.raises(ValidationError, match="REPLICA_URLS"):
        _settings(database_replica_urls="mysql://r1/db")


async def test_without_replicas_reads_use_the_primary_and_nothing_is_counted(
    settings: Settings,
) -> None:
    app = create_app(settings)
    try:
        assert isinstance(app.state.reads, PrimaryReads)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            text = (await client.get("/metrics")).text
        assert "loomsync_db_reads" not in text
        assert "loomsync_replica_" not in text
    finally:
        await app.state.engine.dispose()


def test_staleness_is_the_age_of_the_newest_primary_position_the_replica_holds() -> None:
    history = PrimaryHistory(horizon=10.0)
    assert history.staleness(0, now=5.0) == 0.0  # nothing known yet
    for moment, position in ((1.0, 100), (2.0, 200), (3.0, 300)):
        history.add(moment, position)
    assert history.staleness(300, now=3.5) == 0.0  # holds the newest: caught up
    assert history.staleness(250, now=3.5) == 1.5  # holds what the primary had at 2.0
    assert history.staleness(50, now=3.5) == 2.5  # older than all: at least the oldest's age
    history.add(20.0, 400)  # the horizon drops what is older than 10 s (the newest stays)
    assert history.staleness(300, now=20.0) == 17.0  # older than all kept: since 3.0 at least
    assert history.newest() == 400


async def test_reads_that_wait_together_share_one_primary_reading(database_url: str) -> None:
    engine = make_engine(database_url, _settings())
    statements: list[str] = []
    event.listen(
        engine.sync_engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, *_: statements.append(statement),
    )
    try:
        lsn = PrimaryLsn(engine)
        first = await lsn.current()
        statements.clear()
        positions = await asyncio.gather(*(lsn.current() for _ in range(50)))
        assert all(p >= first for p in positions)
        readings = [s for s in statements if "pg_current_wal_lsn" in s]
        assert 1 <= len(readings) <= 2  # the first batch, and the one that waited for it
        assert await lsn.current() >= max(positions)  # a later call gets a later reading
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    "urls",
    [
        "postgresql://r1:99999/db",  # asyncpg raises OverflowError at connect: was a 500
        "postgresql://r1:abc/db",  # was a ValueError out of create_app
        "postgresql://r1/db,postgresql://r1:5432/db",  # one replica label twice
    ],
)
def test_a_replica_url_that_cannot_work_is_refused_at_start_up(urls: str) -> None:
    with pytest.raises(ValidationError, match="REPLICA_URLS"):
        _settings(database_replica_urls=urls)
