"""Which ``LOOMSYNC_*`` environment variables shadow what ``loomsync login`` saved (newcomer
finding 1): :class:`~loomsync.config.ClientConfig` reads the environment before config.toml
and the token file, so with ``LOOMSYNC_TOKEN`` set a new login changes nothing the commands
use. ``login`` warns, and every "log in again" message names the variable
(:func:`loomsync.cli.messages.token_refused`).
"""

from __future__ import annotations

import os

#: The variables that override the saved login, in the order messages name them.
LOGIN_VARIABLES = ("LOOMSYNC_TOKEN", "LOOMSYNC_SERVER_URL")


def login_overrides() -> list[str]:
    """The names of :data:`LOGIN_VARIABLES` set (to a non-blank value) in this process's
    environment: each one wins over config.toml / the token file."""
    return [name for name in LOGIN_VARIABLES if os.environ.get(name, "").strip()]


def shadowing(server: str, token: str) -> list[str]:
    """The variables that would make a login to ``server`` with ``token`` not take effect:
    those set to something else than what is being saved (a variable equal to it is
    harmless)."""
    saved = {"LOOMSYNC_TOKEN": token.strip(), "LOOMSYNC_SERVER_URL": server.rstrip("/")}
    return [
        name
        for name in login_overrides()
        if os.environ[name].strip().rstrip("/") != saved[name].rstrip("/")
    ]


__all__ = ["LOGIN_VARIABLES", "login_overrides", "shadowing"]
