"""Client configuration (ARCHITECTURE.md "Configuration"): where files live, which server, token.

- ``$XDG_CONFIG_HOME/loomsync/config.toml``: ``server_url``, the retry settings below,
  ``default_visibility`` (of new threads: ``private`` unless it says ``organization`` or
  ``public``, issue 12 item 5) and the redaction allow-list (issue 12 item 3)::

      default_visibility = "private"

      [redaction]
      allow = ["AKIAIOSFODNN7EXAMPLE"]          # exact strings that are never redacted
      allow_patterns = ["sk-test-[0-9a-f]{8}"]  # Python regexes, matched against a whole finding
- ``$XDG_CONFIG_HOME/loomsync/token``: the bearer token alone, mode 0600.
- ``LOOMSYNC_SERVER_URL``, ``LOOMSYNC_TOKEN`` (and ``LOOMSYNC_TIMEOUT``, ``LOOMSYNC_RETRIES``,
  ...) override both files.

Folders follow platformdirs (the XDG base directories on Linux): threads under
``$XDG_DATA_HOME/loomsync/threads``, the sync queue under ``$XDG_STATE_HOME/loomsync/sync``.
"""

from __future__ import annotations

import contextlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict
from pydantic_settings.exceptions import SettingsError

from loomsync.core.document.model import VISIBILITIES, Visibility
from loomsync.errors import ConfigError
from loomsync.store.files import atomic_write, ensure_dir

if TYPE_CHECKING:
    from loomsync.core.secrets import Redactor

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
        """``<state>/sync``: ``queue.sqlite3`` (the sync queue) and the per-thread sync bases."""
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


class RedactionConfig(BaseModel):
    """``[redaction]`` of config.toml: what the user decided is not a secret (issue 12 item 3).

    ``allow``: exact strings never redacted; ``allow_patterns``: Python regular expressions,
    each matched against the whole text of a finding (``re.fullmatch``).
    """

    model_config = ConfigDict(extra="forbid")

    allow: list[str] = Field(default_factory=list)
    allow_patterns: list[str] = Field(default_factory=list)

    @field_validator("allow_patterns")
    @classmethod
    def _compiles(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a valid regex: {exc}") from None
        return patterns


class WatchConfig(BaseModel):
    """``[watch]`` of config.toml: what ``loomsync watch`` watches (issue 17 item 1, issue 28).

    Any other key names an agent (an importer of :data:`loomsync.importers.FORMATS`, ``_``
    or ``-`` alike: ``claude_code``, ``claude-code``, a third party's ``myagent``): its
    folders, relative to ``$HOME`` unless absolute (``~`` expands), replacing the agent's
    usual ones; ``[]`` watches none of it. Names are checked against the installed importers
    when the watch starts (:func:`loomsync.watch.sources.sources`; this module does not load
    them). Unset agents: see :mod:`loomsync.watch.sources`. ``folders``: more folders, each
    file read by the agent that recognises it. ``polling``: ``auto`` (inotify, polling where a
    folder gives no events), ``always`` or ``never``; ``poll_interval``: seconds between polls.
    """

    model_config = ConfigDict(extra="allow")

    folders: list[str] = Field(default_factory=list)
    polling: Literal["auto", "always", "never"] = "auto"
    poll_interval: float = Field(default=1.0, gt=0, le=60)

    @model_validator(mode="after")
    def _agent_folders(self) -> WatchConfig:
        for key, value in (self.model_extra or {}).items():
            if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
                raise ValueError(f"{key}: must be a list of folders (strings)")
        return self

    def agent_folders(self) -> dict[str, list[str]]:
        """The folders configured per agent, by importer name (``claude-code``: ``_`` read as
        ``-``), in the order config.toml gives them."""
        return {
            key.replace("_", "-"): list(value) for key, value in (self.model_extra or {}).items()
        }


class ImportConfig(BaseModel):
    """``[import]`` of config.toml: what ``loomsync import`` and ``watch`` never read (issue 28
    item 4; :mod:`loomsync.importers.exclude`)::

        [import]
        exclude_agents = ["aider"]
        exclude_repositories = ["~/src/secret", "~/clients/*", "github.com/acme/private*"]

    ``exclude_agents``: importer names (``_`` or ``-`` alike) left out of ``import --all``,
    ``import auto`` and ``watch``. ``exclude_repositories``: folders (``~`` expands, relative to
    ``$HOME``, globs allowed) or git remotes (``git@host:org/repo.git``,
    ``https://host/org/repo``, globs allowed): a session whose working folder is one of
    those folders or inside one, or whose git remote matches, is never stored.
    """

    model_config = ConfigDict(extra="forbid")

    exclude_agents: list[str] = Field(default_factory=list)
    exclude_repositories: list[str] = Field(default_factory=list)


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
    default_visibility: Visibility = Field(
        default="private", description="visibility of new threads that do not choose one"
    )
    redaction: RedactionConfig = Field(default_factory=RedactionConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)
    imports: ImportConfig = Field(default_factory=ImportConfig, alias="import")

    @field_validator("default_visibility", mode="before")
    @classmethod
    def _visibility(cls, value: Any) -> Any:
        if value not in VISIBILITIES:
            raise ValueError(f"must be one of {', '.join(VISIBILITIES)}, not {value!r}")
        return value

    def redactor(self) -> Redactor:
        """The :class:`loomsync.core.secrets.Redactor` with this configuration's allow-list
        (imported here: a command that redacts nothing does not load the detector)."""
        from loomsync.core.secrets import Redactor

        return Redactor(allow=self.redaction.allow, allow_patterns=self.redaction.allow_patterns)

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
        ConfigError: config.toml is not valid TOML or holds invalid values, or a
            ``LOOMSYNC_*`` variable cannot be parsed (``LOOMSYNC_REDACTION`` is JSON).
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
        where = ".".join(str(part) for part in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"invalid client configuration: {where}: {message}") from None
    except SettingsError as exc:  # a variable pydantic-settings could not parse (bad JSON)
        cause = f" ({exc.__cause__})" if exc.__cause__ else ""
        field = str(exc).split('"')[1] if '"' in str(exc) else "environment"
        raise ConfigError(
            f"invalid client configuration: LOOMSYNC_{field.upper()}: {exc}{cause}"
        ) from None


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def toml_text(values: dict[str, Any]) -> str:
    """TOML for config.toml: top-level keys, then one ``[table]`` per dict (one level deep,
    what :class:`ClientConfig` reads)."""
    lines = [
        f"{_toml_key(k)} = {_toml_value(v)}" for k, v in values.items() if not isinstance(v, dict)
    ]
    for name, table in values.items():
        if isinstance(table, dict):
            lines += ["", f"[{_toml_key(name)}]"]
            lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in table.items()]
    return "\n".join(lines) + "\n"


def save_login(paths: ClientPaths, server_url: str, token: str) -> None:
    """Store ``server_url`` in config.toml (other keys and tables kept) and the token (mode
    0600)."""
    ensure_dir(paths.config_dir).chmod(0o700)  # the token's folder: owner only
    values = _read_toml(paths.config_file)
    values["server_url"] = server_url.rstrip("/")
    atomic_write(paths.config_file, toml_text(values).encode())
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
    "ImportConfig",
    "RedactionConfig",
    "WatchConfig",
    "clear_login",
    "default_paths",
    "load_config",
    "save_login",
    "toml_text",
]
