"""What stores return besides threads: summaries, search hits, sync outcomes."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from loomsync.core.document.model import Thread, UtcDatetime

ArchivedFilter = Literal["false", "true", "any"]
Syntax = Literal["plain", "web"]
"""Query syntax (API.md section 6): ``plain`` ranks, requiring nothing; ``web`` is strict."""
Scope = Literal["mine", "visible"]
"""Which threads a server listing or search covers (API.md section 6): ``mine`` (the caller's)
or ``visible`` (everything the caller may read)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

#: A lone surrogate (half of a UTF-16 pair, e.g. half an emoji cut by a tool): a ``str`` may
#: hold one (JSON's ``"\\ud83d"`` decodes to it), but no UTF-8 text can, so a summary holding
#: one cannot be written to the index, to JSON output or to a terminal.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
#: The extra field a summary that had to be changed to be shown carries: the names of the
#: fields whose unencodable characters became U+FFFD (:func:`unencodable_fields`).
UNENCODABLE = "unencodable"


class ThreadSummary(BaseModel):
    """One row of a listing (API.md section 2, "ThreadSummary"), server or local.

    ``owner_id`` and ``org_id`` are None for threads only known locally; ``is_private`` is
    always False for server rows. Unknown fields from a newer server are kept.
    """

    model_config = ConfigDict(extra="allow")

    id: str
    title: str | None = None
    workspace_root: str | None = None
    git_branch: str | None = None
    git_remote_url: str | None = None
    provider: str | None = None
    model: str | None = None
    tags: list[str] = Field(default_factory=list)
    is_pinned: bool = False
    visibility: str = "organization"
    is_shared_with_support: bool = False
    is_private: bool = False
    owner_id: str | None = None
    org_id: str | None = None
    version: int = 0
    message_count: int = 0
    created_at: UtcDatetime | None = None
    last_activity_at: UtcDatetime | None = None
    archived_at: UtcDatetime | None = None

    @classmethod
    def of(cls, thread: Thread) -> ThreadSummary:
        """Summarise a thread document (server fields are taken when the document has them).

        A field holding a lone surrogate (see :data:`_LONE_SURROGATE`; issue 27 item 4) is
        summarised with U+FFFD in its place, and the summary names it in its extra field
        :data:`UNENCODABLE` (``["title"]``), so that the thread is listed with what can be shown
        and a warning (:func:`unencodable_fields`), never makes a listing fail.
        """
        summary = cls._of(thread)
        fields = [name for name, value in summary if _encodable(value) != value]
        if not fields:
            return summary
        data = summary.model_dump(mode="python")
        for name in fields:
            data[name] = _encodable(data[name])
        return cls.model_validate({**data, UNENCODABLE: fields})

    @classmethod
    def _of(cls, thread: Thread) -> ThreadSummary:
        extra = thread.model_extra or {}
        return cls(
            id=str(thread.id),
            title=thread.metadata.title,
            workspace_root=thread.workspace_root,
            git_branch=thread.git_branch,
            git_remote_url=thread.git_remote_url,
            provider=thread.provider,
            model=thread.model,
            tags=list(thread.metadata.tags),
            is_pinned=thread.metadata.is_pinned,
            visibility=thread.visibility,
            is_shared_with_support=thread.is_shared_with_support,
            is_private=thread.is_private,
            owner_id=extra.get("owner_id"),
            org_id=extra.get("org_id"),
            version=thread.version,
            message_count=len(thread.messages),
            created_at=thread.created_at,
            last_activity_at=thread.last_activity_at or thread.created_at,
            archived_at=extra.get("archived_at"),
        )

    def unencodable_fields(self) -> list[str]:
        """The fields :meth:`of` had to change to be shown (lone surrogates replaced), in the
        order of the model; empty for almost every summary."""
        found = (self.model_extra or {}).get(UNENCODABLE)
        return [str(name) for name in found] if isinstance(found, list) else []

    @property
    def sort_key(self) -> tuple[datetime, str]:
        """Newest activity first when sorted in reverse: (last activity or creation, id)."""
        return (self.last_activity_at or self.created_at or _EPOCH, self.id)


def keep(summary: ThreadSummary, *, archived: ArchivedFilter, workspace: str | None) -> bool:
    """Whether a summary passes the list filters of API.md section 6 (archived, workspace)."""
    if workspace is not None and summary.workspace_root != workspace:
        return False
    if archived == "false":
        return summary.archived_at is None
    if archived == "true":
        return summary.archived_at is not None
    return True


def _encodable(value: Any) -> Any:
    """``value`` (a string or a list of strings) with each lone surrogate made U+FFFD."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    return [_encodable(item) for item in value] if isinstance(value, list) else value


def unencodable_warning(summary: ThreadSummary) -> str | None:
    """The warning that names a thread listed with what could be shown (issue 27 item 4), or
    None when nothing of ``summary`` had to change."""
    fields = summary.unencodable_fields()
    if not fields:
        return None
    return (
        f"thread {summary.id}: its {', '.join(fields)} held half of a character (a lone "
        "surrogate, e.g. half an emoji), not valid Unicode: shown with U+FFFD in its place"
    )


def unencodable_warnings(summaries: Iterable[ThreadSummary]) -> list[str]:
    """:func:`unencodable_warning` of each summary that needs one, in order."""
    return [line for summary in summaries if (line := unencodable_warning(summary))]


class SearchHit(BaseModel):
    """One search result: the thread, its score (higher is better) and the best passage.

    ``snippet`` wraps matched words in ``<b>…</b>`` with the rest HTML-escaped;
    ``message_index`` names the message it came from (None: the match was in metadata).
    ``origin`` says where the thread was found: ``"server"``, or ``"local"`` (this machine's
    files: a local search, or in an online search a thread only this machine holds, pending
    or private; issue 14 review). None from a server that does not say.
    """

    model_config = ConfigDict(extra="allow")

    thread: ThreadSummary
    score: float
    snippet: str | None = None
    message_index: int | None = None
    origin: Literal["server", "local"] | None = None


class SearchResults(BaseModel):
    """Hits, best first. ``source`` says who answered: the server, or this machine's files.

    ``fallback_reason`` is set when a server search was wanted but the local fallback answered
    (e.g. ``"server unreachable: connection refused"``).
    """

    hits: list[SearchHit] = Field(default_factory=list)
    source: Literal["server", "local"] = "local"
    fallback_reason: str | None = None
    token_refused: bool = False
    """True when the server refused the token (401; issue 16 item 3): the hits are this
    machine's, and ``fallback_reason`` says so. Never set for an unreachable server."""
    next_cursor: str | None = None
    more_here: bool = False
    """True when this machine's search found more hits than ``hits`` holds (it asks for one
    more than the limit; issue 30 item 8: ``search --local -n 2`` says so). A server's page
    says it with ``next_cursor``."""
    skipped: list[str] = Field(default_factory=list)
    """Hits of the server's answer left out, one line each (``skipped entry '…' from the
    server: not a thread id``): raw text, print it through ``printable``."""


SyncStatus = Literal[
    "synced",  # the server now holds the local copy
    "merged",  # the server now holds the local copy merged with changes made elsewhere
    "up_to_date",  # nothing to send
    "local",  # the store has no server (local or memory store)
    "private",  # is_private: never sent
    "forked",  # both sides added messages: the local side became a new thread
    "gone",  # deleted on the server; the local copy is kept
    "failed",  # refused for good (413, 422, corrupt file, ...); kept and reported
    "pending",  # not sent yet (offline, server error, not logged in); retried later
    "token_refused",  # 401: the token expired or was revoked; waits for a new login
    "pulled",  # the server had a newer copy; it is now the local copy
    "skipped",  # the server listed an entry the client cannot use (not a thread id, ...)
]


@dataclass(frozen=True, slots=True)
class SyncOutcome:
    """What one sync of one thread did.

    Attributes:
        thread_id: the thread.
        status: see :data:`SyncStatus`.
        op: the queue operation (``"save"``, ``"patch"``, ``"delete"``).
        detail: one line for people (the server's reason for a failure, ...).
        version: the server version afterwards, when known.
        fork_id: the new thread holding the local side after a divergent conflict (with
            ``"forked"``, or with ``"pending"``/``"failed"`` when the fork is not on the
            server yet: ``detail`` says why).
        thread: the local copy afterwards, when the call had it at hand (after a fork: the
            fork, which holds the writer's messages).
        unreachable: the entry stays pending because the server could not be reached or
            had trouble (network, 408, 429, 5xx); exit code 4 follows it, while an entry
            left pending for another reason is "not done" (1).
    """

    thread_id: str
    status: SyncStatus
    op: str = "save"
    detail: str = ""
    version: int | None = None
    fork_id: str | None = None
    thread: Thread | None = None
    unreachable: bool = False

    @property
    def ok(self) -> bool:
        """True unless the thread is left failed, pending or waiting for a new login."""
        return self.status not in ("failed", "pending", "token_refused")

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form (without the thread) for ``--json`` output."""
        return {
            "thread_id": self.thread_id,
            "op": self.op,
            "status": self.status,
            "detail": self.detail,
            "version": self.version,
            "fork_id": self.fork_id,
        }


__all__ = [
    "UNENCODABLE",
    "ArchivedFilter",
    "Scope",
    "SearchHit",
    "SearchResults",
    "SyncOutcome",
    "SyncStatus",
    "ThreadSummary",
    "keep",
    "unencodable_warning",
    "unencodable_warnings",
]
