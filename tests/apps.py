"""A second app for tests whose settings differ from the shared ``app`` fixture's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from app.config import Settings
from app.main import create_app


@asynccontextmanager
async def serving(
    settings: Settings, base_url: str = "http://testserver"
) -> AsyncIterator[httpx.AsyncClient]:
    """An in-process client for an app built from ``settings`` (its own verifier, limiter and
    engine, disposed when the block ends)."""
    app = create_app(settings)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=base_url) as client:
            yield client
    finally:
        await app.state.engine.dispose()
