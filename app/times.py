"""Timestamps as the API writes them: RFC 3339, UTC, ``Z`` (API.md section 2)."""

from __future__ import annotations

from loomsync.core.document.model import format_utc

#: ``value`` as RFC 3339 UTC text (``2026-01-02T16:39:45.349Z``, ``0001-01-01T00:00:00Z``): the
#: client's own formatter, so server and client write every timestamp the same way.
rfc3339 = format_utc

__all__ = ["rfc3339"]
