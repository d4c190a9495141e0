"""Crash-safe file writes (API.md section 9): same-folder temp file, fsync, rename, fsync folder.

A reader never sees an empty or half-written file: it sees the old content or the new, whole.
A process killed mid-write leaves at most a temporary file named ``.<name>.<pid>.<hex>.tmp``
beside the target; :func:`remove_stray_temps` removes those once no writer holds the lock.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from loomsync.errors import StoreLockedError

FILE_MODE = 0o600  # threads are private conversations: owner read/write only
DIR_MODE = 0o700
TEMP_SUFFIX = ".tmp"
DEFAULT_LOCK_TIMEOUT = 30.0  # seconds


def ensure_dir(path: Path) -> Path:
    """Create a folder (and parents) with mode 0700 if missing; return it."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    return path


def fsync_dir(path: Path) -> None:
    """fsync a folder so a rename inside it survives a power cut (no-op where unsupported)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def temp_name(path: Path) -> Path:
    """A fresh temporary path beside ``path``: ``.<name>.<pid>.<hex>.tmp``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}")


def target_of_temp(temp: Path) -> str | None:
    """The target file name a temporary file was written for, or None if not one of ours."""
    name = temp.name
    if not (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return None
    parts = name[1 : -len(TEMP_SUFFIX)].rsplit(".", 2)
    return parts[0] if len(parts) == 3 and parts[1].isdigit() else None


@contextlib.contextmanager
def locked(lock: BaseFileLock, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold ``lock`` (re-entrant within one thread).

    Raises:
        StoreLockedError: not acquired within ``timeout`` seconds.
    """
    try:
        lock.acquire(timeout=timeout)
    except Timeout:
        raise StoreLockedError(f"{lock.lock_file} is locked by another process") from None
    try:
        yield
    finally:
        lock.release()


def atomic_write(
    path: Path,
    data: bytes,
    *,
    lock: BaseFileLock | None = None,
    timeout: float = DEFAULT_LOCK_TIMEOUT,
) -> None:
    """Replace ``path`` with ``data`` atomically and durably, under a file lock.

    Writes a temporary file in the same folder (mode 0600), fsyncs it, renames it over
    ``path`` with ``os.replace``, then fsyncs the folder.

    Args:
        path: the file to write.
        data: its complete new content.
        lock: the lock to hold (re-entrant, so a caller may already hold it); default a
            ``FileLock`` on ``<path>.lock``.
        timeout: seconds to wait for the lock.

    Raises:
        StoreLockedError: the lock was not acquired in time.
        OSError: the write failed (disk full, permissions); ``path`` is then unchanged.
    """
    with locked(lock or FileLock(f"{path}.lock"), timeout):
        temp = temp_name(path)
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        fsync_dir(path.parent)


def remove_stray_temps(folder: Path, lock_for: Callable[[str], BaseFileLock]) -> list[Path]:
    """Delete temporary files left by killed writers; return the paths removed.

    A temporary file is only removed while its target's lock can be taken at once, so a live
    writer's file (its writer holds the lock) is never touched.
    """
    removed: list[Path] = []
    try:
        candidates = [p for p in folder.iterdir() if target_of_temp(p)]
    except FileNotFoundError:
        return removed
    for temp in candidates:
        target = target_of_temp(temp)
        assert target is not None
        lock = lock_for(target)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            continue
        try:
            temp.unlink()
            removed.append(temp)
        except FileNotFoundError:
            pass
        finally:
            lock.release()
    return removed


__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "FILE_MODE",
    "atomic_write",
    "ensure_dir",
    "fsync_dir",
    "locked",
    "remove_stray_temps",
    "target_of_temp",
    "temp_name",
]
