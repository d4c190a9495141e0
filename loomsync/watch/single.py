"""One ``loomsync watch`` per store (newcomer finding 2 on issue 17 item 1): two watches on the
same files both save every change, each with a stale idea of the other's, and leave copies.

``$XDG_STATE_HOME/loomsync/watch/watch.lock`` is locked (``flock``, through ``filelock``) for
the watch's whole life, and ``watch.pid`` beside it names the process holding it. The kernel
drops the lock when the process ends, however it ends (kill -9 included), so a lock left
behind never blocks the next watch.
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

from loomsync.config import ClientPaths
from loomsync.errors import WatchRunningError


def lock_file(paths: ClientPaths) -> Path:
    """``$XDG_STATE_HOME/loomsync/watch/watch.lock``."""
    return paths.state_dir / "watch" / "watch.lock"


def hold(paths: ClientPaths) -> FileLock:
    """Take the store's watch lock (release it with ``.release()``), writing this PID to
    ``watch.pid``.

    Raises:
        WatchRunningError: another watch holds it (its PID, when ``watch.pid`` names one).
    """
    path = lock_file(paths)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    pid_file = path.with_name("watch.pid")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        try:
            pid: int | None = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            pid = None
        raise WatchRunningError(pid, paths.state_dir) from None
    pid_file.write_text(f"{os.getpid()}\n")
    return lock


__all__ = ["hold", "lock_file"]
