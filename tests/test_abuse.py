"""Abuse (API.md sections 7 and 8): per-user rate limits, request time limits, message-count and
query-length limits, JWKS key rotation without a restart, and security headers."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from fastapi import FastAPI
from jose import jwt
from sqlalchemy.engine import make_url

from app.cli import embedded_defaults
from app.config import Settings
from app.main import create_app
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.test_auth import b64url, claims, pem


@asynccontextmanager
async def serving(settings: Settings) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """An app of its own (own rate limiter, engine and key files) and a client for it."""
    app = create_app(settings)
    try:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            yield app, c
    finally:
        await app.state.engine.dispose()


# --- rate limits -------------------------------------------------------------------------------


def test_rate_limit_is_on_by_default_and_off_for_the_embedded_server() -> None:
    settings = Settings(_env_file=None)
    assert settings.rate_limit_enabled
    assert not embedded_defaults(settings).rate_limit_enabled
    chosen = Settings(rate_limit="5/second", _env_file=None)
    assert embedded_defaults(chosen).rate_limit == "5/second"


def test_unparsable_rate_limit_is_a_configuration_error() -> None:
    with pytest.raises(ValueError, match="LOOMSYNC_RATE_LIMIT"):
        Settings(rate_limit="lots", _env_file=None)


async def test_user_over_the_rate_limit_gets_429_with_retry_after(
    settings: Settings, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    limited = settings.model_copy(update={"rate_limit": "3/minute"})
    alice, bob = auth(new_user("alice")), auth(new_user("bob"))
    async with serving(limited) as (_, client):
        for _ in range(3):
            assert (await client.get("/api/threads", headers=alice)).status_code == 200
        refused = await client.get("/api/threads", headers=alice)
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert refused.headers["content-type"] == "application/problem+json"
        assert refused.json()["code"] == "rate_limited"
        # writes count too, and refused requests change nothing
        tid = ThreadId.new()
        write = await client.put(f"/api/threads/{tid}", json={}, headers=alice)
        assert write.status_code == 429
        # another user has a budget of their own; probes and docs are never limited
        assert (await client.get("/api/threads", headers=bob)).status_code == 200
        assert (await client.get("/health")).status_code == 200
    async with serving(settings) as (_, client):
        assert (await client.get(f"/api/threads/{tid}", headers=alice)).status_code == 404


async def test_anonymous_callers_are_limited_per_address(settings: Settings) -> None:
    limited = settings.model_copy(update={"rate_limit": "2/minute"})
    url = f"/api/threads/{ThreadId.new()}"  # anonymous callers read threads by id
    async with serving(limited) as (_, client):
        statuses = [(await client.get(url)).status_code for _ in range(3)]
    assert statuses == [404, 404, 429]


async def test_bad_tokens_are_refused_before_they_spend_a_budget(
    settings: Settings, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    limited = settings.model_copy(update={"rate_limit": "2/minute"})
    async with serving(limited) as (_, client):
        for _ in range(5):
            bad = await client.get("/api/threads", headers={"Authorization": "Bearer junk"})
            assert bad.status_code == 401
        assert (await client.get("/api/threads", headers=auth(new_user("a")))).status_code == 200


# --- request time limit ------------------------------------------------------------------------


def asyncpg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.mark.parametrize("body_timeout", [30.0, 0.5])  # a body read in time lifts its limit
async def test_request_stuck_on_the_database_is_503_at_the_time_limit(
    settings: Settings,
    database_url: str,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    body_timeout: float,
) -> None:
    quick = settings.model_copy(update={"request_timeout": 1.0, "body_timeout": body_timeout})
    me = auth(new_user("patient"))
    async with serving(quick) as (app, client):
        tid = ThreadId.new()
        assert (await client.put(f"/api/threads/{tid}", json={}, headers=me)).status_code == 201
        locker = await asyncpg.connect(asyncpg_dsn(database_url))
        try:
            async with locker.transaction():
                await locker.execute(
                    "SELECT 1 FROM threads WHERE id = $1 FOR UPDATE", ThreadId.parse(tid).uuid
                )
                started = time.monotonic()
                stuck = await client.patch(
                    f"/api/threads/{tid}", json={"metadata": {"title": "x"}}, headers=me
                )
                elapsed = time.monotonic() - started
        finally:
            await locker.close()
        assert stuck.status_code == 503, stuck.text
        assert stuck.headers["retry-after"]
        assert stuck.json()["code"] == "unavailable"
        assert 1.0 <= elapsed < 5.0
        # the cancelled request left no connection half-used and no lock behind
        after = await client.patch(
            f"/api/threads/{tid}", json={"metadata": {"title": "y"}}, headers=me
        )
        assert after.status_code == 200, after.text
        assert after.json()["version"] == 2
        assert app.state.engine.sync_engine.pool.checkedout() == 0


# --- size limits -------------------------------------------------------------------------------


async def test_limits_are_configurable_and_answer_clearly(
    settings: Settings, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    small = settings.model_copy(update={"max_messages": 3, "max_query_chars": 10})
    me = auth(new_user("limited"))
    messages = [{"role": "user", "content": str(i)} for i in range(4)]
    async with serving(small) as (app, client):
        too_many = await client.post(
            "/api/threads", json={"conversation": {"messages": messages}}, headers=me
        )
        assert too_many.status_code == 413
        assert "at most 3 messages" in too_many.json()["detail"]
        long_q = await client.get("/api/threads/search", params={"q": "x" * 11}, headers=me)
        assert long_q.status_code == 400
        assert "10 characters" in long_q.json()["detail"]
        ok_q = await client.get("/api/threads/search", params={"q": "x" * 10}, headers=me)
        assert ok_q.status_code == 200
        parameters = app.openapi()["paths"]["/api/threads/search"]["get"]["parameters"]
        q = next(p for p in parameters if p["name"] == "q")
        assert q["schema"]["maxLength"] == 10


# --- JWKS rotation -----------------------------------------------------------------------------


def jwk(key: ec.EllipticCurvePrivateKey, kid: str) -> dict[str, Any]:
    numbers = key.public_key().public_numbers()
    return {
        "kty": "EC",
        "crv": "P-256",
        "kid": kid,
        "alg": "ES256",
        "use": "sig",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }


def write_jwks(path: Path, *keys: dict[str, Any]) -> None:
    """Replace the file atomically, as a deployment would (write beside it, rename over it)."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps({"keys": list(keys)}))
    os.replace(partial, path)


async def test_jwks_file_is_reloaded_when_it_changes(
    settings: Settings, tmp_path: Path, new_user: Callable[[str], str]
) -> None:
    old, new = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "jwks.json"
    write_jwks(path, jwk(old, "2026-01"))
    rotated = Settings(
        database_url=settings.database_url,
        jwt_algorithms="ES256",
        jwt_jwks=path,
        rate_limit="off",
        _env_file=None,
    )
    sub = new_user("rotating")

    def bearer(key: ec.EllipticCurvePrivateKey, kid: str) -> dict[str, str]:
        token = jwt.encode(claims(sub=sub), pem(key), algorithm="ES256", headers={"kid": kid})
        return {"Authorization": f"Bearer {token}"}

    async with serving(rotated) as (_, client):

        async def status(headers: dict[str, str]) -> int:
            return (await client.get("/api/threads", headers=headers)).status_code

        assert await status(bearer(old, "2026-01")) == 200
        assert await status(bearer(new, "2026-02")) == 401
        # step 1: publish the new key beside the old one; no restart
        write_jwks(path, jwk(old, "2026-01"), jwk(new, "2026-02"))
        assert await status(bearer(new, "2026-02")) == 200
        assert await status(bearer(old, "2026-01")) == 200
        # a half-written file keeps the keys read last
        path.write_text('{"keys": [')
        assert await status(bearer(new, "2026-02")) == 200
        # step 2: retire the old key
        write_jwks(path, jwk(new, "2026-02"))
        assert await status(bearer(old, "2026-01")) == 401
        assert await status(bearer(new, "2026-02")) == 200


# --- security headers --------------------------------------------------------------------------

SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/threads"),
        ("GET", f"/api/threads/{ThreadId.new()}"),  # 404 problem
        ("POST", "/api/threads"),  # 401 problem (anonymous write)
        ("GET", "/api/threads/search?q="),  # 401 problem (anonymous search)
        ("DELETE", "/api/threads"),  # 405
        ("GET", "/health"),
        ("GET", "/openapi.json"),
        ("GET", "/metrics"),
    ],
)
async def test_every_answer_carries_the_security_headers(
    client: httpx.AsyncClient, auth: TokenFactory, method: str, path: str
) -> None:
    headers = auth("reader") if path == "/api/threads" else {}
    response = await client.request(method, path, headers=headers)
    for name, value in SECURITY_HEADERS.items():
        assert response.headers[name] == value, (name, response.status_code)
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "frame-ancestors 'none'" in csp
    assert response.headers["x-request-id"]


async def test_interactive_docs_have_a_strict_csp_of_their_own(client: httpx.AsyncClient) -> None:
    response = await client.get("/docs")
    assert response.status_code == 200
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self';" in csp  # no CDN, no inline script (app/web/docs.py)
    assert "unsafe" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["cache-control"] == "no-store"
    assert "swagger-ui" in response.text


async def test_concurrent_requests_keep_their_own_request_ids(client: httpx.AsyncClient) -> None:
    ids = [f"req-{i}" for i in range(20)]
    responses = await asyncio.gather(
        *(client.get("/health", headers={"X-Request-ID": i}) for i in ids)
    )
    assert [r.headers["x-request-id"] for r in responses] == ids
