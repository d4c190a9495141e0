"""Server settings (ARCHITECTURE.md "Configuration"), read from ``LOOMSYNC_*`` variables and ``.env``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import platformdirs
from limits import parse as parse_rate_limit
from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from app.pooler import Pooler
from app.replicas.state import replica_name

PLACEHOLDER_SECRETS = frozenset({"", "secret", "changeme", "change-me", "dev", "test", "password"})
MIN_SECRET_BYTES = 32
RATE_LIMIT_OFF = frozenset({"", "off", "none", "0"})
#: ``LOOMSYNC_SECRET_SCAN``: what the server does with credentials a write brings (issue 12
#: item 4, app/threads/scanning.py).
SecretScanMode = Literal["redact", "reject", "off"]
#: The longest life a share link can be given, in seconds (10 years, as a token's at most).
MAX_SHARE_LINK_SECONDS = 3650 * 86400
SUPPORTED_ALGORITHMS = frozenset(
    {"HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "ES256", "ES384", "ES512"}
)


def normalize_database_url(url: str) -> str:
    """Return ``url`` with the SQLAlchemy asyncpg driver: ``postgresql+asyncpg://…``.

    Accepts ``postgres://``, ``postgresql://`` and ``postgresql+asyncpg://``.

    Raises:
        ValueError: the URL is not a PostgreSQL URL.
    """
    for prefix in ("postgresql+asyncpg://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+asyncpg://" + url[len(prefix) :]
    raise ValueError("LOOMSYNC_DATABASE_URL must start with postgresql://")


#: ``LOOMSYNC_RATE_LIMIT_STORAGE`` schemes and the ``limits`` library's async storage each maps to.
RATE_LIMIT_STORAGES = {
    "memory": "async+memory",
    "redis": "async+redis",
    "rediss": "async+rediss",
    "redis+unix": "async+redis+unix",
}


def rate_limit_storage_uri(url: str) -> str:
    """The ``limits`` async storage URI of ``LOOMSYNC_RATE_LIMIT_STORAGE``: ``memory://`` (this
    process's memory), ``redis://[:password@]host[:port][/db]``, ``rediss://…`` (TLS) or
    ``redis+unix:///path/to/socket[?db=N]`` become ``async+<scheme>://…``.

    Raises:
        ValueError: another scheme, or a Redis URL without a host (or socket path).
    """
    parts = urlsplit(url.strip())
    shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()  # no password
    scheme = RATE_LIMIT_STORAGES.get(parts.scheme)
    if scheme is None:
        raise ValueError(
            f"LOOMSYNC_RATE_LIMIT_STORAGE {shown!r} is not memory://, redis://host:port[/db],"
            " rediss://… or redis+unix:///path"
        )
    if parts.scheme.startswith("redis"):
        where = parts.path if parts.scheme == "redis+unix" else parts.hostname
        try:
            parts.port  # noqa: B018  (raises on a port that is not a number 0-65535)
        except ValueError:
            where = None
        if not where:
            raise ValueError(f"LOOMSYNC_RATE_LIMIT_STORAGE {shown!r} names no Redis host or port")
    return f"{scheme}://{url.strip().split('://', 1)[1]}"


def normalize_public_url(url: str) -> str:
    """``LOOMSYNC_PUBLIC_URL`` without its trailing ``/``: the absolute ``http(s)://host[:port]
    [/path]`` under which browsers reach this server (share links are built on it).

    Raises:
        ValueError: not an absolute http(s) URL, or one with a query, fragment or user info.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("LOOMSYNC_PUBLIC_URL must be an absolute http:// or https:// URL")
    if parts.query or parts.fragment or "@" in parts.netloc:
        raise ValueError("LOOMSYNC_PUBLIC_URL takes no query, fragment or user:password@")
    try:
        parts.port  # noqa: B018  (raises on a port that is not a number 0-65535)
    except ValueError:
        raise ValueError("LOOMSYNC_PUBLIC_URL has a bad port") from None
    return parts.geturl().rstrip("/")


class Settings(BaseSettings):
    """All server configuration; one instance per process, passed to ``create_app``.

    Sizes are in bytes, durations in seconds.
    """

    # hide_input_in_errors: a validation error never quotes the settings' values (secrets)
    model_config = SettingsConfigDict(
        env_prefix="LOOMSYNC_", env_file=".env", extra="ignore", hide_input_in_errors=True
    )

    env: Literal["production", "development"] = "production"
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    jwt_secret: SecretStr | None = None
    jwt_secret_file: Path | None = None
    jwt_algorithms: str = "HS256"
    jwt_public_key: Path | None = None
    jwt_jwks: Path | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    cursor_secret: SecretStr | None = None
    cursor_secret_file: Path | None = None
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1)
    max_header_bytes: int = Field(default=32 * 1024, ge=1024)
    header_timeout: float = Field(default=10.0, gt=0)
    max_messages: int = Field(default=100_000, ge=1)
    max_query_chars: int = Field(default=1000, ge=1)
    search_common_messages: int = Field(default=50_000, ge=0)
    db_pool_size: int = Field(default=20, ge=1)
    db_max_overflow: int = Field(default=10, ge=0)
    db_connect_timeout: float = Field(default=5.0, gt=0)
    migrate_wait: float = Field(default=60.0, ge=0)
    db_pooler: Pooler = "none"
    database_replica_urls: str = ""
    replica_max_lag: float = Field(default=5.0, gt=0)
    replica_wait: float = Field(default=0.05, ge=0)
    replica_connect_timeout: float = Field(default=1.0, gt=0)
    replica_check_interval: float = Field(default=1.0, gt=0)
    replica_read_timeout: float = Field(default=10.0, gt=0)
    request_timeout: float = Field(default=60.0, ge=0)
    body_timeout: float = Field(default=30.0, ge=0)
    idempotency_key_ttl: float = Field(default=24 * 3600.0, gt=0)
    idempotency_purge_interval: float = Field(default=600.0, ge=0)
    rate_limit: str = "1200/minute"
    rate_limit_storage: str = "memory://"
    secret_scan: SecretScanMode = "redact"
    metrics: bool = True
    public_url: str | None = None
    share_link_max_age: int | None = Field(default=None, ge=1, le=MAX_SHARE_LINK_SECONDS)
    login_code_ttl: float = Field(default=120.0, gt=0, le=3600)
    log_level: str = "info"
    log_format: Literal["console", "json"] = "console"
    #: A JSON file of model prices overriding genai-prices' (docs/operations.md "Usage").
    prices_file: str | None = None
    data_dir: Path = Field(default_factory=lambda: platformdirs.user_data_path("loomsync-server"))

    @property
    def algorithms(self) -> list[str]:
        """The JWT algorithms accepted, from the comma list ``LOOMSYNC_JWT_ALGORITHMS``."""
        return [a.strip().upper() for a in self.jwt_algorithms.split(",") if a.strip()]

    @property
    def rate_limit_enabled(self) -> bool:
        """False when ``LOOMSYNC_RATE_LIMIT`` is ``off`` (or empty)."""
        return self.rate_limit.strip().lower() not in RATE_LIMIT_OFF

    @property
    def async_database_url(self) -> str | None:
        """``database_url`` with the asyncpg driver, or None for the embedded server."""
        return normalize_database_url(self.database_url) if self.database_url else None

    @property
    def replica_urls(self) -> list[str]:
        """The read replicas' URLs (asyncpg driver), from the comma list
        ``LOOMSYNC_DATABASE_REPLICA_URLS``; empty: every read goes to the primary."""
        urls = [u.strip() for u in self.database_replica_urls.split(",") if u.strip()]
        return [normalize_database_url(u) for u in urls]

    def _check_replica_urls(self) -> None:
        """Each replica URL is a PostgreSQL URL that parses, with a port in 1-65535, named once:
        a port like ``99999`` would otherwise fail every read's connection with an error no
        outage handling expects, and a URL given twice would report one ``replica`` label twice.

        Raises:
            ValueError: naming the setting (never the password).
        """
        problem = "LOOMSYNC_DATABASE_REPLICA_URLS must be postgresql:// URLs, comma-separated"
        try:
            urls = self.replica_urls
        except ValueError:
            raise ValueError(problem) from None
        seen: set[str] = set()
        for url in urls:
            try:
                parts = make_url(url)
                port = parts.port
            except (ValueError, ArgumentError):
                raise ValueError(f"{problem}: one does not parse (host:port/database)") from None
            if port is not None and not 0 < port < 65536:
                raise ValueError(f"{problem}: port {port} is not in 1-65535")
            name = replica_name(url)
            if name in seen:
                raise ValueError(f"{problem}: {name} is listed twice")
            seen.add(name)

    @field_validator(
        "jwt_secret", "jwt_secret_file", "cursor_secret", "cursor_secret_file", mode="before"
    )
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        """An empty ``LOOMSYNC_JWT_SECRET(_FILE)`` / ``LOOMSYNC_CURSOR_SECRET(_FILE)`` is unset:
        docker-compose.yml passes both variables through, empty when the operator set one."""
        return None if value == "" else value

    def _read_secret_files(self) -> None:
        """``LOOMSYNC_JWT_SECRET_FILE`` / ``LOOMSYNC_CURSOR_SECRET_FILE``: the secret is the file's
        text without its trailing line break (the ``_FILE`` convention of the official database
        images; Docker secrets mount as ``/run/secrets/<name>``).

        Raises:
            ValueError: the file cannot be read or is not UTF-8, or the variable without
                ``_FILE`` is also set to another value (which one wins would be a guess).
        """
        for name in ("jwt_secret", "cursor_secret"):
            path: Path | None = getattr(self, f"{name}_file")
            if path is None:
                continue
            variable = f"LOOMSYNC_{name.upper()}_FILE"
            try:
                value = path.read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                raise ValueError(f"{variable}: cannot read {path} ({exc.strerror})") from None
            except UnicodeDecodeError:
                raise ValueError(f"{variable}: {path} is not UTF-8 text") from None
            given: SecretStr | None = getattr(self, name)
            if given is not None and given.get_secret_value() != value:
                raise ValueError(
                    f"LOOMSYNC_{name.upper()} and {variable} are both set, to different secrets;"
                    " set one of them"
                )
            setattr(self, name, SecretStr(value))

    @model_validator(mode="after")
    def _check(self) -> Settings:
        self._read_secret_files()
        algorithms = self.algorithms
        if not algorithms:
            raise ValueError("LOOMSYNC_JWT_ALGORITHMS names no algorithm")
        unknown = set(algorithms) - SUPPORTED_ALGORITHMS
        if unknown:
            raise ValueError(
                f"unsupported JWT algorithms: {sorted(unknown)} ('none' is never allowed)"
            )
        asymmetric = [a for a in algorithms if not a.startswith("HS")]
        if asymmetric and self.jwt_public_key is None and self.jwt_jwks is None:
            raise ValueError(f"{asymmetric} need LOOMSYNC_JWT_PUBLIC_KEY or LOOMSYNC_JWT_JWKS")
        for name, value in (("JWT_SECRET", self.jwt_secret), ("CURSOR_SECRET", self.cursor_secret)):
            if value is None or self.env == "development":
                continue
            secret = value.get_secret_value()
            if secret.lower() in PLACEHOLDER_SECRETS or len(secret.encode()) < MIN_SECRET_BYTES:
                raise ValueError(
                    f"LOOMSYNC_{name} is a placeholder or shorter than {MIN_SECRET_BYTES} bytes;"
                    " set a random secret (or LOOMSYNC_ENV=development)"
                )
        if self.database_url:
            normalize_database_url(self.database_url)
        self._check_replica_urls()
        if self.public_url is not None:
            self.public_url = normalize_public_url(self.public_url) if self.public_url else None
        if self.rate_limit_enabled:
            try:
                parse_rate_limit(self.rate_limit)
            except ValueError:
                raise ValueError(
                    f"LOOMSYNC_RATE_LIMIT {self.rate_limit!r} is not like '1200/minute' or 'off'"
                ) from None
        rate_limit_storage_uri(self.rate_limit_storage)
        return self
