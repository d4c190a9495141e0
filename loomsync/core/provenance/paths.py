"""Paths of touched files, relative to the repository root (POSIX separators)."""

from __future__ import annotations

import posixpath
import re

_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")

#: Longest path kept (characters); longer ones are not file names an agent really touched.
MAX_PATH_CHARS = 1024


def relative_path(path: str, root: str | None, cwd: str | None = None) -> str | None:
    """``path`` relative to the repository ``root``, normalised (``./a/../b`` is ``b``).

    A relative ``path`` is read against ``cwd`` (the tool's working folder) when given, else
    against ``root``. Returns None for what names no file: empty text, ``../x``, the root
    itself, ``~/…`` (a home folder we cannot see), text with a NUL or newline, or more than
    :data:`MAX_PATH_CHARS` characters. With no root, or outside it, an absolute path is kept
    absolute (``/etc/hosts`` when the root is ``/repo``): counted as touched, never equal to a
    repository path. Windows paths (``C:\\x\\y``) are read as ``/c:/x/y``.
    """
    path = path.strip()
    if not path or len(path) > MAX_PATH_CHARS or "\x00" in path or "\n" in path:
        return None
    if path.startswith("file://"):
        path = path[len("file://") :]
    if _DRIVE.match(path) or (root and _DRIVE.match(root)):
        # Windows (Copilot CLI, Roo on Windows): one spelling, drive letters compared lowercased
        path = _windows(path)
        root = _windows(root) if root else root
        cwd = _windows(cwd) if cwd else cwd
    if path == "~" or path.startswith("~/"):
        return None  # the home folder is never the repository root we can see
    base = (root.rstrip("/") or "/") if root else None
    if not posixpath.isabs(path) and cwd and posixpath.isabs(cwd):
        path = posixpath.join(cwd, path)
    if posixpath.isabs(path):
        full = posixpath.normpath(path)
        if base is None:
            return full
        if full == base:
            return None
        prefix = base if base.endswith("/") else base + "/"
        if not full.startswith(prefix):
            return full  # outside the repository: kept whole (never matches a relative path)
        return full[len(prefix) :]
    relative = posixpath.normpath(path)
    if relative in (".", "") or relative == ".." or relative.startswith("../"):
        return None
    return relative


def _windows(path: str) -> str:
    """``C:\\dev\\x`` as ``/c:/dev/x``: forward slashes, a lowercase drive, absolute."""
    path = path.replace("\\", "/")
    if _DRIVE.match(path):
        return "/" + path[0].lower() + path[1:]
    return path
