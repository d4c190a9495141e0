"""Request and response models of /api/threads (API.md sections 2 and 6)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from loomsync.model import AgentState, Message, Thread, UtcDatetime, Visibility

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


class ThreadPatch(BaseModel):
    """JSON merge patch (RFC 7396) of the fields API.md §6 lets PATCH change (strict types)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    metadata: dict[str, Any] | None = None
    visibility: Visibility | None = None
    is_shared_with_support: bool | None = None
    archived: bool | None = None


class ForkRequest(BaseModel):
    """Body of ``POST /api/threads/{id}/fork``: copy messages ``[0, up_to)`` (all when absent)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    up_to: int | None = Field(default=None, ge=0)


class FieldError(BaseModel):
    """One validation error: where (``loc``) and what (``msg``); the input is never echoed."""

    loc: list[str | int]
    msg: str


class Problem(BaseModel):
    """RFC 9457 problem details, as every error of this API is rendered (API.md §7)."""

    type: str
    title: str
    status: int
    detail: str
    code: str
    errors: list[FieldError] | None = None


class ConflictProblem(Problem):
    """409 body: the server's version and its full current copy (null when it has none)."""

    server_version: int | None
    client_version: int | None
    current: ThreadOut | None


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each status documented with its problem body."""
    descriptions = {
        400: "Malformed request (JSON, header, id or cursor)",
        401: "Missing, invalid or expired bearer token",
        403: "Readable but not writable by the caller",
        404: "No such thread, or not readable by the caller",
        409: "Version conflict; the body holds the current thread",
        410: "The thread was deleted",
        413: "Body or message count over the limit",
        422: "Valid JSON that is not a valid document",
        428: "If-Match is required",
        503: "The database is unavailable; retry after Retry-After seconds",
    }
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        name = "ConflictProblem" if status == 409 else "Problem"
        out[status] = {
            "description": descriptions[status],
            "content": {
                "application/problem+json": {"schema": {"$ref": f"#/components/schemas/{name}"}}
            },
        }
    return out
