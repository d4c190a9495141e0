"""Token claims are bounded (API.md section 3, issue 11 item 3): a validly signed token whose
``sub``, ``org`` or ``roles`` is empty, too long or of the wrong type, or that names an audience
or issuer this server is not configured with, is a 401 ``invalid_token``, never a 500 and never a
way in; ``token create`` refuses what the server would refuse; ``serve`` warns when a public key
verifies tokens that no audience or issuer scopes to this server.

Also refused: a header marking any extension critical (``crit``, RFC 7515 section 4.1.11: this
server understands none), an ``iat`` over a minute in the future or not a number; and
``token create`` mints no token living over 10 years, and warns about a role that means
nothing to the server."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from jose import jwt
from typer.testing import CliRunner

from app import auth
from app.cli import cli
from app.config import Settings
from tests.servers import Server, free_port, wait_until_ready
from tests.test_auth import (
    assert_invalid_token,
    asymmetric_settings,
    claims,
    hs,
    pem,
    public_pem,
    rsa_key,
    serving,
)

SERVE = Path(sys.executable).parent / "loomsync-server"
#: 10,000 characters that do not compress: PostgreSQL compresses index entries, so a repeated
#: letter would fit in a btree row, and this does not (the 500 of issue 11 item 3).
LONG = secrets.token_hex(5_000)

# name -> claims changed from a valid token's; every one is refused with 401 invalid_token
BAD_CLAIMS: dict[str, dict[str, Any]] = {
    "sub_10kb": {"sub": LONG},
    "sub_256": {"sub": "s" * 256},
    "sub_blank": {"sub": "   "},
    "sub_256_non_ascii": {"sub": "\N{SNOWMAN}" * 256},
    "org_10kb": {"org": LONG},
    "org_256": {"org": "o" * 256},
    "org_empty": {"org": ""},
    "org_null": {"org": None},  # present, and not a string
    "org_list": {"org": ["acme"]},
    "org_nul": {"org": "ac\x00me"},
    "roles_10k_entries": {"roles": ["reader"] * 10_000},
    "roles_33_entries": {"roles": [f"r{i}" for i in range(33)]},
    "role_10kb": {"roles": [LONG]},
    "role_65": {"roles": ["r" * 65]},
    "role_empty": {"roles": [""]},
    "role_not_string": {"roles": [{"name": "admin"}]},
    "roles_object": {"roles": {"admin": True}},
    "roles_null": {"roles": None},
    "audience_not_configured": {"aud": "another-service"},
    "audience_list_not_configured": {"aud": ["another-service", "loomsync"]},
    "issuer_not_configured": {"iss": "https://id.example.test"},
    "issuer_null_not_configured": {"iss": None},
    "iat_a_day_ahead": {"iat": int(time.time()) + 86400},
    "iat_past_year_9999": {"iat": 10**30},
    "iat_string": {"iat": str(int(time.time()))},
    "iat_infinite": {"iat": float("inf")},
}


def signed(settings: Settings, **changes: Any) -> dict[str, str]:
    """Authorization headers for an HS256 token with this server's secret and ``changes``
    applied to valid claims (a value of None is kept: a claim present as JSON null)."""
    assert settings.jwt_secret is not None
    payload = {**claims(), **changes}
    return {"Authorization": "Bearer " + hs(payload, settings.jwt_secret.get_secret_value())}


@pytest.mark.parametrize("change", BAD_CLAIMS)
async def test_out_of_bounds_claims_get_401_on_create_and_list(
    client: httpx.AsyncClient, settings: Settings, change: str
) -> None:
    headers = signed(settings, **BAD_CLAIMS[change])
    assert_invalid_token(await client.post("/api/threads", json={}, headers=headers))
    assert_invalid_token(await client.get("/api/threads", headers=headers))


async def test_sub_and_org_of_255_characters_are_accepted_and_256_refused(
    client: httpx.AsyncClient, settings: Settings, new_user: Callable[[str], str]
) -> None:
    base = new_user("u")
    for char in ("a", "\N{PILE OF POO}"):  # characters, not bytes: 255 emoji are 1020 bytes
        sub = (base + char * 255)[:255]
        org = char * 255
        created = await client.post(
            "/api/threads", json={}, headers=signed(settings, sub=sub, org=org)
        )
        assert created.status_code == 201, created.text
        assert (created.json()["owner_id"], created.json()["org_id"]) == (sub, org)
        listed = await client.get("/api/threads", headers=signed(settings, sub=sub, org=org))
        assert [t["id"] for t in listed.json()["threads"]] == [created.json()["id"]]
        too_long = signed(settings, sub=sub, org=org + char)
        assert_invalid_token(await client.post("/api/threads", json={}, headers=too_long))


async def test_32_short_roles_are_accepted_and_support_still_counts(
    client: httpx.AsyncClient, settings: Settings, new_user: Callable[[str], str]
) -> None:
    owner = signed(settings, sub=new_user("olivia"))
    body = {"visibility": "private", "is_shared_with_support": True}
    tid = (await client.post("/api/threads", json=body, headers=owner)).json()["id"]
    roles = ["support", *(f"{i:02d}" + "r" * 62 for i in range(31))]
    reader = signed(settings, sub=new_user("sue"), roles=roles)
    assert (await client.get(f"/api/threads/{tid}", headers=reader)).status_code == 200
    too_many = signed(settings, sub=new_user("sue"), roles=[*roles, "one-more"])
    assert_invalid_token(await client.get(f"/api/threads/{tid}", headers=too_many))


async def test_audience_and_issuer_must_match_when_configured(
    settings: Settings, new_user: Callable[[str], str]
) -> None:
    issuer, audience = "https://id.example.test", "loomsync"
    configured = settings.model_copy(update={"jwt_issuer": issuer, "jwt_audience": audience})
    sub = new_user("alice")
    good = signed(settings, sub=sub, iss=issuer, aud=["another-service", audience])
    async with serving(configured) as client:
        r = await client.post("/api/threads", json={}, headers=good)
        assert r.status_code == 201, r.text
        for wrong in ({"iss": [issuer]}, {"iss": issuer + "/"}, {"aud": [audience.upper()]}):
            bad = signed(settings, **{"sub": sub, "iss": issuer, "aud": audience, **wrong})
            assert_invalid_token(await client.post("/api/threads", json={}, headers=bad))
    # the same token, minted for this server's audience, does not open an unconfigured server
    async with serving(settings) as client:
        assert_invalid_token(await client.post("/api/threads", json={}, headers=good))


async def test_rs256_token_for_another_service_does_not_open_an_unscoped_server(
    settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "public.pem"
    path.write_bytes(public_pem(rsa_key("provider")))
    key = pem(rsa_key("provider"))
    foreign = jwt.encode(claims(aud="payroll", iss="https://idp.test"), key, algorithm="RS256")
    async with serving(asymmetric_settings(settings, "RS256", public_key=path)) as client:
        headers = {"Authorization": f"Bearer {foreign}"}
        assert_invalid_token(await client.post("/api/threads", json={}, headers=headers))


def token_env(settings: Settings) -> dict[str, str | None]:
    assert settings.jwt_secret is not None
    return {
        "LOOMSYNC_JWT_SECRET": settings.jwt_secret.get_secret_value(),
        "LOOMSYNC_JWT_ALGORITHMS": "HS256",
        "LOOMSYNC_JWT_ISSUER": None,
        "LOOMSYNC_JWT_AUDIENCE": None,
        "LOOMSYNC_ENV": None,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--sub", "s" * 256], "--sub is 256 characters long", id="sub_256"),
        pytest.param(["--sub", LONG], "--sub is 10000 characters long", id="sub_10kb"),
        pytest.param(["--sub", "x", "--org", "o" * 256], "--org is 256 characters", id="org"),
        pytest.param(["--sub", "x", "--org", ""], "--org must not be empty", id="org_empty"),
        pytest.param(
            ["--sub", "x", "--role", "r" * 65], "--role: a role is 65 characters", id="role"
        ),
        pytest.param(
            ["--sub", "x", *[a for i in range(33) for a in ("--role", f"r{i}")]],
            "at most 32 roles",
            id="roles_33",
        ),
    ],
)
def test_cli_token_create_refuses_claims_the_server_refuses(
    settings: Settings, args: list[str], message: str
) -> None:
    result = CliRunner().invoke(cli, ["token", "create", *args], env=token_env(settings))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert message in " ".join(result.stderr.split())  # rich wraps long lines
    assert "the server refuses such a token" in " ".join(result.stderr.split())


def test_cli_token_of_255_characters_is_minted(settings: Settings) -> None:
    args = ["token", "create", "--sub", "s" * 255, "--org", "o" * 255]
    result = CliRunner().invoke(cli, args, env=token_env(settings))
    assert result.exit_code == 0, result.output
    payload = jwt.get_unverified_claims(result.stdout.strip())
    assert (payload["sub"], payload["org"]) == ("s" * 255, "o" * 255)
    assert "iss" not in payload
    assert "aud" not in payload


@pytest.mark.parametrize(
    ("changes", "missing"),
    [
        pytest.param({}, ["LOOMSYNC_JWT_AUDIENCE", "LOOMSYNC_JWT_ISSUER"], id="neither"),
        pytest.param({"jwt_issuer": "https://idp"}, ["LOOMSYNC_JWT_AUDIENCE"], id="no_audience"),
        pytest.param({"jwt_audience": "loomsync"}, ["LOOMSYNC_JWT_ISSUER"], id="no_issuer"),
        pytest.param({"jwt_audience": "loomsync", "jwt_issuer": "https://idp"}, [], id="both"),
    ],
)
def test_unscoped_public_key_warning_names_what_is_missing(
    settings: Settings, tmp_path: Path, changes: dict[str, str], missing: list[str]
) -> None:
    path = tmp_path / "public.pem"
    path.write_bytes(public_pem(rsa_key("server")))
    configured = asymmetric_settings(settings, "RS256", public_key=path).model_copy(update=changes)
    warning = auth.unscoped_key_warning(configured)
    if not missing:
        assert warning is None
        return
    assert warning is not None
    for name in ("LOOMSYNC_JWT_AUDIENCE", "LOOMSYNC_JWT_ISSUER"):
        assert (name in warning) == (name in missing)
    assert auth.unscoped_key_warning(settings) is None  # HS256 with this server's own secret


def test_serve_warns_at_start_up_when_a_jwks_has_no_audience_or_issuer(
    database_url: str, tmp_path: Path
) -> None:
    """``loomsync-server serve`` (the real command, on the test database) with an RS256 public
    key and no audience or issuer logs the warning, then serves."""
    path = tmp_path / "public.pem"
    path.write_bytes(public_pem(rsa_key("server")))
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOOMSYNC_")}
    env |= {
        "LOOMSYNC_DATABASE_URL": database_url,
        "LOOMSYNC_JWT_ALGORITHMS": "RS256",
        "LOOMSYNC_JWT_PUBLIC_KEY": str(path),
        "LOOMSYNC_LOG_LEVEL": "warning",
    }
    port = free_port()
    command = [str(SERVE), "serve", "--host", "127.0.0.1", "--port", str(port)]
    with tempfile.NamedTemporaryFile(prefix="loomsync-serve-", suffix=".log") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=log, cwd=tmp_path)
        server = Server(f"http://127.0.0.1:{port}", process, log)
        try:
            wait_until_ready(server)
            output = " ".join(server.output().split())
        finally:
            process.terminate()
            process.wait(timeout=30)
    assert "WARNING" in output
    assert "LOOMSYNC_JWT_AUDIENCE and LOOMSYNC_JWT_ISSUER unset" in output
    assert "minted for another service" in output


async def test_iat_within_a_minute_of_now_is_accepted(
    client: httpx.AsyncClient, settings: Settings, new_user: Callable[[str], str]
) -> None:
    for iat in (int(time.time()) + 30, time.time() - 86400.5):  # a fast clock; a float
        headers = signed(settings, sub=new_user("clock"), iat=iat)
        assert (await client.get("/api/threads", headers=headers)).status_code == 200


@pytest.mark.parametrize(
    "header",
    [
        pytest.param({"crit": ["exp"]}, id="registered_claim"),
        pytest.param({"crit": ["x-loom"], "x-loom": True}, id="private_extension"),
        pytest.param({"crit": ["b64"], "b64": True}, id="b64_rfc7797"),
        pytest.param({"crit": []}, id="empty_list"),
        pytest.param({"crit": "exp"}, id="not_a_list"),
    ],
)
async def test_token_with_critical_header_extension_is_refused(
    client: httpx.AsyncClient, settings: Settings, header: dict[str, Any]
) -> None:
    assert settings.jwt_secret is not None
    token = jwt.encode(
        claims(), settings.jwt_secret.get_secret_value(), algorithm="HS256", headers=header
    )
    assert jwt.get_unverified_header(token)["crit"] == header["crit"]
    headers = {"Authorization": f"Bearer {token}"}
    assert_invalid_token(await client.get("/api/threads", headers=headers))
    assert_invalid_token(await client.post("/api/threads", json={}, headers=headers))


@pytest.mark.parametrize("ttl", ["99999999999d", "3651d", "522w", "315360001", "9" * 5000 + "s"])
def test_cli_token_create_refuses_a_lifetime_over_ten_years(settings: Settings, ttl: str) -> None:
    args = ["token", "create", "--sub", "x", "--ttl", ttl]
    result = CliRunner().invoke(cli, args, env=token_env(settings))
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "at most 10 years (3650d)" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_cli_token_of_ten_years_is_minted(settings: Settings) -> None:
    args = ["token", "create", "--sub", "x", "--ttl", "3650d"]
    result = CliRunner().invoke(cli, args, env=token_env(settings))
    assert result.exit_code == 0, result.output
    payload = jwt.get_unverified_claims(result.stdout.strip())
    assert payload["exp"] - payload["iat"] == 3650 * 86400


def test_cli_token_create_warns_of_roles_without_meaning_and_mints(settings: Settings) -> None:
    args = ["token", "create", "--sub", "x", "--role", "bogus", "--role", "admin"]
    result = CliRunner().invoke(cli, args, env=token_env(settings))
    assert result.exit_code == 0, result.output
    assert jwt.get_unverified_claims(result.stdout.strip())["roles"] == ["bogus", "admin"]
    warning = " ".join(result.stderr.split())
    assert "Warning: role 'bogus' means nothing to the server; only admin and support do" in (
        warning
    )
    assert "'admin'" not in warning
    quiet = CliRunner().invoke(
        cli, ["token", "create", "--sub", "x", "--role", "support"], env=token_env(settings)
    )
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
