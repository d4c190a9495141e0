"""Bearer secrets of our own making: a web session's cookie value, a login code, a share link's
secret. Each is 256 random bits, shown once to whoever holds it; the database keeps only its
SHA-256 (:func:`secret_hash`), so a copy of the database opens nothing.

Neutral ground: both app/sharing (share links) and app/web (sessions, login codes) use these,
and neither imports the other for them.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

#: Bytes of randomness in a cookie value, login code or share-link secret: 256 bits.
SECRET_BYTES = 32


def secret_hash(secret: str) -> bytes:
    """SHA-256 of a cookie value, login code or share-link secret (each 256 random bits)."""
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


@dataclass(frozen=True, slots=True)
class NewSecret:
    """A fresh secret (shown once, never stored) and its :func:`secret_hash` (stored)."""

    value: str
    hash: bytes


def new_secret() -> NewSecret:
    """A fresh cookie value, login code or share-link secret: 256 random bits as 43 URL-safe
    base64 characters, with the hash that is stored in its place."""
    value = secrets.token_urlsafe(SECRET_BYTES)
    return NewSecret(value, secret_hash(value))


__all__ = ["SECRET_BYTES", "NewSecret", "new_secret", "secret_hash"]
