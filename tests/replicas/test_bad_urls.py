"""Replica URLs that point at no replica (issue 18 review): a primary, or a host that does not
resolve. Every list, search and page still answers (from the primary), counted ``replica-down``;
the web pages read through the same routing as the API (app/web/home.py, searchpage.py). No
replica cluster is needed: the tests' own database is the primary, and the "replica"."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from app.config import Settings
from app.main import create_app
from tests.conftest import TokenFactory
from tests.web.signing import sign_in


@pytest.fixture(params=["primary", "no-such-host"])
async def misrouted(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[FastAPI]:
    """An app whose one "replica" is the primary itself, or a name that does not resolve."""
    url = settings.database_url if request.param == "primary" else "postgresql://x@nohost.invalid/x"
    app = create_app(settings.model_copy(update={"database_replica_urls": url}))
    async with app.router.lifespan_context(app):
        yield app


async def _down_reads(client: httpx.AsyncClient) -> float:
    text = (await client.get("/metrics")).text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "loomsync_db_reads_total"
        and s.labels == {"target": "primary", "reason": "replica-down"}
    )


async def test_lists_searches_and_pages_answer_from_the_primary(
    misrouted: FastAPI, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    headers = auth(new_user("reader"))
    transport = httpx.ASGITransport(app=misrouted)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        assert (await client.get("/api/threads", headers=headers)).status_code == 200
        found = await client.get("/api/threads/search", params={"q": "quokka"}, headers=headers)
        assert found.status_code == 200, found.text
        assert await _down_reads(client) == 2
        await sign_in(client, headers)
        assert (await client.get("/")).status_code == 200
        assert await _down_reads(client) == 3  # the home page's two lists: one routed read
        page = await client.get("/search", params={"q": "quokka"})
        assert page.status_code == 200, page.text
        assert await _down_reads(client) == 4


async def test_the_probe_runs_from_start_up_not_from_the_first_read(settings: Settings) -> None:
    """``loomsync_replica_up`` says 0 for a "replica" that is a primary before any list or
    search (it said 1 until the first read started the probe)."""
    app = create_app(settings.model_copy(update={"database_replica_urls": settings.database_url}))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        for _ in range(200):
            text = (await client.get("/metrics")).text
            up = [
                s.value
                for family in text_string_to_metric_families(text)
                for s in family.samples
                if s.name == "loomsync_replica_up"
            ]
            if up == [0.0]:
                break
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the replica probe never ran before a read")
        assert await _down_reads(client) == 0  # no read was needed
