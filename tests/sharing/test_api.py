"""The share-link API (API.md section 1, issue 13 item 1) through the app in-process: create,
open as JSON, list, revoke, expiry, the thread's deletion, bad input.

Isolation: see tests/sharing/conftest.py.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, text, update

from app.sharing.tables import share_links
from tests.sharing.conftest import Shared, secret_of

SECRET = re.compile(r"[A-Za-z0-9_-]{43}")


async def test_a_link_opens_a_private_thread_to_anyone_holding_it(shared: Shared) -> None:
    made = await shared.make_link()
    assert set(made) == {"id", "thread_id", "url", "created_at", "expires_at"}
    assert made["thread_id"] == shared.thread_id
    assert made["expires_at"] is None
    assert made["url"].startswith("http://testserver/s/")
    secret = secret_of(made["url"])
    assert SECRET.fullmatch(secret)  # 43 base64url characters: 256 random bits
    own = await shared.client.get(f"/api/threads/{shared.thread_id}", headers=shared.headers)
    stranger = await shared.client.get(f"/api/threads/{shared.thread_id}")
    assert stranger.status_code == 404  # private: nobody else reads it by id
    opened = await shared.client.get(f"/api/shared/{secret}")
    assert opened.status_code == 200, opened.text
    assert opened.content == own.content  # the thread exactly as GET /api/threads/{id} gives it
    assert opened.headers["etag"] == own.headers["etag"]
    assert opened.headers["cache-control"] == "no-store"
    assert opened.headers["referrer-policy"] == "no-referrer"
    assert "noindex" in opened.headers["x-robots-tag"]


async def test_creating_answers_no_store_and_only_the_secret_hash_is_stored(
    app: FastAPI, shared: Shared
) -> None:
    response = await shared.client.post(
        shared.links, headers={**shared.headers, "Idempotency-Key": "share-once"}
    )
    assert response.status_code == 201
    assert response.headers["cache-control"] == "no-store"
    made = response.json()
    secret = secret_of(made["url"])
    async with app.state.sessionmaker() as session:
        row = (
            await session.execute(select(share_links).where(share_links.c.id == made["id"]))
        ).one()
        # no row of the tables a request writes holds the secret: a dump opens nothing
        holding = {
            table: (
                await session.execute(
                    text(f"SELECT count(*) FROM {table} t WHERE to_jsonb(t)::text LIKE :pattern"),
                    {"pattern": f"%{secret}%"},
                )
            ).scalar()
            for table in ("share_links", "audit_events", "idempotency_keys", "threads")
        }
    assert row.secret_hash == hashlib.sha256(secret.encode()).digest()
    assert holding == dict.fromkeys(holding, 0)


async def test_two_links_have_different_secrets_and_ids(shared: Shared) -> None:
    first, second = await shared.make_link(), await shared.make_link()
    assert first["id"] != second["id"]
    assert secret_of(first["url"]) != secret_of(second["url"])


async def test_expires_in_sets_expires_at_and_an_expired_link_answers_410(
    app: FastAPI, shared: Shared
) -> None:
    before = datetime.now(UTC)
    made = await shared.make_link({"expires_in": 7 * 86400})
    expires = datetime.fromisoformat(made["expires_at"])
    created = datetime.fromisoformat(made["created_at"])
    assert expires - created == timedelta(days=7)
    assert before - timedelta(seconds=5) <= created <= datetime.now(UTC) + timedelta(seconds=5)
    secret = secret_of(made["url"])
    assert (await shared.client.get(f"/api/shared/{secret}")).status_code == 200
    async with app.state.sessionmaker() as session:  # a week passes
        await session.execute(
            update(share_links)
            .where(share_links.c.id == made["id"])
            .values(expires_at=func.now() - timedelta(seconds=1))
        )
        await session.commit()
    gone = await shared.client.get(f"/api/shared/{secret}")
    assert gone.status_code == 410
    assert gone.headers["content-type"] == "application/problem+json"
    assert gone.json()["code"] == "gone"
    assert gone.json()["detail"] == "This share link has expired."
    [listed] = (await shared.client.get(shared.links, headers=shared.headers)).json()["links"]
    assert listed["state"] == "expired"


async def test_revoking_answers_204_then_the_link_is_410_and_revoking_again_is_204(
    shared: Shared,
) -> None:
    made = await shared.make_link()
    secret = secret_of(made["url"])
    url = f"{shared.links}/{made['id']}"
    revoked = await shared.client.delete(url, headers=shared.headers)
    assert revoked.status_code == 204
    assert revoked.content == b""
    gone = await shared.client.get(f"/api/shared/{secret}")
    assert gone.status_code == 410
    assert gone.json()["detail"] == "This share link was revoked."
    again = await shared.client.delete(url, headers=shared.headers)
    assert again.status_code == 204
    [listed] = (await shared.client.get(shared.links, headers=shared.headers)).json()["links"]
    assert listed["state"] == "revoked"
    assert listed["revoked_at"] is not None


async def test_revoking_one_link_leaves_the_others_live(shared: Shared) -> None:
    first, second = await shared.make_link(), await shared.make_link()
    await shared.client.delete(f"{shared.links}/{first['id']}", headers=shared.headers)
    assert (await shared.client.get(f"/api/shared/{secret_of(first['url'])}")).status_code == 410
    assert (await shared.client.get(f"/api/shared/{secret_of(second['url'])}")).status_code == 200


async def test_deleting_the_thread_kills_its_links(shared: Shared) -> None:
    live, revoked = await shared.make_link(), await shared.make_link()
    await shared.client.delete(f"{shared.links}/{revoked['id']}", headers=shared.headers)
    deleted = await shared.client.delete(f"/api/threads/{shared.thread_id}", headers=shared.headers)
    assert deleted.status_code == 204
    for made in (live, revoked):
        gone = await shared.client.get(f"/api/shared/{secret_of(made['url'])}")
        assert gone.status_code == 410
        assert gone.json()["detail"] == "The shared thread was deleted."
    listing = await shared.client.get(shared.links, headers=shared.headers)
    assert listing.status_code == 410
    creating = await shared.client.post(shared.links, headers=shared.headers)
    assert creating.status_code == 410


async def test_the_listing_counts_uses_and_never_shows_a_secret(shared: Shared) -> None:
    made = await shared.make_link({"expires_in": 3600})
    secret = secret_of(made["url"])
    for _ in range(3):
        assert (await shared.client.get(f"/api/shared/{secret}")).status_code == 200
    listing = await shared.client.get(shared.links, headers=shared.headers)
    assert listing.status_code == 200
    assert secret not in listing.text
    body = listing.json()
    assert body["next_cursor"] is None
    [link] = body["links"]
    assert link["id"] == made["id"]
    assert link["thread_id"] == shared.thread_id
    assert link["state"] == "live"
    assert link["created_by"] == shared.owner
    assert link["created_at"] == made["created_at"]
    assert link["expires_at"] == made["expires_at"]
    assert link["use_count"] == 3
    assert link["last_used_at"] is not None
    assert link["revoked_at"] is None


async def test_the_listing_pages_newest_first_with_a_cursor(shared: Shared) -> None:
    made = [await shared.make_link() for _ in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = await shared.client.get(shared.links, params=params, headers=shared.headers)
        assert page.status_code == 200, page.text
        seen += [link["id"] for link in page.json()["links"]]
        pages += 1
        cursor = page.json()["next_cursor"]
        if cursor is None:
            break
    assert pages == 3
    assert seen == [link["id"] for link in reversed(made)]


async def test_a_cursor_of_another_listing_is_400(shared: Shared) -> None:
    await shared.make_link()
    await shared.client.post("/api/threads", json={}, headers=shared.headers)
    await shared.client.post("/api/threads", json={}, headers=shared.headers)
    threads = await shared.client.get("/api/threads", params={"limit": 1}, headers=shared.headers)
    cursor = threads.json()["next_cursor"]
    assert cursor
    refused = await shared.client.get(
        shared.links, params={"cursor": cursor}, headers=shared.headers
    )
    assert refused.status_code == 400
    assert refused.json()["detail"] == "The cursor is not one this server issued."


@pytest.mark.parametrize(
    "secret",
    [
        "A" * 43,  # well formed, unknown
        "short",
        "A" * 42,
        "A" * 44,
        "A" * 42 + "%2Fx",  # a slash: another path
        "A" * 42 + "%00",
        "A" * 42 + "%C3%A9",
        "A" * 5000,
        "..%2F..%2Fapi%2Fthreads",
    ],
)
async def test_an_unknown_or_malformed_secret_is_404(
    client: httpx.AsyncClient, secret: str
) -> None:
    response = await client.get(f"/api/shared/{secret}")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


async def test_a_bad_token_on_the_shared_route_is_401_as_on_every_api_route(
    shared: Shared,
) -> None:
    made = await shared.make_link()
    response = await shared.client.get(
        f"/api/shared/{secret_of(made['url'])}", headers={"Authorization": "Bearer not-a-jwt"}
    )
    assert response.status_code == 401


async def test_unknown_malformed_and_other_threads_link_ids_are_404(shared: Shared) -> None:
    other = await shared.client.post("/api/threads", json={}, headers=shared.headers)
    other_links = f"/api/threads/{other.json()['id']}/share-links"
    elsewhere = (await shared.client.post(other_links, headers=shared.headers)).json()
    for link_id in (
        "01a23218-f536-741b-abd0-74f0291d3c8a",  # no such link
        elsewhere["id"],  # a link of another thread
    ):
        response = await shared.client.delete(f"{shared.links}/{link_id}", headers=shared.headers)
        assert response.status_code == 404, link_id
        assert response.json()["code"] == "not_found"
    for malformed in ("nope", "01A23218-F536-741B-ABD0-74F0291D3C8A", "1" * 400):
        response = await shared.client.delete(f"{shared.links}/{malformed}", headers=shared.headers)
        assert response.status_code == 404, malformed
    assert (
        await shared.client.get(f"/api/shared/{secret_of(elsewhere['url'])}")
    ).status_code == 200


async def test_the_openapi_document_describes_the_share_link_routes(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    paths = document["paths"]
    links = paths["/api/threads/{thread_id}/share-links"]
    create, listing = links["post"], links["get"]
    assert create["requestBody"]["required"] is False
    assert create["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ShareLinkRequest"
    }
    assert {"201", "401", "403", "404", "410", "422"} <= set(create["responses"])
    created = create["responses"]["201"]["content"]["application/json"]["schema"]
    assert created == {"$ref": "#/components/schemas/ShareLinkCreated"}
    assert {"200", "401", "403", "404", "410"} <= set(listing["responses"])
    revoke = paths["/api/threads/{thread_id}/share-links/{link_id}"]["delete"]
    assert {"204", "401", "403", "404", "410"} <= set(revoke["responses"])
    shared = paths["/api/shared/{secret}"]["get"]
    assert {"200", "404", "410"} <= set(shared["responses"])
    assert shared["responses"]["410"]["description"].startswith("The link was revoked")
    [secret] = shared["parameters"]
    assert secret["schema"]["pattern"] == "^[A-Za-z0-9_-]{43}$"
    request = document["components"]["schemas"]["ShareLinkRequest"]
    assert request["additionalProperties"] is False
    assert request["properties"]["expires_in"]["anyOf"][0] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 315360000,
    }
    actions = document["components"]["schemas"]["AuditEvent"]["properties"]["action"]["enum"]
    assert {"share_link.create", "share_link.revoke", "share_link.use"} <= set(actions)
