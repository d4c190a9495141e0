"""Pieces of invented credentials shared by the tests that plant them (issue 12): never a real
key, only the real formats' shapes."""

from __future__ import annotations

import string
import zlib

#: The base62 alphabet of GitHub and npm tokens, in their order.
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase


def base62(number: int, width: int) -> str:
    """``number`` in base62, left-padded with ``0`` to ``width`` characters."""
    digits = ""
    while number:
        number, digit = divmod(number, 62)
        digits = BASE62[digit] + digits
    return digits.rjust(width, "0")


def checksummed(prefix: str, body: str) -> str:
    """``prefix + body`` + 6 base62 digits of ``body``'s CRC32: the check digits of GitHub's
    and npm's tokens (``ghp_``, ``npm_`` + 30 characters)."""
    return prefix + body + base62(zlib.crc32(body.encode()), 6)
