"""How many queue entries wait, and how many failed: the one count ``loomsync sync`` and
``loomsync status`` both print (issue 16, items 2 and 5), so they can never disagree.

An entry of the queue (:class:`~loomsync.sync.queue.PendingEntry`) is in exactly one of:

- **pending**: still to be sent (offline, the server busy, just saved, or waiting for a new
  login); retried by the background sync and by every ``loomsync sync``;
- **failed**: the server refused it for good (403, 410, 413, 422, ...) or the local file is
  corrupt; kept, not retried, until the thread is saved again, ``loomsync sync --retry-failed``,
  or dropped with ``loomsync sync --drop ID`` / ``--discard-failed``.

``waiting_for_login`` is the part of ``pending`` whose last attempt the server answered 401
(the token expired, was revoked or is not valid, issue 16 item 3): those wait for
``loomsync login``, and are neither failed nor "offline".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from loomsync.sync.queue import PendingEntry


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """The queue's entries by state (see the module docstring).

    Attributes:
        pending: entries still to send (``waiting_for_login`` included).
        failed: entries refused for good, kept until retried or dropped.
        waiting_for_login: pending entries whose last attempt got a 401.
    """

    pending: int = 0
    failed: int = 0
    waiting_for_login: int = 0

    @property
    def total(self) -> int:
        """Every entry: ``pending + failed``."""
        return self.pending + self.failed

    def as_dict(self) -> dict[str, int]:
        """``{"pending", "failed", "waiting_for_login"}`` for ``--json`` output."""
        return {
            "pending": self.pending,
            "failed": self.failed,
            "waiting_for_login": self.waiting_for_login,
        }


def queue_counts(entries: Iterable[PendingEntry]) -> QueueCounts:
    """Count ``entries`` (``store.status()``, or ``queue.entries()``) by state."""
    pending = failed = waiting = 0
    for entry in entries:
        if entry.failed:
            failed += 1
        else:
            pending += 1
            waiting += entry.waiting_for_login
    return QueueCounts(pending, failed, waiting)


__all__ = ["QueueCounts", "queue_counts"]
