"""Answers from this machine's threads (offline ``blame`` and ``why``): the same extraction
as the server's index (loomsync.core.provenance), over the threads of one repository."""

from __future__ import annotations

from collections.abc import Iterable

from loomsync.blame.answer import Hit
from loomsync.blame.gitblame import Repository, same_remote
from loomsync.core.document.model import Thread
from loomsync.core.provenance import contains_line, touches


def _of_repository(thread: Thread, repo: Repository) -> bool:
    if same_remote(thread.git_remote_url, repo.remote):
        return True
    return thread.workspace_root == repo.root


def _commits(thread: Thread) -> list[str]:
    shas = [
        *(thread.git_commits or []),
        thread.git_initial_commit_sha,
        thread.git_current_commit_sha,
    ]
    return [s.lower() for s in shas if isinstance(s, str)]


def line_hits(
    threads: Iterable[Thread], repo: Repository, commit: str | None, text: str
) -> list[Hit]:
    """The local threads behind a line of ``repo.path`` (ranked as the server ranks them:
    loomsync.blame.answer.Hit.rank)."""
    hits: list[Hit] = []
    for thread in threads:
        if not _of_repository(thread, repo) or thread.id is None:
            continue
        shas = [
            s for s in _commits(thread) if commit and (s.startswith(commit) or commit.startswith(s))
        ]
        found = [t for t in touches(thread.messages, thread.workspace_root) if t.path == repo.path]
        edits = [t for t in found if t.action != "read"]
        line = [t for t in edits if contains_line(t.text, text)]
        title = thread.metadata.title
        activity = thread.last_activity_at
        if line:
            hits.append(Hit(str(thread.id), "line", line[-1].message_index, shas, title, activity))
        elif shas and found:
            hits.append(
                Hit(
                    str(thread.id),
                    "file",
                    (edits or found)[-1].message_index,
                    shas,
                    title,
                    activity,
                )
            )
        elif shas:
            hits.append(Hit(str(thread.id), "commit", None, shas, title, activity))
    return hits


def commit_hits(threads: Iterable[Thread], commit: str, repo: Repository | None) -> list[Hit]:
    """The local threads that observed ``commit`` (a SHA or a prefix)."""
    hits: list[Hit] = []
    for thread in threads:
        if thread.id is None or (repo is not None and not _of_repository(thread, repo)):
            continue
        shas = [s for s in _commits(thread) if s.startswith(commit) or commit.startswith(s)]
        if shas:
            files = sorted(
                {
                    t.path
                    for t in touches(thread.messages, thread.workspace_root)
                    if t.action != "read"
                }
            )
            hits.append(
                Hit(
                    str(thread.id),
                    "commit",
                    None,
                    sorted(set(shas)),
                    thread.metadata.title,
                    thread.last_activity_at,
                    files,
                )
            )
    return hits
