"""Page routes spend the LOOMSYNC_RATE_LIMIT budget as /api does (review finding G2): per
signed-in user of the session cookie, else per client IP; over it, a 429 page with
Retry-After, while the probes stay open."""

from __future__ import annotations

import httpx

from app.config import Settings
from tests.apps import serving
from tests.web.documents import conversation, document
from tests.web.rows import insert_session


async def test_pages_and_fragments_are_limited_with_a_429_page(
    settings: Settings, client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    doc = document(conversation(3), visibility="public")
    assert (
        await client.put(f"/api/threads/{doc['id']}", json=doc, headers=owner)
    ).status_code == 201
    base = f"/t/{doc['id']}"
    limited = settings.model_copy(update={"rate_limit": "3/minute"})
    async with serving(limited) as limited_client:
        for path in (base, f"{base}/messages?from=0", f"{base}/m/0/body"):
            assert (await limited_client.get(path)).status_code == 200, path
        for path in (base, f"{base}/m/0", "/search?q=x", "/", "/s/nosuchsecret"):
            refused = await limited_client.get(path, headers={"Accept": "text/html"})
            assert refused.status_code == 429, path
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert refused.headers["content-type"].startswith("text/html")
        # a signed-in reader has a budget of their own, not the address's
        signed_in = await insert_session(database_url, "page-reader")
        assert (await limited_client.get(base, headers=signed_in)).status_code == 200
        assert (await limited_client.get("/health")).status_code == 200
