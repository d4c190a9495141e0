"""Bearer authentication (API.md section 3): every bad token is a 401 with
``WWW-Authenticate: Bearer error="invalid_token"`` on every endpoint; issuer/audience, RS256
public keys, ES256 JWKS files and ``loomsync-server token create`` work when configured."""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jose import jwt
from typer.testing import CliRunner

from app.auth import create_token
from app.cli import cli, parse_ttl
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from tests.apps import serving
from tests.conftest import TokenFactory

INVALID_TOKEN = 'Bearer error="invalid_token"'
ISSUER, AUDIENCE = "https://id.example.test", "loomsync-tests"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def hand_made(header: dict[str, Any], payload: dict[str, Any], signature: bytes = b"") -> str:
    """A compact JWS built without a library (so it can be as wrong as a test needs)."""
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}"
    return f"{signing_input}.{b64url(signature)}"


def claims(**changes: Any) -> dict[str, Any]:
    """Valid claims for user ``mallory``; a change to None removes that claim."""
    now = int(time.time())
    base: dict[str, Any] = {"sub": "mallory", "iat": now, "exp": now + 3600, **changes}
    return {k: v for k, v in base.items() if v is not None}


def pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def public_pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@functools.cache
def rsa_key(name: str) -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@functools.cache
def ec_key(name: str) -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def hs(payload: dict[str, Any], secret: str, algorithm: str = "HS256") -> str:
    return str(jwt.encode(payload, secret, algorithm=algorithm))


def tampered(secret: str) -> str:
    head, _, signature = hs(claims(), secret).split(".")
    return f"{head}.{b64url(json.dumps(claims(sub='admin')).encode())}.{signature}"


# name -> (secret -> Authorization header value)
BAD_TOKENS: dict[str, Callable[[str], str]] = {
    "expired": lambda s: "Bearer " + hs(claims(exp=int(time.time()) - 60), s),
    "alg_none": lambda _: "Bearer " + hand_made({"alg": "none", "typ": "JWT"}, claims()),
    "other_key": lambda _: "Bearer " + hs(claims(), secrets.token_urlsafe(48)),
    "hs512_right_secret": lambda s: "Bearer " + hs(claims(), s, "HS512"),
    "rs256": lambda _: "Bearer " + jwt.encode(claims(), pem(rsa_key("a")), algorithm="RS256"),
    "tampered_payload": lambda s: "Bearer " + tampered(s),
    "missing_sub": lambda s: "Bearer " + hs(claims(sub=None), s),
    "sub_not_string": lambda s: "Bearer " + hs(claims(sub=123), s),
    "sub_empty": lambda s: "Bearer " + hs(claims(sub=""), s),
    "missing_exp": lambda s: "Bearer " + hs(claims(exp=None), s),
    "exp_not_number": lambda s: "Bearer " + hs(claims(exp="tomorrow"), s),
    "org_not_string": lambda s: "Bearer " + hs(claims(org=7), s),
    "roles_not_list": lambda s: "Bearer " + hs(claims(roles="admin"), s),
    "garbage": lambda _: "Bearer garbage",
    "garbage_three_parts": lambda _: "Bearer a.b.c",
    "empty_bearer": lambda _: "Bearer ",
    "basic_scheme": lambda _: "Basic xyz",
}

# name -> (method, path, JSON body) with {id} an existing thread's id
ENDPOINTS: dict[str, tuple[str, str, Any]] = {
    "get_thread": ("GET", "/api/threads/{id}", None),
    "put_thread": ("PUT", "/api/threads/{id}", {"metadata": {"title": "x"}}),
    "patch_thread": ("PATCH", "/api/threads/{id}", {"metadata": {"title": "x"}}),
    "delete_thread": ("DELETE", "/api/threads/{id}", None),
    "create_thread": ("POST", "/api/threads", {}),
    "append_messages": ("POST", "/api/threads/{id}/messages", {"messages": []}),
    "fork_thread": ("POST", "/api/threads/{id}/fork", {}),
    "list_threads": ("GET", "/api/threads", None),
}


def assert_invalid_token(r: httpx.Response) -> None:
    assert r.status_code == 401, r.text
    assert r.headers["www-authenticate"] == INVALID_TOKEN
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["code"] == "unauthorized"
    assert r.json()["status"] == 401


def asymmetric_settings(
    settings: Settings, algorithm: str, public_key: Path | None = None, jwks: Path | None = None
) -> Settings:
    """Fresh settings (not a copy: ``algorithms`` is cached) accepting only ``algorithm``."""
    return Settings(
        database_url=settings.database_url,
        jwt_algorithms=algorithm,
        jwt_public_key=public_key,
        jwt_jwks=jwks,
        _env_file=None,
    )


async def create_as(client: httpx.AsyncClient, token: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return await client.post("/api/threads", json={}, headers=headers)


@pytest.mark.parametrize("token", BAD_TOKENS)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_bad_token_gets_401_invalid_token(
    client: httpx.AsyncClient,
    settings: Settings,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    endpoint: str,
    token: str,
) -> None:
    owner = auth(new_user("olivia"))
    tid = ThreadId.new()
    stored = await client.put(f"/api/threads/{tid}", json={"visibility": "public"}, headers=owner)
    assert stored.status_code == 201, stored.text
    method, path, body = ENDPOINTS[endpoint]
    assert settings.jwt_secret is not None
    headers = {"Authorization": BAD_TOKENS[token](settings.jwt_secret.get_secret_value())}
    headers["If-Match"] = '"1"'
    r = await client.request(method, path.format(id=tid), json=body, headers=headers)
    assert_invalid_token(r)
    after = await client.get(f"/api/threads/{tid}")
    assert after.json()["version"] == 1


async def test_valid_token_creates_thread_owned_by_sub(
    client: httpx.AsyncClient, settings: Settings, new_user: Callable[[str], str]
) -> None:
    sub = new_user("alice")
    r = await create_as(client, create_token(settings, sub, org="acme"))
    assert r.status_code == 201, r.text
    assert (r.json()["owner_id"], r.json()["org_id"]) == (sub, "acme")


async def test_token_with_configured_issuer_and_audience_is_accepted(
    settings: Settings, new_user: Callable[[str], str]
) -> None:
    configured = settings.model_copy(update={"jwt_issuer": ISSUER, "jwt_audience": AUDIENCE})
    sub = new_user("alice")
    async with serving(configured) as client:
        r = await create_as(client, create_token(configured, sub))
    assert r.status_code == 201, r.text
    assert r.json()["owner_id"] == sub


@pytest.mark.parametrize(
    "changes",
    [
        pytest.param({"iss": "https://evil.example.test"}, id="wrong_issuer"),
        pytest.param({"iss": None}, id="missing_issuer"),
        pytest.param({"aud": "someone-else"}, id="wrong_audience"),
        pytest.param({"aud": None}, id="missing_audience"),
    ],
)
async def test_issuer_and_audience_are_checked_when_configured(
    settings: Settings, changes: dict[str, Any]
) -> None:
    configured = settings.model_copy(update={"jwt_issuer": ISSUER, "jwt_audience": AUDIENCE})
    assert settings.jwt_secret is not None
    token = hs(
        claims(**{"iss": ISSUER, "aud": AUDIENCE, **changes}),
        settings.jwt_secret.get_secret_value(),
    )
    async with serving(configured) as client:
        r = await client.get("/api/threads", headers={"Authorization": f"Bearer {token}"})
    assert_invalid_token(r)


@pytest.fixture
def rs256_settings(settings: Settings, tmp_path: Path) -> Settings:
    path = tmp_path / "public.pem"
    path.write_bytes(public_pem(rsa_key("server")))
    return asymmetric_settings(settings, "RS256", public_key=path)


async def test_rs256_token_is_verified_with_public_key_file(
    rs256_settings: Settings, new_user: Callable[[str], str]
) -> None:
    sub = new_user("alice")
    token = jwt.encode(claims(sub=sub), pem(rsa_key("server")), algorithm="RS256")
    async with serving(rs256_settings) as client:
        r = await create_as(client, token)
    assert r.status_code == 201, r.text
    assert r.json()["owner_id"] == sub


async def test_rs256_token_signed_by_another_key_is_refused(rs256_settings: Settings) -> None:
    token = jwt.encode(claims(), pem(rsa_key("intruder")), algorithm="RS256")
    async with serving(rs256_settings) as client:
        assert_invalid_token(await create_as(client, token))


async def test_hs256_token_keyed_with_the_public_key_is_refused(rs256_settings: Settings) -> None:
    header = {"alg": "HS256", "typ": "JWT"}
    unsigned = hand_made(header, claims()).rsplit(".", 1)[0]
    mac = hmac.new(public_pem(rsa_key("server")), unsigned.encode(), hashlib.sha256).digest()
    async with serving(rs256_settings) as client:
        assert_invalid_token(await create_as(client, f"{unsigned}.{b64url(mac)}"))


@pytest.fixture
def es256_settings(settings: Settings, tmp_path: Path) -> Settings:
    numbers = ec_key("server").public_key().public_numbers()
    jwk = {
        "kty": "EC",
        "crv": "P-256",
        "kid": "server-1",
        "alg": "ES256",
        "use": "sig",
        "x": b64url(numbers.x.to_bytes(32, "big")),
        "y": b64url(numbers.y.to_bytes(32, "big")),
    }
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk]}))
    return asymmetric_settings(settings, "ES256", jwks=path)


async def test_es256_token_is_verified_with_jwks_file(
    es256_settings: Settings, new_user: Callable[[str], str]
) -> None:
    sub = new_user("alice")
    key = pem(ec_key("server"))
    token = jwt.encode(claims(sub=sub), key, algorithm="ES256", headers={"kid": "server-1"})
    async with serving(es256_settings) as client:
        r = await create_as(client, token)
    assert r.status_code == 201, r.text
    assert r.json()["owner_id"] == sub


async def test_es256_token_signed_by_key_outside_jwks_is_refused(es256_settings: Settings) -> None:
    key = pem(ec_key("intruder"))
    token = jwt.encode(claims(), key, algorithm="ES256", headers={"kid": "server-1"})
    async with serving(es256_settings) as client:
        assert_invalid_token(await create_as(client, token))


async def test_es256_token_with_unknown_kid_is_refused(es256_settings: Settings) -> None:
    key = pem(ec_key("server"))
    token = jwt.encode(claims(), key, algorithm="ES256", headers={"kid": "retired-0"})
    async with serving(es256_settings) as client:
        assert_invalid_token(await create_as(client, token))


async def test_anonymous_write_gets_bare_bearer_challenge(client: httpx.AsyncClient) -> None:
    r = await client.post("/api/threads", json={})
    assert r.status_code == 401
    assert r.headers["www-authenticate"] == 'Bearer realm="loomsync"'  # RFC 6750 section 3.1
    assert r.json()["code"] == "unauthorized"


@pytest.mark.parametrize("endpoint", ENDPOINTS)
async def test_two_authorization_lines_are_refused(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str], endpoint: str
) -> None:
    """Two valid tokens in two header lines: whose request is it? 401, nothing written (the
    first line used to win silently)."""
    owner, other = auth(new_user("olivia")), auth(new_user("oscar"))
    tid = ThreadId.new()
    stored = await client.put(f"/api/threads/{tid}", json={"visibility": "public"}, headers=owner)
    assert stored.status_code == 201, stored.text
    method, path, body = ENDPOINTS[endpoint]
    lines = [("Authorization", owner["Authorization"]), ("Authorization", other["Authorization"])]
    r = await client.request(
        method, path.format(id=tid), json=body, headers=[*lines, ("If-Match", '"1"')]
    )
    assert_invalid_token(r)
    assert "one Authorization header" in r.json()["detail"]
    assert (await client.get(f"/api/threads/{tid}")).json()["version"] == 1


def cli_token(settings: Settings, *args: str) -> str:
    assert settings.jwt_secret is not None
    env = {
        "LOOMSYNC_JWT_SECRET": settings.jwt_secret.get_secret_value(),
        "LOOMSYNC_JWT_ALGORITHMS": "HS256",
        "LOOMSYNC_JWT_ISSUER": None,
        "LOOMSYNC_JWT_AUDIENCE": None,
        "LOOMSYNC_ENV": None,
    }
    result = CliRunner().invoke(cli, ["token", "create", *args], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


async def test_cli_token_is_accepted_with_its_sub_and_org(
    client: httpx.AsyncClient,
    settings: Settings,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    sub, org = new_user("x"), new_org("y")
    token = cli_token(settings, "--sub", sub, "--org", org, "--role", "support", "--ttl", "1h")
    r = await create_as(client, token)
    assert r.status_code == 201, r.text
    assert (r.json()["owner_id"], r.json()["org_id"]) == (sub, org)


async def test_cli_token_carries_support_role(
    client: httpx.AsyncClient,
    settings: Settings,
    auth: TokenFactory,
    new_user: Callable[[str], str],
) -> None:
    tid = ThreadId.new()
    body = {"visibility": "private", "is_shared_with_support": True}
    stored = await client.put(f"/api/threads/{tid}", json=body, headers=auth(new_user("olivia")))
    assert stored.status_code == 201, stored.text
    token = cli_token(settings, "--sub", new_user("x"), "--org", "y", "--role", "support")
    r = await client.get(f"/api/threads/{tid}", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.text


def test_cli_token_ttl_sets_expiry(settings: Settings) -> None:
    token = cli_token(settings, "--sub", "x", "--org", "y", "--role", "support", "--ttl", "1h")
    payload = jwt.get_unverified_claims(token)
    assert payload["exp"] - payload["iat"] == 3600
    assert payload["roles"] == ["support"]


def test_cli_token_create_refuses_bad_ttl(settings: Settings) -> None:
    assert settings.jwt_secret is not None
    env = {"LOOMSYNC_JWT_SECRET": settings.jwt_secret.get_secret_value()}
    result = CliRunner().invoke(cli, ["token", "create", "--sub", "x", "--ttl", "1y"], env=env)
    assert result.exit_code == 2
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("ttl", "seconds"),
    [
        ("30d", 30 * 86400),
        ("12h", 43200),
        ("90m", 5400),
        ("45s", 45),
        ("2w", 1209600),
        ("600", 600),
    ],
)
def test_parse_ttl_accepts_documented_forms(ttl: str, seconds: int) -> None:
    assert parse_ttl(ttl) == seconds


@pytest.mark.parametrize(
    "ttl", ["", "0", "0d", "-1d", "1y", "1.5h", "d", "h1", "1h30m", "10 d", "thirty", "1D"]
)
def test_parse_ttl_rejects_bad_forms(ttl: str) -> None:
    with pytest.raises(typer.BadParameter):
        parse_ttl(ttl)


def test_cli_token_create_refuses_blank_sub(settings: Settings) -> None:
    from typer.testing import CliRunner

    from app.cli import cli

    secret = settings.jwt_secret.get_secret_value() if settings.jwt_secret else ""
    result = CliRunner().invoke(
        cli, ["token", "create", "--sub", " "], env={"LOOMSYNC_JWT_SECRET": secret}
    )
    assert result.exit_code == 2


def test_cli_token_create_without_any_secret_refuses(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from app.cli import cli

    env = {
        "LOOMSYNC_DATA_DIR": str(tmp_path / "nothing-here"),
        "LOOMSYNC_JWT_SECRET": None,
        "LOOMSYNC_DATABASE_URL": None,
    }
    result = CliRunner().invoke(cli, ["token", "create", "--sub", "alice"], env=env)
    assert result.exit_code == 2
    assert "No signing secret" in result.output
    assert not (tmp_path / "nothing-here" / "jwt_secret").exists()
