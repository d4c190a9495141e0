"""The base folders agents write under, per OS, read from the environment at call time (so
tests and ``loomsync agents`` see the ``HOME``/``XDG_*``/``%APPDATA%`` of the moment).

Each agent names its own folder below these; an agent's own variable (``CODEX_HOME``,
``GOOSE_PATH_ROOT``, …) is checked by its importer before these defaults.
"""

from __future__ import annotations

import os
from pathlib import Path

from loomsync.importers.common import home


def _env(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else None


def data_home() -> Path:
    """``$XDG_DATA_HOME``, else ``~/.local/share`` (XDG Base Directory specification)."""
    return _env("XDG_DATA_HOME") or home() / ".local" / "share"


def config_home() -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config`` (XDG Base Directory specification)."""
    return _env("XDG_CONFIG_HOME") or home() / ".config"


def application_support() -> Path:
    """macOS: ``~/Library/Application Support``."""
    return home() / "Library" / "Application Support"


def appdata(*, local: bool = False) -> Path:
    """Windows: ``%LOCALAPPDATA%`` (``local``) or ``%APPDATA%``, else their default under
    the home folder (``AppData\\Local`` / ``AppData\\Roaming``)."""
    if local:
        return _env("LOCALAPPDATA") or home() / "AppData" / "Local"
    return _env("APPDATA") or home() / "AppData" / "Roaming"


__all__ = ["appdata", "application_support", "config_home", "data_home"]
