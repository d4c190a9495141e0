"""Git context of a thread, read with the ``git`` command line (no library, no network).

:func:`snapshot_git_state` records where a session happens: the initial branch, commit and
dirty state once, the current ones on every call, every commit seen (``git_commits``, in
order, no duplicates) and the remote URL normalised to ``host/owner/repo`` (credentials never
kept). Outside a repository, or without git installed, it changes nothing and raises nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from loomsync import edits
from loomsync.core.document.model import Thread

GIT_TIMEOUT = 10.0  # seconds per git command
MAX_NEW_COMMITS = 200  # commits read between two snapshots
_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?!//)(?P<path>.+)$")


def _git(workspace: str | os.PathLike[str], *args: str) -> str | None:
    """Run git in ``workspace``; stdout, or None on any failure (not a repo, no git, timeout)."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", "-C", os.fspath(workspace), *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def run_git(workspace: str | os.PathLike[str], *args: str) -> str | None:
    """``git -C workspace ARGS``'s stdout, or None on any failure (public name of the runner
    every git read of the client uses: no prompt, no optional locks, C locale, a timeout)."""
    return _git(workspace, *args)


def normalize_remote_url(url: str) -> str:
    """``host/owner/repo`` for a git remote URL, without user, password, port or ``.git``.

    ``git@github.com:user/project.git``, ``https://token@github.com/user/project`` and
    ``ssh://git@github.com:22/user/project.git`` all give ``github.com/user/project``. A local
    path (or ``file://`` URL) is returned as the path without ``.git``.
    """
    url = url.strip()
    host: str | None = None
    path = url
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme != "file":
            host = (parts.hostname or "").lower() or None
        path = parts.path
    elif (match := _SCP_LIKE.match(url)) and not re.match(r"^[A-Za-z]:[\\/]", url):
        host, path = match.group("host").lower(), match.group("path")
    path = path.rstrip("/")
    path = path.removesuffix(".git")
    if host is None:
        return path
    return f"{host}/{path.strip('/')}"


@dataclass(frozen=True, slots=True)
class GitState:
    """What git says about a working tree now."""

    branch: str | None  # None when HEAD is detached
    commit: str | None  # None before the first commit
    dirty: bool  # any change, staged, unstaged or untracked
    remote_url: str | None  # normalised; origin first, else the first remote


def read_git_state(workspace: str | os.PathLike[str]) -> GitState | None:
    """The working tree's state, or None outside a repository or without git."""
    status = _git(workspace, "status", "--porcelain=v2", "--branch")
    if status is None:
        return None
    branch: str | None = None
    commit: str | None = None
    dirty = False
    for line in status.splitlines():
        if line.startswith("# branch.oid "):
            value = line.split(" ", 2)[2]
            commit = None if value == "(initial)" else value
        elif line.startswith("# branch.head "):
            value = line.split(" ", 2)[2]
            branch = None if value == "(detached)" else value
        elif line and not line.startswith("#"):
            dirty = True
    remotes = _git(workspace, "config", "--get-regexp", r"^remote\..*\.url$") or ""
    urls = dict(line.split(" ", 1) for line in remotes.splitlines() if " " in line)
    url = urls.get("remote.origin.url") or next(iter(urls.values()), None)
    return GitState(branch, commit, dirty, normalize_remote_url(url) if url else None)


def commits_between(
    workspace: str | os.PathLike[str], since: str | None, until: str
) -> list[tuple[str, str]] | None:
    """``(sha, subject)`` of commits reachable from ``until`` but not ``since``, oldest first.

    At most :data:`MAX_NEW_COMMITS`. None when git cannot tell (unknown SHA, not a repo).
    """
    revision = f"{since}..{until}" if since else until
    out = _git(
        workspace,
        "log",
        "--reverse",
        f"--max-count={MAX_NEW_COMMITS}",
        "--format=%H%x09%s",
        revision,
    )
    if out is None:
        return None
    return [
        (sha, subject)
        for sha, _, subject in (line.partition("\t") for line in out.splitlines() if line)
    ]


def snapshot_git_state(thread: Thread, workspace: str | os.PathLike[str]) -> Thread:
    """The thread with its git fields brought up to date with ``workspace``.

    - ``git_initial_branch``, ``git_initial_commit_sha``, ``git_start_dirty``: set once.
    - ``git_branch``, ``git_current_commit_sha``, ``git_end_dirty``, ``git_remote_url``: now.
    - ``git_commits``: the commits made since the last snapshot, then HEAD, each once.
    - ``workspace_root``: the workspace path, if not set yet.

    Outside a repository or without git: the thread unchanged. Never raises for git.
    """
    state = read_git_state(workspace)
    if state is None:
        return thread
    fields: dict[str, object] = {
        "git_branch": state.branch,
        "git_current_commit_sha": state.commit,
        "git_end_dirty": state.dirty,
    }
    if state.remote_url:
        fields["git_remote_url"] = state.remote_url
    if thread.git_initial_branch is None:
        fields["git_initial_branch"] = state.branch
    if thread.git_initial_commit_sha is None:
        fields["git_initial_commit_sha"] = state.commit
    if thread.git_start_dirty is None:
        fields["git_start_dirty"] = state.dirty
    if thread.workspace_root is None:
        fields["workspace_root"] = str(Path(workspace).resolve())
    commits = list(thread.git_commits)
    if state.commit:
        previous = thread.git_current_commit_sha
        between = commits_between(workspace, previous, state.commit) if previous else None
        for sha in [*(sha for sha, _ in between or []), state.commit]:
            if sha not in commits:
                commits.append(sha)
    fields["git_commits"] = commits
    return edits.with_fields(thread, **fields)


__all__ = [
    "GitState",
    "commits_between",
    "normalize_remote_url",
    "read_git_state",
    "snapshot_git_state",
]
