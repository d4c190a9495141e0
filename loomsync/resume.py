"""Resume a thread: the thread plus what changed in the workspace since it was last saved.

The data behind the CLI's "Resuming thread …" summary: another workspace, another branch, new
commits, uncommitted changes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from loomsync.core.document.model import Thread, format_utc_minute
from loomsync.git import commits_between, read_git_state
from loomsync.store.local import ThreadStore


@dataclass(frozen=True, slots=True)
class ResumeChanges:
    """How the workspace differs from the thread's last save. ``None``: unknown.

    Attributes:
        workspace, previous_workspace: where the session is now / was.
        branch, previous_branch: current branch / the thread's ``git_branch``.
        commit, previous_commit: HEAD now / the thread's ``git_current_commit_sha``.
        new_commits: ``(sha, subject)`` made since, oldest first (None if git cannot tell).
        dirty, previous_dirty: uncommitted changes now / at the last save.
        in_repository: False when the workspace is not a git working tree (or git is missing).
    """

    workspace: str
    previous_workspace: str | None
    in_repository: bool
    branch: str | None = None
    previous_branch: str | None = None
    commit: str | None = None
    previous_commit: str | None = None
    new_commits: list[tuple[str, str]] | None = field(default_factory=list)
    dirty: bool | None = None
    previous_dirty: bool | None = None

    @property
    def workspace_changed(self) -> bool:
        """True when the thread was last saved in another folder."""
        return self.previous_workspace is not None and self.previous_workspace != self.workspace

    @property
    def branch_changed(self) -> bool:
        """True when the branch differs from the thread's."""
        return self.in_repository and self.branch != self.previous_branch

    @property
    def anything(self) -> bool:
        """True if any change is worth telling."""
        return bool(self.workspace_changed or self.branch_changed or self.new_commits or self.dirty)


def _head_moved(commit: str | None, previous: str | None) -> str:
    """``- HEAD is now abc1234 (was 0123456)``; a side that is not known is said in words, never
    ``None`` (issue 16, item 9)."""
    if previous is None:
        return (
            f"- HEAD is now {commit[:7]} (the thread was saved without a commit)" if commit else ""
        )
    if commit is None:
        return f"- no commit checked out now (the thread was saved at {previous[:7]})"
    return f"- HEAD is now {commit[:7]} (was {previous[:7]})"


@dataclass(frozen=True, slots=True)
class Resumed:
    """A thread to resume and the changes since its last save."""

    thread: Thread
    changes: ResumeChanges

    def summary_lines(self) -> list[str]:
        """The "Resuming thread …" summary, one line each (no markup)."""
        thread, c = self.thread, self.changes
        title = f' "{thread.metadata.title}"' if thread.metadata.title else ""
        saved = thread.last_activity_at or thread.updated_at or thread.created_at
        when = f", last saved {format_utc_minute(saved)} UTC" if isinstance(saved, datetime) else ""
        lines = [f"Resuming thread {thread.id}{title} ({len(thread.messages)} messages{when})"]
        if c.workspace_changed:
            lines.append(f"- workspace changed: {c.previous_workspace} -> {c.workspace}")
        if not c.in_repository:
            lines.append(f"- {c.workspace} is not a git repository")
            return lines
        if c.branch_changed:
            lines.append(
                f"- branch changed: {c.previous_branch or '(none)'} -> {c.branch or '(detached)'}"
            )
        if c.new_commits:
            lines.append(f"- {len(c.new_commits)} new commit(s) since the last save:")
            lines += [f"    {sha[:7]} {subject}" for sha, subject in c.new_commits[-10:]]
        elif c.new_commits is None and c.commit != c.previous_commit:
            lines.append(_head_moved(c.commit, c.previous_commit))
        if c.dirty:
            lines.append("- uncommitted changes in the working tree")
        if not c.anything and c.new_commits is not None:
            lines.append("- nothing changed since the last save")
        return lines

    def summary(self) -> str:
        """:meth:`summary_lines` joined with newlines."""
        return "\n".join(self.summary_lines())

    def as_dict(self) -> dict[str, object]:
        """JSON-able form for ``loomsync resume --json``."""
        c = self.changes
        return {
            "thread_id": str(self.thread.id),
            "summary": self.summary_lines(),
            "workspace_changed": c.workspace_changed,
            "branch_changed": c.branch_changed,
            "new_commits": [
                {"sha": sha, "subject": subject} for sha, subject in c.new_commits or []
            ],
            "dirty": c.dirty,
        }


def workspace_changes(thread: Thread, workspace: str | os.PathLike[str]) -> ResumeChanges:
    """Compare the thread's saved workspace and git fields with ``workspace`` now."""
    here = str(Path(workspace).resolve())
    state = read_git_state(workspace)
    if state is None:
        return ResumeChanges(here, thread.workspace_root, in_repository=False)
    new_commits: list[tuple[str, str]] | None = []
    previous = thread.git_current_commit_sha
    if state.commit and previous != state.commit:
        new_commits = commits_between(workspace, previous, state.commit) if previous else None
    return ResumeChanges(
        workspace=here,
        previous_workspace=thread.workspace_root,
        in_repository=True,
        branch=state.branch,
        previous_branch=thread.git_branch,
        commit=state.commit,
        previous_commit=previous,
        new_commits=new_commits,
        dirty=state.dirty,
        previous_dirty=thread.git_end_dirty,
    )


def resume(
    thread_id: str, workspace: str | os.PathLike[str] = ".", *, store: ThreadStore | None = None
) -> Resumed:
    """Load a thread and tell what changed since it was last saved.

    Args:
        thread_id: the thread.
        workspace: the folder the session resumes in (default: the current folder).
        store: where to load from (default: :func:`loomsync.open_store`, closed afterwards).

    Raises:
        ThreadNotFoundError, and the store's other errors.
    """
    if store is None:
        from loomsync.http.connect import open_store

        opened = open_store(background=False)
        try:
            return resume(thread_id, workspace, store=opened)
        finally:
            opened.close()
    thread = store.load(thread_id)
    return Resumed(thread, workspace_changes(thread, workspace))


__all__ = ["ResumeChanges", "Resumed", "resume", "workspace_changes"]
