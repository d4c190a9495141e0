"""Shared fixtures. Isolation: one fresh database per test run, migrated once by Alembic; each
test works as its own unique users (``new_user``), so tests never see each other's threads."""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from app.auth import create_token
from app.config import Settings
from app.database import migrate_async
from app.main import create_app
from tests.database import create_database, drop_database, server_url

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
THREADS_DIR = SHARED_DATA / "threads"


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """URL of the PostgreSQL server used by this run."""
    with server_url() as url:
        yield url


@pytest.fixture(scope="session")
async def database_url(pg_server: str) -> AsyncIterator[str]:
    """A fresh database, migrated to head, dropped after the run."""
    url = await create_database(pg_server)
    await migrate_async(url)
    yield url
    await drop_database(pg_server, url)


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    """Settings with a random HS256 secret. Rate limits are off: tests run many requests as one
    caller; tests/test_abuse.py turns them on for its own app."""
    return Settings(  # type: ignore[call-arg]
        database_url=database_url,
        jwt_secret=secrets.token_urlsafe(48),
        rate_limit="off",
        _env_file=None,
    )


@pytest.fixture(scope="session")
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The application under test (one engine for the run)."""
    application = create_app(settings)
    yield application
    await application.state.engine.dispose()


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client talking to the app in-process (httpx ASGITransport)."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://testserver", timeout=120
    ) as c:
        yield c


TokenFactory = Callable[..., dict[str, str]]


@pytest.fixture(scope="session")
def auth(settings: Settings) -> TokenFactory:
    """``auth(sub, org=None, roles=())`` → Authorization headers for a fresh token."""

    def make(sub: str, org: str | None = None, roles: tuple[str, ...] = ()) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {create_token(settings, sub, org=org, roles=list(roles))}"
        }

    return make


@pytest.fixture
def new_user() -> Callable[[str], str]:
    """``new_user("alice")`` → a user id unique to this test."""
    suffix = uuid.uuid4().hex[:10]
    return lambda name: f"{name}-{suffix}"


@pytest.fixture
def new_org() -> Callable[[str], str]:
    """``new_org("acme")`` → an organization id unique to this test."""
    suffix = uuid.uuid4().hex[:10]
    return lambda name: f"{name}-{suffix}"


@pytest.fixture
def owner(
    auth: TokenFactory, new_user: Callable[[str], str], new_org: Callable[[str], str]
) -> dict[str, str]:
    """Headers of a user of their own organization, unique to this test."""
    return auth(new_user("owner"), org=new_org("acme"))


def real_threads() -> list[Path]:
    """The real thread documents in ../shared/data/threads/."""
    return sorted(THREADS_DIR.glob("T-*.json"))


def load_thread(path: Path) -> dict[str, Any]:
    """One real thread document."""
    data: dict[str, Any] = json.loads(path.read_text())
    return data
