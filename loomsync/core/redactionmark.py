"""What a redacted credential starts with, in a module of its own: the sync compares texts for
markers (:mod:`loomsync.sync.markers`) without importing the detector (tens of milliseconds
of the CLI's start-up; :mod:`loomsync.core.secrets` re-exports it)."""

from __future__ import annotations

#: ``[REDACTED:<kind>]``: what a credential becomes.
MARKER_PREFIX = "[REDACTED:"

__all__ = ["MARKER_PREFIX"]
