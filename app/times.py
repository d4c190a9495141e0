"""Timestamps as the API writes them: RFC 3339, UTC, ``Z`` (API.md section 2)."""

from __future__ import annotations

from datetime import datetime

from loomsync.model import format_utc, to_utc


def rfc3339(value: datetime) -> str:
    """``value`` as RFC 3339 UTC text, like :func:`loomsync.model.format_utc` but with the year
    always four digits (``0001-01-01T00:00:00Z``; ``strftime`` writes year 1 as ``1``)."""
    text = format_utc(value)
    year = to_utc(value).year
    return f"{year:04d}{text[len(str(year)) :]}" if year < 1000 else text
