"""A new database needs no rebuild of search vectors, and ``serve``'s background rebuild says
its counts once (issue 30 item 8: a newcomer's first ``loomsync-server serve`` ran a rebuild of
nothing and printed its empty counts twice: the log line, then the summary). On a real
PostgreSQL, the command run as ``serve`` runs it (a subprocess)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from app.database import migrate
from app.threads.reindex import due
from tests.database import create_database, drop_database
from tests.test_reindex import _settings

MAIN = Path(__file__).resolve().parents[1]


@pytest.fixture
async def new_database(pg_server: str) -> AsyncIterator[str]:
    """A database just migrated to head, holding no row."""
    url = await create_database(pg_server)
    try:
        await asyncio.to_thread(migrate, url)
        yield url
    finally:
        await drop_database(pg_server, url)


async def test_a_new_database_has_no_rebuild_due_and_serve_starts_none(new_database: str) -> None:
    from app.cli import start_reindex

    engine = create_async_engine(new_database)
    try:
        assert not await due(engine)
    finally:
        await engine.dispose()
    assert await asyncio.to_thread(start_reindex, new_database, _settings(new_database)) is None


def test_the_rebuild_serve_starts_prints_its_counts_once(new_database: str) -> None:
    env = {**os.environ, "LOOMSYNC_DATABASE_URL": new_database, "LOOMSYNC_LOG_LEVEL": "info"}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "reindex", "--nice", "--quiet"],
        env=env,
        cwd=MAIN,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    said = done.stdout + done.stderr
    for target in ("threads", "thread_messages"):
        assert said.count(f"{target} finished: 0 rebuilt") == 1, said
