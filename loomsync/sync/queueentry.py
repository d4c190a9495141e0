"""One entry of the sync queue (:class:`PendingEntry`) and the retry delay
(:func:`backoff_delay`); the queue itself is :class:`loomsync.sync.queue.PendingSyncQueue`."""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, field_validator

from loomsync import edits
from loomsync.core.document.model import UtcDatetime

Op = Literal["save", "patch", "delete"]


class PendingEntry(BaseModel):
    """One thing to send. ``generation`` grows each time the entry is enqueued again.

    Attributes:
        thread_id: the thread.
        op: ``save`` (push the local copy), ``patch`` (``payload`` is a merge patch for
            ``PATCH``), ``delete``.
        retry_count: failed attempts since the last success.
        last_error: the last failure, one line (the server's reason for a refusal).
        failed_at: set when the server refused for good (413, 422, ...): not retried until the
            thread is saved again or a retry of failed entries is asked for.
        next_attempt_at: not before this time (exponential backoff with jitter).
        token_refused_at: set when the last attempt got a 401 (the token expired, was revoked
            or is not valid; issue 16 item 3): the entry waits for a new login, neither failed
            nor backed off as if offline (:meth:`PendingSyncQueue.wait_for_login`).
    """

    thread_id: str
    op: Op
    payload: dict[str, Any] | None = None
    generation: int = 1
    enqueued_at: UtcDatetime
    updated_at: UtcDatetime
    retry_count: int = 0
    last_error: str | None = None
    failed_at: UtcDatetime | None = None
    next_attempt_at: UtcDatetime | None = None
    token_refused_at: UtcDatetime | None = None

    @field_validator("thread_id")
    @classmethod
    def _a_thread_id(cls, value: str) -> str:
        """Only ``T-<uuid>``: an entry naming anything else is dropped when read (issue 15,
        item 4), never sent nor used as a path."""
        return str(edits.parse_id(value))

    @property
    def failed(self) -> bool:
        """True when refused for good."""
        return self.failed_at is not None

    @property
    def waiting_for_login(self) -> bool:
        """True when the server refused the token on the last attempt (a 401)."""
        return self.token_refused_at is not None and not self.failed

    def due(self, now: datetime) -> bool:
        """True when not failed and its backoff has passed."""
        return not self.failed and (self.next_attempt_at is None or self.next_attempt_at <= now)


def backoff_delay(retry_count: int, *, base: float = 1.0, cap: float = 300.0) -> float:
    """Seconds to wait before attempt ``retry_count + 1``: ``base * 2**n`` capped, 50-100 % jitter."""
    return float(min(cap, base * 2 ** min(retry_count, 30)) * random.uniform(0.5, 1.0))


__all__ = ["Op", "PendingEntry", "backoff_delay"]
