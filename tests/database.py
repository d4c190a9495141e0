"""Where the tests' PostgreSQL comes from: LOOMSYNC_TEST_DATABASE_URL, else testcontainers when a
Docker engine answers and already holds the image (:data:`CONTAINER_IMAGE`: nothing is pulled,
as a machine whose engine cannot reach a registry would fail there), else the embedded server
(pgserver) in a temporary folder."""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
from sqlalchemy.engine import make_url

from app.config import normalize_database_url

#: The image of the throwaway database container, used only when the engine already has it.
CONTAINER_IMAGE = "postgres:16-alpine"


def _docker_answers() -> bool:
    """True when a Docker engine answers and holds :data:`CONTAINER_IMAGE` locally."""
    try:
        import docker

        client = docker.from_env(timeout=3)
        client.ping()
        client.images.get(CONTAINER_IMAGE)
    except Exception:
        return False
    return True


@contextlib.contextmanager
def server_url() -> Iterator[str]:
    """Yield a ``postgresql+asyncpg://`` URL of a server the tests may create databases on."""
    configured = os.environ.get("LOOMSYNC_TEST_DATABASE_URL")
    if configured:
        yield normalize_database_url(configured)
        return
    if _docker_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer(CONTAINER_IMAGE, driver="asyncpg") as container:
            yield normalize_database_url(container.get_connection_url())
        return
    import pgserver

    with tempfile.TemporaryDirectory(prefix="loomsync-test-pg-") as tmp:
        server = pgserver.get_server(Path(tmp) / "pgdata", cleanup_mode="delete")
        try:
            yield normalize_database_url(server.get_uri())
        finally:
            server.cleanup()


def _asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def create_database(url: str) -> str:
    """Create a fresh, uniquely named database beside ``url``'s; return its URL."""
    name = f"loomsync_test_{uuid.uuid4().hex[:12]}"
    conn = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return make_url(url).set(database=name).render_as_string(hide_password=False)


async def drop_database(url: str, name_url: str) -> None:
    """Drop the database of ``name_url`` (connections are terminated first)."""
    name = make_url(name_url).database
    conn = await asyncpg.connect(_asyncpg_dsn(url))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()
