"""What the CLI reads from a bearer token: its claims, decoded **without verifying** the
signature (only the server can; ``loomsync login`` and ``loomsync status`` say the user and
organization are "from the token"). Issue 16 item 5.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loomsync.config import ClientConfig


def claims(token: str) -> dict[str, Any]:
    """The JWT payload of ``token`` as a dict; ``{}`` when it is not a readable JWT (never
    raises: a token the client cannot read is still the server's to judge)."""
    try:
        payload = token.split(".")[1]
        decoded = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}
    return decoded if isinstance(decoded, dict) else {}


def _time(value: object) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(frozen=True)
class TokenFacts:
    """The claims ``loomsync status`` shows: ``sub`` (the user), ``org``, ``expires_at`` and
    ``issued_at`` (UTC, from ``exp`` and ``iat``; None when absent or not a number)."""

    user: str | None
    org: str | None
    expires_at: datetime | None
    issued_at: datetime | None
    #: False when ``token`` is not a readable JWT at all (no claims): ``status`` says "not a
    #: token" rather than "no user" and "never expires" (newcomer finding 14).
    readable: bool = True

    @classmethod
    def of(cls, token: str) -> TokenFacts:
        """Read from ``token`` (unverified; see the module docstring)."""
        found = claims(token)
        sub, org = found.get("sub"), found.get("org")
        return cls(
            sub if isinstance(sub, str) else None,
            org if isinstance(org, str) else None,
            _time(found.get("exp")),
            _time(found.get("iat")),
            bool(found),
        )

    def expired(self, now: datetime) -> bool:
        """True when ``exp`` is at or before ``now`` (a token without ``exp`` never expires)."""
        return self.expires_at is not None and self.expires_at <= now


def current_user(config: ClientConfig) -> str | None:
    """The user (``sub``) of the token ``config`` logs in with, when logged in and the token
    names one; None otherwise (then no thread can be told apart as someone else's)."""
    if not config.logged_in or config.token is None:
        return None
    return TokenFacts.of(config.token.get_secret_value()).user


__all__ = ["TokenFacts", "claims", "current_user"]
