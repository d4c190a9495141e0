"""The rule that keeps ``loomsync watch`` in the folders it was given (issue 27 item 6).

A watched folder may hold symbolic links, made before the watch started or while it runs: to a
folder or a file elsewhere (another project, a mounted disk, ``/``), or to another part of the
same folder. None is followed: a path is read only when every component of it below the
watched folder, the last one included, is not a symbolic link (:func:`within`). The check is
made on every path the watcher hands over, whatever the event library reports: ``notify``
(through ``watchfiles``) follows links when it adds its recursive watches, so a file changing
behind a link made before the start is reported under the link's path, and a link made while
the watch runs is reported as a new folder. The start-up scan walks without following links
(``os.walk``), and a file is opened only when it is a regular file itself (``lstat``).

The folder given (a watched root) may itself be a link, or lie below one: the user named it.
"""

from __future__ import annotations

import stat
from pathlib import Path


def within(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or lies below it through no symbolic link: each
    component after ``root``, ``path``'s own last one included, is looked at with ``lstat``.

    A component that does not exist (a file deleted, a folder removed since the event) is no
    link; a ``..`` component, or a ``path`` not under ``root``, is never within. Raises
    nothing: a component that cannot be looked at (permission denied) is not within.
    """
    try:
        below = path.relative_to(root)
    except ValueError:
        return False
    current = root
    for part in below.parts:
        if part == "..":
            return False
        current = current / part
        try:
            mode = current.lstat().st_mode
        except FileNotFoundError:
            return True  # nothing below a missing component exists to be a link
        except OSError:
            return False
        if stat.S_ISLNK(mode):
            return False
    return True


__all__ = ["within"]
