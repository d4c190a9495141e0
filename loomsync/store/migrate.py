"""Folders of the first format (one pretty ``<id>.json`` per thread, rewritten whole on every
save) become thread logs (``<id>.jsonl``, :mod:`loomsync.store.threadlog`) the first time a
store opens them (issue 15 item 1).

Under a folder-wide lock, each ``<id>.json`` is read, written (as it is: no content changes;
the next save of the thread redacts it as every save does) as ``<id>.jsonl`` (a
whole rewrite, fsynced) and then moved to ``.backup-v1/``; the marker ``.format`` is written
last, so later opens cost one ``stat``. A crash at any point leaves a state the next open
finishes: a ``.json`` still in place is converted again (a ``.jsonl`` already holding the same
thread is kept as it is; one holding less or something else is brought to the ``.json``'s
content), a ``.json`` already backed up is gone from the folder. A ``.json`` that does not parse
is quarantined as the store does with any corrupt file.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock

from loomsync import edits
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.errors import CorruptThreadError
from loomsync.store.files import atomic_write, ensure_dir, fsync_dir, locked
from loomsync.store.summaries import stamp_of

if TYPE_CHECKING:
    from loomsync.store.local import LocalThreadStore

MARKER = ".format"
BACKUP = ".backup-v1"
OLD_SUFFIX = ".json"


def is_old_thread_file(name: str) -> bool:
    """True for ``T-<uuid>.json`` names, the first format's thread files."""
    return name.startswith("T-") and name.endswith(OLD_SUFFIX) and len(name) == 38 + 5


def marker_lock(store: LocalThreadStore) -> FileLock:
    """The lock held while the marker is written: the one lock :func:`remove_stray_temps`
    must try for a marker's temporary file, or a store opened meanwhile by another process
    deletes the temporary file under its writer (tests/client/test_crash.py race)."""
    return FileLock(str(store.locks_dir / "format.lock"))


def migrate(store: LocalThreadStore) -> int:
    """Convert the store folder's old thread files, unless its marker says that was done;
    returns how many were converted (quarantined ones not counted).

    Raises:
        StoreLockedError: another process holds the folder's migration lock too long.
        OSError: a write failed; the files not yet converted stay where they are, and the
            next open carries on.
    """
    marker = store.root / MARKER
    if marker.is_file():
        return 0
    converted = 0
    with locked(FileLock(str(store.locks_dir / "migrate.lock")), store.lock_timeout):
        if marker.is_file():
            return 0  # another process finished while this one waited
        with os.scandir(store.root) as entries:
            names = sorted(e.name for e in entries if is_old_thread_file(e.name))
        for name in names:
            converted += _convert(store, store.root / name)
        atomic_write(marker, b"2\n", lock=marker_lock(store))
    return converted


def _convert(store: LocalThreadStore, old: Path) -> int:
    thread_id = old.name[: -len(OLD_SUFFIX)]
    with store.locked(thread_id):
        try:
            with open(old, "rb") as handle:
                stamp = stamp_of(os.fstat(handle.fileno()))
                data = handle.read()
        except FileNotFoundError:
            return 0
        try:
            thread = codec.decode_thread(data)
            if thread.id is not None and thread.id != thread_id:
                raise ValueError(f"it holds thread {thread.id}")
        except ValueError as exc:
            store.set_aside(thread_id, old, stamp, str(exc))
            return 0
        if thread.id is None:
            thread = edits.with_fields(thread, id=ThreadId.parse(thread_id))
        with contextlib.suppress(CorruptThreadError):
            store.head(thread_id)  # a .jsonl that is not a log is set aside, then rewritten
        store.write_as_is(thread)  # as it was (the next save redacts); nothing if the same
        backup = ensure_dir(store.root / BACKUP)
        os.replace(old, backup / old.name)
        fsync_dir(backup)
        fsync_dir(store.root)
    return 1


__all__ = ["BACKUP", "MARKER", "is_old_thread_file", "migrate"]
