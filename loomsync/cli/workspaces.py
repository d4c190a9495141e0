"""``--workspace PATH`` of ``list`` and ``search`` (newcomer finding 7): the path as a thread
holds it in ``workspace_root``.

The filter is an exact match on the server and here, so the path is written the way threads
record it: ``~`` expanded, a relative path (``.``) made absolute against the current folder,
``..`` and a trailing slash removed (``/`` stays ``/``). A folder that exists here is
resolved (its symlinks followed), as ``loomsync.git`` stores it and as agents record their
working folder (the physical path ``getcwd`` gives); a path that does not exist here (another
machine's) is kept as written.
"""

from __future__ import annotations

import os
from pathlib import Path


def normalised(workspace: str | None) -> str | None:
    """``workspace`` as ``workspace_root`` holds it (see the module); None stays None and a
    blank value is kept (the server and the store then match nothing)."""
    if workspace is None or not workspace.strip():
        return workspace
    path = Path(os.path.normpath(Path(workspace).expanduser().absolute()))
    if path.exists():
        path = path.resolve()
    return str(path)


__all__ = ["normalised"]
