"""Bearer JWT authentication (API.md section 3). The only module that imports ``jose``."""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, Request
from jose import JWTError, jwt

from app.config import Settings
from app.errors import Unauthorized

log = logging.getLogger(__name__)

ROLE_ADMIN = "admin"
ROLE_SUPPORT = "support"
#: The roles the server gives a meaning to (API.md section 3); any other is carried, unused.
KNOWN_ROLES = frozenset({ROLE_ADMIN, ROLE_SUPPORT})
#: How far in the future a token's ``iat`` may be, in seconds: clocks drift, tokens minted
#: later than now do not exist.
IAT_LEEWAY_SECONDS = 60


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: ``user_id`` (the ``sub`` claim; None when anonymous), ``org_id``, ``roles``."""

    user_id: str | None
    org_id: str | None = None
    roles: frozenset[str] = field(default_factory=frozenset)

    @property
    def is_anonymous(self) -> bool:
        """True for a request without a bearer token."""
        return self.user_id is None

    @property
    def is_admin(self) -> bool:
        """True when the token carries the ``admin`` role."""
        return ROLE_ADMIN in self.roles

    @property
    def is_support(self) -> bool:
        """True when the token carries the ``support`` role."""
        return ROLE_SUPPORT in self.roles


ANONYMOUS = Principal(user_id=None)


class KeyFile:
    """A key file (PEM or JWKS) that is read again when it changes on disk, so that keys can be
    rotated without a restart: add the new key, start signing with it, drop the old one later.

    Each use costs one ``stat``; the file is re-read when its modification time, size or inode
    changed. A file that is missing or does not parse (say, caught half-written) keeps the keys
    read last, and the failure is logged.
    """

    def __init__(self, path: Path, parse: Callable[[str], Any]) -> None:
        self.path = path
        self._parse = parse
        self._stamp = self._stat()
        self._value = parse(path.read_text())

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def current(self) -> Any:
        """The parsed keys, re-read first if the file changed."""
        stamp = self._stat()
        if stamp is not None and stamp != self._stamp:
            self._stamp = stamp
            try:
                self._value = self._parse(self.path.read_text())
                log.info("reloaded the JWT key file %s", self.path)
            except (OSError, ValueError) as exc:
                log.warning("kept the previous keys: cannot read %s: %s", self.path, exc)
        return self._value


def _parse_jwks(text: str) -> dict[str, Any]:
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("keys"), list):
        raise ValueError('a JWKS file is {"keys": [...]}')
    return data


#: How many verified tokens :class:`TokenVerifier` remembers, and the longest one it does
#: (a client sends the same token on every request; a token of 32 KiB is kept out so the cache
#: stays under a few MiB).
VERIFIED_CACHE_SIZE = 1024
VERIFIED_CACHE_MAX_CHARS = 4096


class TokenVerifier:
    """Verifies bearer tokens with the configured algorithms and key(s).

    HS* algorithms use ``LOOMSYNC_JWT_SECRET``; RS*/ES* use the PEM public key or the JWKS file
    (keys chosen by ``kid``), re-read when the file changes. ``alg: none`` and algorithms outside
    the allow-list are refused.

    A token that verified is remembered (a bounded LRU of :data:`VERIFIED_CACHE_SIZE`, keyed by
    the whole token string, signature included) until its ``exp``: verifying one costs about
    0.1-0.2 ms of CPU, a fifth of an append's framework time (issue 18). A remembered token is
    verified again once it expires (and refused then, as jose refuses it) and whenever the key
    file was re-read since (a rotated key file drops what the old keys verified). Refused
    tokens are never remembered.
    """

    def __init__(self, settings: Settings) -> None:
        self._verified: OrderedDict[str, tuple[Principal, float, int, Any]] = OrderedDict()
        self.algorithms = settings.algorithms
        self.issuer = settings.jwt_issuer or None  # set but empty: unset, as create_token reads it
        self.audience = settings.jwt_audience or None
        self._hmac_key = settings.jwt_secret.get_secret_value() if settings.jwt_secret else None
        self._key_file: KeyFile | None = None
        if settings.jwt_jwks is not None:
            self._key_file = KeyFile(settings.jwt_jwks, _parse_jwks)
        elif settings.jwt_public_key is not None:
            self._key_file = KeyFile(settings.jwt_public_key, str)

    def _key_for(self, algorithm: str, kid: Any) -> Any:
        """The HMAC secret, the PEM key, or the JWKS key(s) for this token.

        With a JWKS file a token naming a ``kid`` is checked against that key only (an unknown
        ``kid`` has no key); a token without ``kid`` may match any key of the set.
        """
        if algorithm.startswith("HS"):
            return self._hmac_key
        public_key = self._key_file.current() if self._key_file is not None else None
        if isinstance(public_key, dict) and kid is not None:
            keys = [k for k in public_key["keys"] if isinstance(k, dict) and k.get("kid") == kid]
            return {"keys": keys} if keys else None
        return public_key

    def verify(self, token: str) -> Principal:
        """Return the Principal named by a valid token (see :meth:`verify_with_expiry`)."""
        return self.verify_with_expiry(token)[0]

    def _keys_now(self) -> Any:
        """The key file's keys as parsed last (re-read when it changed), None for HS* only: a
        remembered token is good while this is the very object it was verified against."""
        return self._key_file.current() if self._key_file is not None else None

    def verify_with_expiry(self, token: str) -> tuple[Principal, int]:
        """Return the Principal named by a valid token and its ``exp`` (seconds since the
        epoch): a browser session minted from the token ends with it (issue 13). A token
        verified before is answered from the cache while ``exp`` lies ahead and the keys are
        those it was verified with (class docstring); else verified in full.

        Raises:
            Unauthorized: bad signature or algorithm, expired, ``exp``/``sub`` missing, a claim
                out of bounds (:func:`_principal_from_claims`), ``iss``/``aud`` missing or
                wrong when configured, or present when not: a token minted for another service
                does not open this one (API.md section 3); a header with ``crit``: this server
                understands no JWS extension, and RFC 7515 section 4.1.11 says a token marking
                one critical must then be refused (jose does not check it); an ``iat`` that is
                not a number or lies more than :data:`IAT_LEEWAY_SECONDS` in the future.
        """
        keys = self._keys_now()
        remembered = self._verified.get(token)
        if remembered is not None:
            principal, exp, whole_exp, verified_with = remembered
            if time.time() < exp and verified_with is keys:
                self._verified.move_to_end(token)
                return principal, whole_exp
            del self._verified[token]
        principal, claims = self._verify(token)
        whole_exp = _expiry(claims)
        if len(token) <= VERIFIED_CACHE_MAX_CHARS:
            self._verified[token] = (principal, float(claims["exp"]), whole_exp, keys)
            if len(self._verified) > VERIFIED_CACHE_SIZE:
                self._verified.popitem(last=False)
        return principal, whole_exp

    def _verify(self, token: str) -> tuple[Principal, dict[str, Any]]:
        """:meth:`verify_with_expiry` without the cache: (the Principal, the verified claims).

        Raises:
            Unauthorized: as :meth:`verify_with_expiry`.
        """
        try:
            header = jwt.get_unverified_header(token)
        except JWTError as exc:
            raise Unauthorized("The bearer token is malformed.") from exc
        if "crit" in header:
            raise Unauthorized(
                "The token's header marks extensions critical ('crit') that this server does not"
                " understand (RFC 7515 section 4.1.11)."
            )
        algorithm = header.get("alg")
        if not isinstance(algorithm, str) or algorithm not in self.algorithms:
            raise Unauthorized("The token's algorithm is not accepted.")
        key = self._key_for(algorithm, header.get("kid"))
        if key is None:
            raise Unauthorized("No key is configured for the token's algorithm.")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self.audience,
                issuer=self.issuer,
                options={
                    "require_exp": True,
                    "require_sub": True,
                    # always on: without a configured audience, a token naming any is refused
                    "verify_aud": True,
                    "require_aud": self.audience is not None,
                    "require_iss": self.issuer is not None,
                },
            )
        except JWTError as exc:
            raise Unauthorized(f"The bearer token is invalid: {exc}") from exc
        except Exception as exc:  # jose raises other errors on hostile keys and headers
            raise Unauthorized("The bearer token is invalid.") from exc
        if self.issuer is None and "iss" in claims:
            raise Unauthorized("The token names an issuer; this server is configured with none.")
        _check_issued_at(claims)
        return _principal_from_claims(claims), claims


def _expiry(claims: dict[str, Any]) -> int:
    """The ``exp`` claim jose verified, as whole seconds (a NumericDate may be fractional)."""
    return int(claims["exp"])


def _check_issued_at(claims: dict[str, Any]) -> None:
    """Refuse an ``iat`` that is not a JSON number (RFC 7519 section 2, NumericDate; jose lets
    ``"123"`` and ``NaN`` through) or that is more than :data:`IAT_LEEWAY_SECONDS` ahead of this
    server's clock (a token "issued" next year was not issued by a sane signer).

    Raises:
        Unauthorized: 401 ``invalid_token``.
    """
    if "iat" not in claims:
        return
    iat = claims["iat"]
    if isinstance(iat, bool) or not isinstance(iat, (int, float)) or not math.isfinite(iat):
        raise Unauthorized("The token's 'iat' claim must be a number of seconds (NumericDate).")
    if iat > time.time() + IAT_LEEWAY_SECONDS:
        raise Unauthorized(
            f"The token's 'iat' claim is more than {IAT_LEEWAY_SECONDS} seconds in the future."
        )


#: Longest ``sub`` and ``org`` claim, in characters (API.md section 3): they are stored, indexed
#: and compared on every request, and a btree index row holds at most about 2.7 kB.
MAX_ID_CHARS = 255
#: At most this many ``roles``, each of at most :data:`MAX_ROLE_CHARS` characters: only
#: ``admin`` and ``support`` mean anything, and every audit event records the caller's roles.
MAX_ROLES = 32
MAX_ROLE_CHARS = 64


def _storable(value: str) -> bool:
    """True when PostgreSQL ``text`` can hold ``value`` (no NUL, no lone surrogate)."""
    return "\x00" not in value and not any("\ud800" <= c <= "\udfff" for c in value)


def id_claim_problem(value: object, limit: int = MAX_ID_CHARS) -> str | None:
    """Why ``value`` cannot be a ``sub``/``org`` (or, with ``limit``, a role); None when it can.

    An id is a string of 1 to ``limit`` characters (Unicode code points), not blank, that
    PostgreSQL ``text`` can hold. The reason never quotes the value (it may be megabytes).
    """
    if not isinstance(value, str):
        return "must be a string"
    if not value.strip():
        return "must not be empty or blank"
    if len(value) > limit:
        return f"is {len(value)} characters long; the limit is {limit}"
    if not _storable(value):
        return "must not hold NUL or unpaired surrogate characters"
    return None


def claims_problem(sub: str, org: str | None, roles: list[str]) -> str | None:
    """Why a token with these claims would be refused (:func:`_principal_from_claims`), as a
    sentence naming the ``token create`` option at fault; None when it would be accepted."""
    claims: dict[str, Any] = {"sub": sub, "roles": roles}
    if org is not None:
        claims["org"] = org
    fault = _claim_fault(claims)
    if fault is None:
        return None
    name, problem = fault
    if name == "roles":
        return f"a token carries at most {MAX_ROLES} roles (--role)"
    if name == "role":
        return f"--role: a role {problem}"
    return f"--{name} {problem}"


def _claim_fault(claims: dict[str, Any]) -> tuple[str, str] | None:
    """The first claim outside the bounds of API.md section 3, as (``sub`` | ``org`` |
    ``roles`` | ``role``, why); None when all are within them."""
    for name in ("sub", "org"):
        required = name == "sub"  # jose checked that it is there; this would catch a lapse
        problem = id_claim_problem(claims.get(name)) if required or name in claims else None
        if problem is not None:
            return name, problem
    roles = claims.get("roles", [])
    if not isinstance(roles, list) or len(roles) > MAX_ROLES:
        return "roles", f"must be a list of at most {MAX_ROLES}"
    for role in roles:
        problem = id_claim_problem(role, MAX_ROLE_CHARS)
        if problem is not None:
            return "role", problem
    return None


def _principal_from_claims(claims: dict[str, Any]) -> Principal:
    """The Principal of verified ``claims`` (API.md section 3).

    ``sub`` is required and ``org`` optional, each a string of 1-255 characters when present
    (a JSON ``null`` is not a string); ``roles`` is optional, a list of at most 32 strings of
    1-64 characters.

    Raises:
        Unauthorized: any claim outside those bounds (401 ``invalid_token``).
    """
    fault = _claim_fault(claims)
    if fault is not None:
        name, problem = fault
        if name == "role":
            raise Unauthorized(f"Each of the token's 'roles' {problem}.")
        raise Unauthorized(f"The token's '{name}' claim {problem}.")
    roles = claims.get("roles", [])
    return Principal(user_id=claims["sub"], org_id=claims.get("org"), roles=frozenset(roles))


def unscoped_key_warning(settings: Settings) -> str | None:
    """A warning for ``serve`` when tokens are verified with a public key or JWKS (RS*/ES*) and
    no audience or issuer is configured; None otherwise.

    Such keys usually belong to an identity provider that signs tokens for many services: with
    no ``LOOMSYNC_JWT_AUDIENCE`` this server cannot tell its own tokens from theirs (tokens that
    carry an ``aud`` or ``iss`` are refused then, so a provider's tokens will not work either).
    """
    asymmetric = any(not a.startswith("HS") for a in settings.algorithms)
    if not asymmetric:
        return None
    missing = [
        name
        for name, value in (
            ("LOOMSYNC_JWT_AUDIENCE", settings.jwt_audience),
            ("LOOMSYNC_JWT_ISSUER", settings.jwt_issuer),
        )
        if not value
    ]
    if not missing:
        return None
    return (
        f"{' and '.join(missing)} unset while tokens are verified with a public key or JWKS: "
        "any token that key signs opens this server, even one minted for another service, "
        "and tokens that name an audience or issuer are refused. Set both to the values your "
        "identity provider puts in this server's tokens (docs/operations.md)."
    )


def create_token(
    settings: Settings,
    sub: str,
    *,
    org: str | None = None,
    roles: list[str] | None = None,
    ttl_seconds: int = 30 * 86400,
) -> str:
    """Mint an HS256-family token signed with ``LOOMSYNC_JWT_SECRET`` (``token create``).

    Claims: ``sub``, ``org`` (if given), ``roles``, ``iat``, ``exp`` = now + ``ttl_seconds``, and
    ``iss``/``aud`` when configured.

    Raises:
        ValueError: no shared secret is configured or no HS* algorithm is accepted. The claims
            are not checked here (tests mint tokens the server must refuse): ``token create``
            checks them with :func:`claims_problem`.
    """
    if settings.jwt_secret is None:
        raise ValueError("token create needs LOOMSYNC_JWT_SECRET (or the embedded server's secret)")
    algorithm = next((a for a in settings.algorithms if a.startswith("HS")), None)
    if algorithm is None:
        raise ValueError(
            "token create signs with HS256/384/512; none is in LOOMSYNC_JWT_ALGORITHMS"
        )
    now = int(time.time())
    claims: dict[str, Any] = {
        "sub": sub,
        "roles": roles or [],
        "iat": now,
        "exp": now + ttl_seconds,
    }
    if org is not None:
        claims["org"] = org
    if settings.jwt_issuer:
        claims["iss"] = settings.jwt_issuer
    if settings.jwt_audience:
        claims["aud"] = settings.jwt_audience
    return str(jwt.encode(claims, settings.jwt_secret.get_secret_value(), algorithm=algorithm))


def _bearer_token(request: Request) -> str | None:
    """The token of ``Authorization: Bearer <token>``; None without the header.

    Raises:
        Unauthorized: a header that is not ``Bearer <token>``, or more than one of it (which
            credentials would be the caller's? RFC 9110 section 11.6.2 defines one value).
    """
    lines = request.headers.getlist("authorization")
    if not lines:
        return None
    if len(lines) > 1:
        raise Unauthorized(f"Send one Authorization header, not {len(lines)}.")
    header = lines[0]
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Use 'Authorization: Bearer <token>'.")
    return token.strip()


async def get_principal(request: Request) -> Principal:
    """FastAPI dependency: the caller, or ``ANONYMOUS`` without an ``Authorization`` header.

    ``async`` although it never awaits: FastAPI runs a plain ``def`` dependency in a thread
    pool, and that hand-off cost more than verifying the token (bench/README.md, writes).

    Raises:
        Unauthorized: a header that is not ``Bearer <token>``, or an invalid token.
    """
    token = _bearer_token(request)
    if token is None:
        return ANONYMOUS
    verifier: TokenVerifier = request.app.state.verifier
    return verifier.verify(token)


async def get_token_holder(request: Request) -> tuple[Principal, int]:
    """FastAPI dependency for routes that need a token, and its expiry: (the caller, the
    token's ``exp`` in seconds since the epoch). Never reads a cookie.

    Raises:
        Unauthorized: no token (a bare ``Bearer`` challenge), a malformed header, an invalid
            token.
    """
    token = _bearer_token(request)
    if token is None:
        raise Unauthorized("This needs a bearer token.", token_sent=False)
    verifier: TokenVerifier = request.app.state.verifier
    return verifier.verify_with_expiry(token)


CurrentPrincipal = Annotated[Principal, Depends(get_principal)]
TokenHolder = Annotated[tuple[Principal, int], Depends(get_token_holder)]
