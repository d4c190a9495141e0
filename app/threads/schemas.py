"""Request and response models of /api/threads (API.md sections 2 and 6)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool
from pydantic.json_schema import SkipJsonSchema

from app.problems import FieldError, Problem
from app.problems import problem_responses as _problem_responses
from loomsync.core.document.model import AgentState, Message, Thread, UtcDatetime, Visibility

Scope = Literal["mine", "visible"]
ArchivedFilter = Literal["false", "true", "any"]


class ThreadOut(Thread):
    """A thread as the server returns it: the document plus server fields."""

    owner_id: str
    org_id: str | None = None
    archived_at: UtcDatetime | None = None
    message_count: int


class ThreadSummary(BaseModel):
    """One row of a listing or search hit (API.md §2, "ThreadSummary")."""

    id: str
    title: str | None
    workspace_root: str | None
    git_branch: str | None
    git_remote_url: str | None
    provider: str | None
    model: str | None
    tags: list[str]
    is_pinned: bool
    visibility: Visibility
    is_shared_with_support: bool
    owner_id: str
    org_id: str | None
    version: int
    message_count: int
    created_at: str
    last_activity_at: str
    archived_at: str | None


class ThreadPage(BaseModel):
    """A page of summaries; pass ``next_cursor`` back as ``cursor`` for the next page (null: done)."""

    threads: list[ThreadSummary]
    next_cursor: str | None


class SearchHit(BaseModel):
    """One search result: the thread, its score, and where it matched best."""

    thread: ThreadSummary
    score: float
    snippet: str | None = Field(
        description="Best passage; matches in <b>…</b>, the rest HTML-escaped"
    )
    message_index: int | None = Field(description="Index of the message the snippet comes from")


class SearchPage(BaseModel):
    """A page of hits, best first; pass ``next_cursor`` back as ``cursor`` (null: done)."""

    hits: list[SearchHit]
    next_cursor: str | None


class AppendRequest(BaseModel):
    """Body of ``POST /api/threads/{id}/messages``: new messages and, optionally, fresh state.

    Git fields overwrite the stored ones, except ``git_commits``, whose new SHAs are added in
    order after those already stored.
    """

    model_config = ConfigDict(extra="forbid")

    messages: list[Message] = Field(default_factory=list)
    agent_state: AgentState | None = None
    last_activity_at: UtcDatetime | None = None
    git_branch: str | None = None
    git_remote_url: str | None = None
    git_initial_branch: str | None = None
    git_initial_commit_sha: str | None = None
    git_current_commit_sha: str | None = None
    git_commits: list[str] | None = None
    git_start_dirty: StrictBool | None = None
    git_end_dirty: StrictBool | None = None


class AppendResult(BaseModel):
    """Answer to an append: the thread's new version and message count."""

    id: str
    version: int
    message_count: int


def _no_default(schema: dict[str, Any]) -> None:
    """Drop ``default: null`` from a field whose schema does not allow null."""
    schema.pop("default", None)


class ThreadPatch(BaseModel):
    """JSON merge patch (RFC 7396) of the fields API.md §6 lets PATCH change (strict types)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    # Absent means "leave as is"; null is refused (422), so the schema does not offer it.
    metadata: dict[str, Any] | SkipJsonSchema[None] = Field(None, json_schema_extra=_no_default)
    visibility: Visibility | SkipJsonSchema[None] = Field(None, json_schema_extra=_no_default)
    is_shared_with_support: bool | SkipJsonSchema[None] = Field(None, json_schema_extra=_no_default)
    archived: bool | SkipJsonSchema[None] = Field(None, json_schema_extra=_no_default)


class ForkRequest(BaseModel):
    """Body of ``POST /api/threads/{id}/fork``: copy messages ``[0, up_to)`` (all when absent)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    up_to: int | None = Field(default=None, ge=0)


class ConflictProblem(Problem):
    """409 body: the server's version and its full current copy (null when it has none)."""

    server_version: int | None
    client_version: int | None
    current: ThreadOut | None


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a thread route: each status with its problem body (409: the
    ConflictProblem with the current thread)."""
    return _problem_responses(*statuses, models={409: "ConflictProblem"})


__all__ = [
    "AppendRequest",
    "AppendResult",
    "ArchivedFilter",
    "ConflictProblem",
    "FieldError",
    "ForkRequest",
    "Problem",
    "Scope",
    "SearchHit",
    "SearchPage",
    "ThreadOut",
    "ThreadPage",
    "ThreadPatch",
    "ThreadSummary",
    "problem_responses",
]
