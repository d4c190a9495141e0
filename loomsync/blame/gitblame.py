"""What git says about a file's lines and a commit: ``git blame --porcelain`` and the
``Loomsync-Thread`` trailers of commit messages (the hook of :mod:`loomsync.blame.hooks`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from loomsync.git import normalize_remote_url, run_git

TRAILER = "Loomsync-Thread"
_THREAD_ID = re.compile(r"T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_ZERO = "0" * 40


@dataclass(frozen=True, slots=True)
class BlamedLine:
    """One line of a file as ``git blame`` gives it: ``commit`` (None: not committed yet),
    ``number`` (1-based, in the working file), ``text`` (without its newline)."""

    commit: str | None
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Repository:
    """Where a file lives: the work tree ``root``, its ``remote`` (normalised, or None), and
    the file's ``path`` relative to the root (POSIX)."""

    root: str
    remote: str | None
    path: str


def locate(file: Path) -> Repository | None:
    """The repository holding ``file``; None outside a work tree (or without git)."""
    folder = file.parent if not file.is_dir() else file
    top = run_git(folder, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    root = top.strip()
    remotes = run_git(root, "config", "--get-regexp", r"^remote\..*\.url$") or ""
    urls = dict(line.split(" ", 1) for line in remotes.splitlines() if " " in line)
    url = urls.get("remote.origin.url") or next(iter(urls.values()), None)
    # the file itself as git tracks it: a symlink is blamed as the link, never followed out
    where = Path(os.path.realpath(file)) if file.is_dir() else _real_parent(file)
    try:
        path = where.relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return None  # outside the work tree git named
    return Repository(root, normalize_remote_url(url) if url else None, path)


def _real_parent(file: Path) -> Path:
    return Path(os.path.realpath(file.parent if str(file.parent) else ".")) / file.name


def same_remote(recorded: str | None, remote: str | None) -> bool:
    """Whether a thread's recorded ``git_remote_url`` (as its agent wrote it:
    ``https://github.com/a/b.git``, ``git@github.com:a/b``…) is the repository ``remote``
    (normalised, :func:`loomsync.git.normalize_remote_url`); case-insensitive, as the
    server's ``repository`` filter (app/provenance/queries.py ``remote_key``)."""
    if not recorded or not remote:
        return False
    return normalize_remote_url(recorded).lower() == normalize_remote_url(remote).lower()


def blame(repo: Repository, first: int | None = None, last: int | None = None) -> list[BlamedLine]:
    """``git blame --porcelain`` of the file, lines ``first``..``last`` (1-based, inclusive;
    all when None); ``[]`` when git refuses (a range past the end, a file not tracked)."""
    args = ["blame", "--porcelain"]
    if first is not None:
        args += ["-L", f"{first},{last if last is not None else first}"]
    out = run_git(repo.root, *args, "--", repo.path)
    if out is None:
        return []
    lines: list[BlamedLine] = []
    commit = ""
    number = 0
    for raw in out.split("\n"):
        if raw.startswith("\t"):
            lines.append(BlamedLine(None if commit == _ZERO else commit, number, raw[1:]))
            continue
        head = raw.split(" ")
        if len(head) >= 3 and len(head[0]) in (40, 64) and head[1].isdigit():
            commit, number = head[0], int(head[2])
    return lines


def trailer_threads(root: str, commit: str) -> list[str]:
    """Thread ids named by ``Loomsync-Thread:`` trailers of ``commit``'s message, in order."""
    out = run_git(root, "log", "-1", f"--format=%(trailers:key={TRAILER},valueonly)", commit)
    return list(dict.fromkeys(_THREAD_ID.findall(out or "")))


def full_sha(root: str, ref: str) -> str | None:
    """The commit ``ref`` names (a SHA prefix, a branch), or None."""
    out = run_git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return out.strip() if out else None
