"""Response models of /api/provenance and /api/threads/{id}/provenance (issue 32)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.threads.schemas import ThreadSummary

Action = Literal["read", "edit", "write", "delete"]


class Touch(BaseModel):
    """A file one message's tool call touched."""

    path: str = Field(description="Relative to the repository root (absolute when outside it)")
    message_index: int = Field(description="Index of the message in conversation.messages")
    action: Action
    via: Literal["tool", "shell"] = Field(description="A file tool, or a shell command line")


class CommitHit(BaseModel):
    """A thread that observed a commit: the SHAs that matched and the files it changed."""

    thread: ThreadSummary
    commits: list[str]
    touches: list[Touch] = Field(description="Edits, writes and deletions, by message (≤ 100)")


class CommitPage(BaseModel):
    """Threads by commit, newest first; ``next_cursor`` as for a list (null: done)."""

    hits: list[CommitHit]
    next_cursor: str | None


class FileHit(BaseModel):
    """A thread that touched a file, with the messages that touched it (≤ 100)."""

    thread: ThreadSummary
    touches: list[Touch]


class FilePage(BaseModel):
    """Threads by file, newest first."""

    hits: list[FileHit]
    next_cursor: str | None


class LineHit(BaseModel):
    """A thread behind a line, best first (``match``: ``line`` > ``file`` > ``commit``)."""

    thread: ThreadSummary
    match: Literal["line", "file", "commit"]
    message_index: int | None = Field(description="The edit holding the line, or the last edit")
    commits: list[str]


class LineAnswer(BaseModel):
    """The threads behind a line (at most ``limit``; not paged)."""

    hits: list[LineHit]


class ThreadProvenance(BaseModel):
    """What one thread observed and touched."""

    id: str
    commits: list[str]
    touches: list[Touch] = Field(description="Every file touch, by message (≤ 5000)")
