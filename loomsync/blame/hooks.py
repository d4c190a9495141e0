"""``loomsync hooks install``: a ``prepare-commit-msg`` hook that writes
``Loomsync-Thread: T-…`` trailers for the sessions live in this repository, so a commit names
its conversation even after a rebase, and for people without loomsync.

"Live": a thread of this machine's store whose ``workspace_root`` is the repository's work
tree, or whose ``git_remote_url`` is its remote, active (``last_activity_at``) within the
last :data:`LIVE_MINUTES` minutes (``LOOMSYNC_LIVE_MINUTES`` changes it). The hook never
stops a commit: any failure leaves the message as it was.
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from loomsync.blame.gitblame import TRAILER, same_remote
from loomsync.git import run_git
from loomsync.store.local import LocalThreadStore

LIVE_MINUTES = 30.0
MARKER = "# loomsync prepare-commit-msg hook"
#: Sources of a message (git's second hook argument) left alone: a merge's or a squash's
#: message is git's own summary, not a session's work.
_SKIPPED_SOURCES = ("merge", "squash")
#: Files in the git folder while git replays commits written earlier (a rebase, ``am``, a
#: cherry-pick or revert): those commits are not the live session's work, so none is stamped.
_REPLAYING = ("rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer")
#: A thread active up to this far in the future (clock skew between machines) is live; a
#: later ``last_activity_at`` is a bogus date, not a live session.
_SKEW = timedelta(minutes=5)


class HookExists(Exception):
    """A ``prepare-commit-msg`` hook not written by loomsync is in the way."""


def hooks_folder(repo_root: str) -> Path:
    """The repository's hooks folder (``core.hooksPath`` honoured)."""
    out = run_git(repo_root, "rev-parse", "--git-path", "hooks")
    folder = Path(out.strip()) if out else Path(".git/hooks")
    return folder if folder.is_absolute() else Path(repo_root) / folder


def install(repo_root: str, executable: str | None = None, *, force: bool = False) -> Path:
    """Write the hook (mode 0755); returns its path. Raises :class:`HookExists` when another
    hook is there (``force`` replaces it)."""
    folder = hooks_folder(repo_root)
    folder.mkdir(parents=True, exist_ok=True)
    hook = folder / "prepare-commit-msg"
    if hook.exists() and MARKER not in hook.read_text(errors="replace") and not force:
        raise HookExists(f"{hook} exists and is not loomsync's (--force replaces it)")
    command = executable or sys.argv[0]
    hook.write_text(
        f"#!/bin/sh\n{MARKER}: adds {TRAILER} trailers for live sessions (docs/client.md)\n"
        f'{shlex.quote(command)} hooks trailer "$1" "$2" >/dev/null 2>&1 || true\n'
    )
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return hook


def live_minutes() -> float:
    """:data:`LIVE_MINUTES`, or ``LOOMSYNC_LIVE_MINUTES`` when it is a positive number."""
    try:
        value = float(os.environ.get("LOOMSYNC_LIVE_MINUTES", ""))
    except ValueError:
        return LIVE_MINUTES
    return value if value > 0 else LIVE_MINUTES


def live_threads(
    store: LocalThreadStore, root: str, remote: str | None, now: datetime | None = None
) -> list[str]:
    """Ids of the live threads of the repository (module docstring), newest first; archived
    threads and threads dated in the future (beyond a few minutes of clock skew) are not."""
    now = now or datetime.now(UTC)
    since = now - timedelta(minutes=live_minutes())
    live: list[str] = []
    for summary in store.list():
        if summary.last_activity_at is None or summary.last_activity_at < since:
            break  # newest first: the rest are older
        if summary.last_activity_at > now + _SKEW:
            continue
        if summary.workspace_root == root or same_remote(summary.git_remote_url, remote):
            live.append(summary.id)
    return live


def replaying(root: str) -> bool:
    """Whether git is replaying earlier commits in ``root`` (a rebase, ``git am``, a
    cherry-pick or revert: :data:`_REPLAYING`, or ``GIT_REFLOG_ACTION`` naming one)."""
    action = os.environ.get("GIT_REFLOG_ACTION", "")
    if action.split(" ")[0] in ("rebase", "cherry-pick", "revert", "am"):
        return True
    args = [arg for name in _REPLAYING for arg in ("--git-path", name)]
    out = run_git(root, "rev-parse", *args)  # one process: a line per path, in order
    for line in (out or "").splitlines():
        found = Path(line.strip())
        if (found if found.is_absolute() else Path(root) / found).exists():
            return True
    return False


def add_trailers(message_file: Path, root: str, thread_ids: list[str], source: str = "") -> bool:
    """Add one trailer per thread to the commit message (``git interpret-trailers``, so an
    existing one is not repeated); False when nothing was added."""
    if not thread_ids or source in _SKIPPED_SOURCES or replaying(root):
        return False
    args = ["interpret-trailers", "--in-place", "--if-exists", "addIfDifferent"]
    for thread_id in thread_ids:
        args += ["--trailer", f"{TRAILER}: {thread_id}"]
    return run_git(root, *args, str(message_file)) is not None
