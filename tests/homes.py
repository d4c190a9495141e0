"""A HOME of its own for a ``loomsync`` CLI run: the environment without the caller's
``LOOMSYNC_*`` and ``XDG_*`` settings, and every folder the client reads or writes below
``home``."""

from __future__ import annotations

import os
from pathlib import Path


def home_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a CLI whose HOME and XDG folders are below ``home``, plus
    ``extra`` (``COLUMNS="120"``, ``BROWSER=...``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOMSYNC_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        **extra,
    )
    return env
