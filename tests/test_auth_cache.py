"""The verified-token cache of :class:`app.auth.TokenVerifier` (issue 18 item 1): a token is
answered from it only while its ``exp`` lies ahead and the keys it was verified with are still
the configured ones; refused tokens are never kept; the cache is bounded."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from jose import jwt

from app import auth
from app.auth import TokenVerifier
from app.config import Settings
from app.errors import Unauthorized
from tests.test_abuse import jwk, write_jwks
from tests.test_auth import claims, pem

SECRET = "s" * 48


def hs_verifier() -> TokenVerifier:
    return TokenVerifier(Settings(jwt_secret=SECRET, rate_limit="off", _env_file=None))  # type: ignore[call-arg]


def hs_token(**changes: object) -> str:
    return str(jwt.encode(claims(**changes), SECRET, algorithm="HS256"))


def test_a_token_verified_once_is_answered_from_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    verifier = hs_verifier()
    token = hs_token(sub="alice", exp=int(time.time()) + 3600)
    first = verifier.verify_with_expiry(token)
    calls: list[str] = []
    monkeypatch.setattr(verifier, "_verify", lambda t: calls.append(t) or pytest.fail("verified"))
    assert verifier.verify_with_expiry(token) == first
    assert verifier.verify(token).user_id == "alice"
    assert calls == []


def test_an_expired_token_is_refused_although_it_was_cached() -> None:
    verifier = hs_verifier()
    exp = int(time.time()) + 1
    token = hs_token(exp=exp)
    assert verifier.verify(token).user_id == "mallory"
    while time.time() <= exp + 1:  # jose counts whole seconds: wait until it refuses too
        time.sleep(0.1)
    with pytest.raises(Unauthorized, match="expired"):
        verifier.verify(token)
    assert token not in verifier._verified


def test_a_cached_token_is_refused_once_its_key_is_retired(tmp_path: Path) -> None:
    old, new = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    path = tmp_path / "jwks.json"
    write_jwks(path, jwk(old, "k1"), jwk(new, "k2"))
    verifier = TokenVerifier(
        Settings(jwt_algorithms="ES256", jwt_jwks=path, rate_limit="off", _env_file=None)  # type: ignore[call-arg]
    )
    token = jwt.encode(claims(), pem(old), algorithm="ES256", headers={"kid": "k1"})
    assert verifier.verify(token).user_id == "mallory"
    assert verifier.verify(token).user_id == "mallory"  # from the cache
    write_jwks(path, jwk(new, "k2"))
    with pytest.raises(Unauthorized):
        verifier.verify(token)


def test_refused_tokens_are_not_kept_and_the_cache_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(auth, "VERIFIED_CACHE_SIZE", 3)
    verifier = hs_verifier()
    forged = str(jwt.encode(claims(), "another secret " * 4, algorithm="HS256"))
    for _ in range(2):
        with pytest.raises(Unauthorized):
            verifier.verify(forged)
    assert forged not in verifier._verified
    tokens = [hs_token(sub=f"user{n}") for n in range(5)]
    for token in tokens:
        verifier.verify(token)
    assert list(verifier._verified) == tokens[2:]  # the least recently used went first
    verifier.verify(tokens[2])
    verifier.verify(hs_token(sub="user5"))
    assert tokens[3] not in verifier._verified
    assert tokens[2] in verifier._verified


def test_a_token_too_long_to_keep_is_verified_every_time() -> None:
    verifier = hs_verifier()
    token = hs_token(padding="x" * auth.VERIFIED_CACHE_MAX_CHARS)
    assert verifier.verify(token).user_id == "mallory"
    assert token not in verifier._verified
