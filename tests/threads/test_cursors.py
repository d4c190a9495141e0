"""Cursors are client input (issue 11, item 1; API.md section 6: "Cursors are opaque: one the
server did not issue answers 400"). Every listing that takes a ``cursor`` (threads, search,
audit) answers 400 ``invalid_request`` to any value it did not issue, never 500; issued
cursors are signed, so a tampered one is refused before it is parsed."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jose import jwt
from pydantic import SecretStr

from app.auth import create_token
from app.config import Settings
from app.errors import BadRequest
from app.main import create_app
from app.threads.cursors import CursorCodec
from tests.servers import app_env, uvicorn_server

#: name -> (path, extra query parameters); each is walked by a caller who can see two rows.
LISTINGS = {
    "threads": ("/api/threads", {}),
    "search": ("/api/threads/search", {"q": "cursor"}),
    "audit": ("/api/audit", {}),
}
#: The 400's detail (tests/test_schema_fuzz.py reads it too) and the longest cursor accepted.
NOT_ISSUED = "The cursor is not one this server issued."
MAX_CURSOR_CHARS = 512
TS = "2026-01-01T00:00:00Z"
ID = str(uuid.uuid4())


def unsigned(payload_text: str) -> str:
    """A cursor in the unsigned format this server used to issue: base64url of JSON text."""
    return base64.urlsafe_b64encode(payload_text.encode()).decode().rstrip("=")


def key_of(listing: str, *slots: str) -> str:
    """JSON text of a sort key for ``listing``: search cursors start with a score."""
    return "[" + ",".join((["1.5"] if listing == "search" else []) + list(slots)) + "]"


#: Payloads (JSON text) that are not sort keys: wrong types in every slot, timestamps that
#: overflow once shifted to UTC, huge numbers, NaN/Infinity, deep nesting, wrong shapes.
HOSTILE_KEYS = {
    "year 1 with a positive offset": lambda k: key_of(k, '"0001-01-01T00:00:00+01:00"', f'"{ID}"'),
    "year 9999 with a negative offset": lambda k: key_of(
        k, '"9999-12-31T23:59:59.999999-01:00"', f'"{ID}"'
    ),
    "number as timestamp": lambda k: key_of(k, "20260101", f'"{ID}"'),
    "number as id": lambda k: key_of(k, f'"{TS}"', "123"),
    "object as id": lambda k: key_of(k, f'"{TS}"', '{"a":1}'),
    "list as id": lambda k: key_of(k, f'"{TS}"', "[1]"),
    "null as id": lambda k: key_of(k, f'"{TS}"', "null"),
    "bool as id": lambda k: key_of(k, f'"{TS}"', "true"),
    "uppercase id": lambda k: key_of(k, f'"{TS}"', f'"{ID.upper()}"'),
    "naive timestamp": lambda k: key_of(k, '"2026-01-01T00:00:00"', f'"{ID}"'),
    "score NaN": lambda _k: f'[NaN,"{TS}","{ID}"]',
    "score Infinity": lambda _k: f'[Infinity,"{TS}","{ID}"]',
    "score 1e400": lambda _k: f'[1e400,"{TS}","{ID}"]',
    "score a 400-digit integer": lambda _k: f'[{"9" * 400},"{TS}","{ID}"]',
    "score true": lambda _k: f'[true,"{TS}","{ID}"]',
    "score a string": lambda _k: f'["1.5","{TS}","{ID}"]',
    "deep nesting": lambda _k: "[" * 350 + "]" * 350,
    "an object": lambda _k: "{}",
    "one slot short": lambda _k: f'["{TS}"]',
    "one slot more": lambda k: key_of(k, f'"{TS}"', f'"{ID}"', "1"),
    "lone surrogate": lambda k: key_of(k, f'"{TS}"', '"\\ud800"'),
}
#: Strings that are not even base64url, or too long to be issued.
HOSTILE_TEXT = {
    "punctuation": "!!!",
    "percent": "%%%",
    "NUL": "\x00",
    "non-ASCII": "é€",
    "base64 with padding": "e30=",
    "standard base64 alphabet": "ab+/",
    "spaces": "a b",
    "one character": "a",
    "too long": "A" * (MAX_CURSOR_CHARS + 1),
    "far too long": "A" * 20_000,
}


@pytest.fixture(scope="module")
async def walker(app: FastAPI, settings: Settings) -> AsyncIterator[Walker]:
    """An admin with two threads holding the word "cursor" (so every listing has a next page)."""
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver", timeout=60
    ) as client:
        user = f"cursor-walker-{uuid.uuid4().hex[:10]}"
        headers = {"Authorization": f"Bearer {create_token(settings, user, roles=['admin'])}"}
        for _ in range(2):
            made = await client.post(
                "/api/threads", json={"metadata": {"title": "cursor"}}, headers=headers
            )
            assert made.status_code == 201, made.text
        yield Walker(client, headers)


class Walker:
    """Requests as the module's admin: ``page(listing, cursor)`` and ``first_cursor(listing)``."""

    def __init__(self, client: httpx.AsyncClient, headers: dict[str, str]) -> None:
        self.client = client
        self.headers = headers

    async def page(self, listing: str, cursor: str | None = None) -> httpx.Response:
        path, params = LISTINGS[listing]
        query = {**params, "limit": 1, **({"cursor": cursor} if cursor is not None else {})}
        return await self.client.get(path, params=query, headers=self.headers)

    async def first_cursor(self, listing: str) -> str:
        response = await self.page(listing)
        assert response.status_code == 200, response.text
        cursor: str = response.json()["next_cursor"]
        assert cursor
        return cursor


def assert_not_issued(response: httpx.Response) -> None:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["code"] == "invalid_request"
    assert problem["detail"] == NOT_ISSUED


@pytest.mark.parametrize("listing", LISTINGS)
@pytest.mark.parametrize("case", HOSTILE_KEYS)
async def test_unsigned_hostile_sort_key_is_400(walker: Walker, listing: str, case: str) -> None:
    assert_not_issued(await walker.page(listing, unsigned(HOSTILE_KEYS[case](listing))))


@pytest.mark.parametrize("listing", LISTINGS)
@pytest.mark.parametrize("case", HOSTILE_TEXT)
async def test_cursor_that_is_not_base64url_is_400(walker: Walker, listing: str, case: str) -> None:
    assert_not_issued(await walker.page(listing, HOSTILE_TEXT[case]))


@pytest.mark.parametrize("listing", LISTINGS)
async def test_well_formed_but_unsigned_cursor_is_400(walker: Walker, listing: str) -> None:
    """The old unsigned format, holding a sort key that parses: refused, it was not issued."""
    assert_not_issued(await walker.page(listing, unsigned(key_of(listing, f'"{TS}"', f'"{ID}"'))))


@pytest.mark.parametrize("listing", LISTINGS)
async def test_issued_cursor_with_its_payload_changed_is_400(walker: Walker, listing: str) -> None:
    """Keep the tag, change the sort key (a later timestamp): the tag no longer matches."""
    raw = base64.urlsafe_b64decode(await walker.first_cursor(listing) + "==")
    tag, payload = raw[:16], json.loads(raw[16:])
    payload[-2] = "2030-01-01T00:00:00Z"
    forged = base64.urlsafe_b64encode(tag + json.dumps(payload).encode()).decode().rstrip("=")
    assert_not_issued(await walker.page(listing, forged))


@pytest.mark.parametrize("listing", LISTINGS)
async def test_issued_cursor_is_refused_by_another_listing(walker: Walker, listing: str) -> None:
    cursor = await walker.first_cursor(listing)
    for other in set(LISTINGS) - {listing}:
        assert_not_issued(await walker.page(other, cursor))


@pytest.mark.parametrize("listing", LISTINGS)
async def test_empty_cursor_is_the_first_page(walker: Walker, listing: str) -> None:
    """The SDK sends ``cursor=`` for "no cursor" (httpx writes None as empty)."""
    first, empty = await walker.page(listing), await walker.page(listing, "")
    assert empty.status_code == first.status_code == 200, empty.text
    assert empty.json().keys() == first.json().keys()


_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _flip(cursor: str, data: st.DataObject) -> str:
    """``cursor`` with one character replaced by another base64url character."""
    index = data.draw(st.integers(0, len(cursor) - 1))
    replacement = data.draw(st.sampled_from(_ALPHABET.replace(cursor[index], "")))
    return cursor[:index] + replacement + cursor[index + 1 :]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(), children),
    max_leaves=12,
)
_QUERY_TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=700)
_CURSORS = st.one_of(
    _QUERY_TEXT,
    st.from_regex(r"[A-Za-z0-9_-]{1,700}", fullmatch=True),
    _JSON.map(lambda v: unsigned(json.dumps(v))),
    st.lists(_JSON, min_size=2, max_size=3).map(lambda v: unsigned(json.dumps(v))),
    st.binary(min_size=1, max_size=300).map(
        lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")
    ),
)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(listing=st.sampled_from(sorted(LISTINGS)), cursor=_CURSORS, data=st.data())
async def test_no_cursor_string_gets_a_500(
    walker: Walker, listing: str, cursor: str, data: st.DataObject
) -> None:
    """Property: any string, any base64url, any JSON payload, and any one-character change of an
    issued cursor is refused with the same 400."""
    if data.draw(st.booleans(), label="tamper with an issued cursor instead"):
        cursor = _flip(await walker.first_cursor(listing), data)
    assert_not_issued(await walker.page(listing, cursor))


def _same_bytes_twins(cursor: str) -> list[str]:
    """``cursor`` with its last character replaced by each other one that decodes to the same
    bytes (set unused low bits: none when the length is a multiple of 4)."""

    def decode(text: str) -> bytes:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

    head = cursor[:-1]
    return [head + c for c in _ALPHABET if c != cursor[-1] and decode(head + c) == decode(cursor)]


@pytest.mark.parametrize("score", [1.5, 1.25, 1.125])
def test_a_cursor_with_set_padding_bits_is_not_issued(settings: Settings, score: float) -> None:
    """The last character of a cursor whose length is not a multiple of 4 carries 2 or 4 unused
    bits; another character that differs only there decodes to the same bytes, but the server
    did not issue it: 400 (keys of three lengths: one
    without spare bits, two with)."""
    codec = CursorCodec(settings)
    uid = uuid.UUID(ID)
    cursor = codec.encode("threads", score, uid)
    assert codec.decode("threads", cursor, float, uuid.UUID) == (score, uid)
    twins = _same_bytes_twins(cursor)
    assert bool(twins) == (len(cursor) % 4 != 0)
    for twin in twins:
        with pytest.raises(BadRequest):
            codec.decode("threads", twin, float, uuid.UUID)


# The key: shared by every app built from the same settings, different for another secret.


async def _second_page(app: FastAPI, headers: dict[str, str], cursor: str) -> httpx.Response:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://testserver"
    ) as client:
        return await client.get("/api/threads", params={"cursor": cursor}, headers=headers)


@pytest.fixture
async def other_app() -> AsyncIterator[Callable[[Settings], FastAPI]]:
    """``other_app(settings)``: a second app (a restart, another worker), disposed afterwards."""
    made: list[FastAPI] = []

    def make(settings: Settings) -> FastAPI:
        made.append(create_app(settings))
        return made[-1]

    yield make
    for application in made:
        await application.state.engine.dispose()


async def test_cursor_is_accepted_by_a_restarted_server(
    walker: Walker, settings: Settings, other_app: Callable[[Settings], FastAPI]
) -> None:
    cursor = await walker.first_cursor("threads")
    restarted = other_app(settings.model_copy())
    response = await _second_page(restarted, walker.headers, cursor)
    assert response.status_code == 200, response.text


async def test_cursor_signed_with_another_cursor_secret_is_400(
    walker: Walker, settings: Settings, other_app: Callable[[Settings], FastAPI]
) -> None:
    cursor = await walker.first_cursor("threads")
    rekeyed = other_app(settings.model_copy(update={"cursor_secret": SecretStr("k" * 48)}))
    assert_not_issued(await _second_page(rekeyed, walker.headers, cursor))


def _es256(tmp_path: Path, data_dir: Path, database_url: str) -> tuple[Settings, str]:
    """Settings accepting only ES256 tokens (no shared secret at all), and a token for them."""
    key = ec.generate_private_key(ec.SECP256R1())
    public = tmp_path / "public.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    token = jwt.encode({"sub": f"es-{uuid.uuid4().hex}", "exp": 2**40}, private, algorithm="ES256")
    config = Settings(  # type: ignore[call-arg]
        database_url=database_url,
        jwt_algorithms="ES256",
        jwt_public_key=public,
        data_dir=data_dir,
        rate_limit="off",
        _env_file=None,
    )
    return config, token


async def test_without_any_secret_workers_sharing_a_data_dir_accept_each_others_cursors(
    tmp_path: Path, settings: Settings, other_app: Callable[[Settings], FastAPI]
) -> None:
    """RS*/ES*-only: the key lives in LOOMSYNC_DATA_DIR/cursor_secret (0600), so every worker and
    restart of the host shares it; a host with another data dir does not."""
    assert settings.database_url is not None
    config, token = _es256(tmp_path, tmp_path / "data", settings.database_url)
    headers = {"Authorization": f"Bearer {token}"}
    first = other_app(config)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=first), base_url="http://testserver"
    ) as client:
        for _ in range(2):
            assert (await client.post("/api/threads", json={}, headers=headers)).status_code == 201
        page = await client.get("/api/threads", params={"limit": 1}, headers=headers)
    cursor = page.json()["next_cursor"]
    assert cursor
    assert (tmp_path / "data" / "cursor_secret").stat().st_mode & 0o777 == 0o600
    worker = other_app(config.model_copy())
    assert (await _second_page(worker, headers, cursor)).status_code == 200
    elsewhere = other_app(config.model_copy(update={"data_dir": tmp_path / "other"}))
    assert_not_issued(await _second_page(elsewhere, headers, cursor))


def test_placeholder_cursor_secret_is_refused_outside_development() -> None:
    with pytest.raises(ValueError, match="LOOMSYNC_CURSOR_SECRET"):
        Settings(cursor_secret="secret", _env_file=None)  # type: ignore[call-arg]


@pytest.mark.parametrize("listing", LISTINGS)
async def test_issued_cursor_is_accepted_back(walker: Walker, listing: str) -> None:
    response = await walker.page(listing, await walker.first_cursor(listing))
    assert response.status_code == 200, response.text


# Through a real uvicorn: query strings whose bytes are not UTF-8, not valid percent-encoding,
# or name the cursor twice reach the codec as uvicorn and Starlette decode them.

RAW_QUERIES = ["cursor=%FF%FE", "cursor=%zz", "cursor=%00", "cursor=a&cursor=%C3%A9", "cursor=+"]


@pytest.fixture(scope="module")
def served(database_url: str, settings: Settings) -> Iterator[tuple[str, dict[str, str]]]:
    """A uvicorn process serving the app, and an admin's headers."""
    token = create_token(settings, f"raw-{uuid.uuid4().hex[:10]}", roles=["admin"])
    with uvicorn_server(app_env(database_url, settings)) as running:
        yield running.base_url, {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("listing", LISTINGS)
@pytest.mark.parametrize("query", RAW_QUERIES)
def test_raw_cursor_bytes_over_real_http_are_400(
    served: tuple[str, dict[str, str]], listing: str, query: str
) -> None:
    base_url, headers = served
    path, params = LISTINGS[listing]
    extra = "".join(f"&{k}={v}" for k, v in params.items())
    with httpx.Client(base_url=base_url, timeout=30) as http:
        assert_not_issued(http.get(httpx.URL(f"{path}?{query}{extra}"), headers=headers))
