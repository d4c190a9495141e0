"""Client configuration (ARCHITECTURE.md "Configuration"): where files live, which server, token.

- ``$XDG_CONFIG_HOME/loomsync/config.toml``: ``server_url`` and the retry settings below.
- ``$XDG_CONFIG_HOME/loomsync/token``: the bearer token alone, mode 0600.
- ``LOOMSYNC_SERVER_URL``, ``LOOMSYNC_TOKEN`` (and ``LOOMSYNC_TIMEOUT``, ``LOOMSYNC_RETRIES``,
  ...) override both files.

Folders follow platformdirs (the XDG base directories on Linux): threads under
``$XDG_DATA_HOME/loomsync/threads``, the sync queue under ``$XDG_STATE_HOME/loomsync/sync``.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from loomsync.errors import ConfigError
from loomsync.files import atomic_write, ensure_dir

APP_NAME = "loomsync"


@dataclass(frozen=True, slots=True)
class ClientPaths:
    """The client's three folders: configuration, data (threads) and state (sync queue)."""

    config_dir: Path
    data_dir: Path
    state_dir: Path

    @property
    def config_file(self) -> Path:
        """``<config>/config.toml``."""
        return self.config_dir / "config.toml"

    @property
    def token_file(self) -> Path:
        """``<config>/token`` (mode 0600)."""
        return self.config_dir / "token"

    @property
    def threads_dir(self) -> Path:
        """``<data>/threads``: one ``<id>.json`` per thread."""
        return self.data_dir / "threads"

    @property
    def sync_dir(self) -> Path:
        """``<state>/sync``: ``pending.json`` and the per-thread sync bases."""
        return self.state_dir / "sync"

    @classmethod
    def under(cls, root: Path) -> ClientPaths:
        """All three folders inside one folder (tests, portable installs)."""
        return cls(root / "config", root / "data", root / "state")


def default_paths() -> ClientPaths:
    """The platform's folders for loomsync (XDG base directories on Linux), read now."""
    return ClientPaths(
        config_dir=platformdirs.user_config_path(APP_NAME),
        data_dir=platformdirs.user_data_path(APP_NAME),
        state_dir=platformdirs.user_state_path(APP_NAME),
    )


class ClientConfig(BaseSettings):
    """Client settings. Durations in seconds.

    Precedence: ``LOOMSYNC_*`` environment variables, then the values passed in (from
    config.toml and the token file, see :func:`load_config`), then these defaults.
    """

    model_config = SettingsConfigDict(env_prefix="LOOMSYNC_", extra="ignore")

    server_url: str | None = None
    token: SecretStr | None = None
    timeout: float = Field(default=30.0, gt=0, description="seconds per HTTP request")
    retries: int = Field(default=3, ge=0, description="retries of one request (network, 5xx)")
    backoff: float = Field(default=0.5, ge=0, description="first retry delay, doubling")
    backoff_max: float = Field(default=8.0, ge=0, description="longest delay between retries")
    queue_backoff_max: float = Field(
        default=300.0, ge=0, description="longest delay before the background sync retries"
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],  # noqa: ARG003
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,  # noqa: ARG003
        file_secret_settings: PydanticBaseSettingsSource,  # noqa: ARG003
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment first, then the given values; no ``.env`` (that is the server's)."""
        return (env_settings, init_settings)

    @property
    def logged_in(self) -> bool:
        """True when both a server URL and a token are configured."""
        return bool(self.server_url and self.token and self.token.get_secret_value())


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None


def load_config(paths: ClientPaths | None = None, **overrides: Any) -> ClientConfig:
    """Read config.toml and the token file (environment variables win over both).

    Raises:
        ConfigError: config.toml is not valid TOML or holds invalid values.
    """
    paths = paths or default_paths()
    values = _read_toml(paths.config_file)
    with contextlib.suppress(FileNotFoundError):
        token = paths.token_file.read_text().strip()
        if token:
            values["token"] = token
    values.update(overrides)
    try:
        return ClientConfig(**values)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        raise ConfigError(f"invalid client configuration: {first['loc']}: {first['msg']}") from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def save_login(paths: ClientPaths, server_url: str, token: str) -> None:
    """Store ``server_url`` in config.toml (other keys kept) and the token (mode 0600)."""
    ensure_dir(paths.config_dir).chmod(0o700)  # the token's folder: owner only
    values = _read_toml(paths.config_file)
    values["server_url"] = server_url.rstrip("/")
    lines = [f"{key} = {_toml_value(value)}" for key, value in values.items()]
    atomic_write(paths.config_file, ("\n".join(lines) + "\n").encode())
    atomic_write(paths.token_file, (token.strip() + "\n").encode())


def clear_login(paths: ClientPaths) -> bool:
    """Delete the token file; True if there was one. The server URL stays in config.toml."""
    try:
        paths.token_file.unlink()
    except FileNotFoundError:
        return False
    return True


__all__ = [
    "APP_NAME",
    "ClientConfig",
    "ClientPaths",
    "clear_login",
    "default_paths",
    "load_config",
    "save_login",
]
