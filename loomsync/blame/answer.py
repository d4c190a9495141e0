"""One answer of ``blame``/``why``: threads behind a line or a commit, ranked, from trailers,
the server and this machine."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

#: Match kinds, best first: a commit's trailer names the thread; its edit holds the line's
#: text; it touched the file and observed the commit; it only observed the commit.
MATCHES = ("trailer", "line", "file", "commit")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass
class Hit:
    """A thread behind a line or commit: ``thread_id`` (``T-…``), ``match`` (:data:`MATCHES`),
    ``message_index`` (the message to open, or None), the matching ``commits``, its
    ``title``, ``last_activity_at``, and for ``why`` the ``files`` it changed."""

    thread_id: str
    match: str
    message_index: int | None
    commits: list[str]
    title: str | None = None
    last_activity_at: datetime | None = None
    files: list[str] = field(default_factory=list)

    @property
    def rank(self) -> tuple[int, int, datetime]:
        """Sort key, best first (reverse order): match kind, a commit seen, then newest."""
        kind = len(MATCHES) - MATCHES.index(self.match)
        return (kind, 1 if self.commits else 0, self.last_activity_at or _EPOCH)

    def as_json(self) -> dict[str, Any]:
        """The hit as ``--json`` prints it."""
        return {
            "thread_id": self.thread_id,
            "match": self.match,
            "message_index": self.message_index,
            "commits": self.commits,
            "title": self.title,
            "files": self.files,
        }


def merged(*groups: list[Hit]) -> list[Hit]:
    """One hit per thread (its best, with the title, time, message and files the others
    knew when it lacks them: a trailer names only the id), best first."""
    best: dict[str, Hit] = {}
    for group in groups:
        for hit in group:
            kept = best.get(hit.thread_id)
            if kept is None:
                best[hit.thread_id] = hit
                continue
            better, other = (hit, kept) if hit.rank[:2] > kept.rank[:2] else (kept, hit)
            better.title = better.title or other.title
            better.files = better.files or other.files
            better.last_activity_at = better.last_activity_at or other.last_activity_at
            if better.message_index is None:
                better.message_index = other.message_index
            best[hit.thread_id] = better
    return sorted(best.values(), key=lambda h: h.rank, reverse=True)
