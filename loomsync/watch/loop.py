"""The event loop of ``loomsync watch`` (issue 17 item 1): file events → :class:`Capture`.

Events come from ``watchfiles`` (inotify on Linux, FSEvents on macOS, through the Rust
``notify`` crate). Folders on filesystems that give no events (NFS, SMB, sshfs, 9p, FUSE, …)
are polled instead (``watchfiles``' ``force_polling``): ``polling = "auto"`` (the default)
decides per start from the mount table, ``"always"`` and ``"never"`` force it, and a watcher
that cannot start (too many inotify watches) falls back to polling with one warning.

A watched folder that does not exist yet (no Codex session ever written) is looked for once a
second; when it appears the watcher restarts with it and its files are read. With ``refresh``
the folders themselves are derived again every :data:`REFRESH_SECONDS` (newcomer findings 7
and 9): an agent whose usual folder appears while the watch runs (installed later), or a
project Crush adds to its ``projects.json``, is watched from then on without a restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

import watchfiles

from loomsync.terminal import printable
from loomsync.watch.capture import Capture
from loomsync.watch.confine import within
from loomsync.watch.sources import Source, source_of

log = logging.getLogger("loomsync.watch")

Polling = Literal["auto", "always", "never"]

#: Filesystem types whose changes the kernel's inotify does not see (another machine writes).
NO_EVENTS = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse", "fuse.sshfs", "sshfs", "vboxsf",
     "afs", "ceph", "glusterfs", "fuse.glusterfs", "davfs", "fuse.rclone"}
)  # fmt: skip

#: Milliseconds ``watchfiles`` waits for more changes before handing a batch over, and its
#: longest wait for an event (then the loop looks for missing folders and the stop flag).
DEBOUNCE_MS = 100
TIMEOUT_MS = 1000

#: Seconds between two derivations of the watched folders (``refresh``): each costs a
#: ``stat`` per usual folder of every agent and a read of Crush's projects.json.
REFRESH_SECONDS = 2.0


class Watched:
    """The watched folders now: ``initial``, replaced by ``refresh()`` at most every
    :data:`REFRESH_SECONDS` (None: fixed). A folder that comes in is logged once."""

    def __init__(
        self, initial: list[Source], refresh: Callable[[], list[Source]] | None = None
    ) -> None:
        """See the class docstring."""
        self.sources = initial
        self.refresh = refresh
        self.due = time.monotonic() + REFRESH_SECONDS

    def now(self) -> list[Source]:
        """The current folders, derived again when due; a ``refresh`` that fails (a
        config.toml being rewritten) keeps the previous ones."""
        if self.refresh is None or time.monotonic() < self.due:
            return self.sources
        self.due = time.monotonic() + REFRESH_SECONDS
        try:
            fresh = self.refresh()
        except Exception as exc:  # a config error mid-run must not stop the watch
            log.warning("watched folders not derived again: %s", printable(str(exc)))
            return self.sources
        known = {source.root for source in self.sources}
        for source in fresh:
            if source.root not in known:
                log.info("now watching %s (%s)", printable(str(source.root)),
                         source.format or "any format")  # fmt: skip
        self.sources = fresh
        return fresh


def _mounts() -> list[tuple[Path, str]]:
    """``(mount point, filesystem type)`` from ``/proc/self/mounts`` (empty elsewhere)."""
    try:
        text = Path("/proc/self/mounts").read_text()
    except OSError:
        return []
    found: list[tuple[Path, str]] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            point = parts[1].replace("\\040", " ")
            found.append((Path(point), parts[2]))
    return found


def filesystem_of(path: Path, mounts: list[tuple[Path, str]] | None = None) -> str | None:
    """The filesystem type ``path`` lives on (the deepest mount point above it), or None."""
    resolved = path.resolve()
    best: tuple[Path, str] | None = None
    for point, kind in _mounts() if mounts is None else mounts:
        if resolved.is_relative_to(point) and (
            best is None or len(point.parts) > len(best[0].parts)
        ):
            best = (point, kind)
    return best[1] if best else None


def needs_polling(roots: Iterable[Path], polling: Polling) -> bool:
    """True when the watcher must poll: ``always``, or ``auto`` with a folder on a filesystem
    without events (:data:`NO_EVENTS`)."""
    if polling != "auto":
        return polling == "always"
    mounts = _mounts()
    return any((filesystem_of(root, mounts) or "") in NO_EVENTS for root in roots)


def run(
    capture: Capture,
    watched: list[Source],
    *,
    polling: Polling = "auto",
    poll_interval: float = 1.0,
    stop: threading.Event | None = None,
    refresh: Callable[[], list[Source]] | None = None,
) -> None:
    """Watch ``watched`` until ``stop`` is set, handing each changed file to ``capture``;
    ``refresh``: derives the folders again (:class:`Watched`), None keeps ``watched``.

    Every folder's files are read once when the watch starts on it (a file unchanged since
    its offset costs one ``stat``), so what was written while no watch ran is imported first.
    """
    stop = stop or threading.Event()
    scanned: set[Path] = set()
    fallback = polled = False
    folders = Watched(watched, refresh)
    while not stop.is_set():
        present = [source for source in folders.now() if source.root.is_dir()]
        for source in present:
            if source.root not in scanned:
                scanned.add(source.root)
                files = capture.scan(source)
                log.info("watching %s (%s): %d file(s)", printable(str(source.root)),
                         source.format or "any format", files)  # fmt: skip
        scanned &= {source.root for source in present}  # a folder removed is read again later
        if not present:
            stop.wait(TIMEOUT_MS / 1000)
            continue
        roots = [source.root for source in present]
        force = fallback or needs_polling(roots, polling)
        if force and not polled:  # said once, not at every restart of the watcher
            log.info("polling every %.1f s", poll_interval)
        polled = force
        try:
            _watch(capture, folders, present, force, poll_interval, stop)
        except OSError as exc:  # inotify limits, a folder gone between is_dir and the watch
            if force or polling == "never":
                log.warning("cannot watch %s: %s", printable(", ".join(map(str, roots))), exc)
                stop.wait(TIMEOUT_MS / 1000)
            else:
                log.warning(
                    "file events unavailable (%s): polling every %.1f s", exc, poll_interval
                )
                fallback = polled = True  # that line said it


def _watch(
    capture: Capture,
    watched: Watched,
    present: list[Source],
    force: bool,
    poll_interval: float,
    stop: threading.Event,
) -> None:
    """One watcher over the folders of ``present``; returns when ``stop`` is set or the set of
    existing folders changed (the caller starts another)."""
    roots = {source.root for source in present}
    changes_seen = watchfiles.watch(
        *sorted(roots),
        watch_filter=None,
        debounce=DEBOUNCE_MS,
        step=50,
        stop_event=stop,
        rust_timeout=TIMEOUT_MS,
        yield_on_timeout=True,
        raise_interrupt=False,
        force_polling=force,
        poll_delay_ms=int(poll_interval * 1000),
        recursive=True,
        ignore_permission_denied=True,
    )
    started = False
    for changes in changes_seen:
        if not started:  # the watcher runs from the first batch on: what changed between the
            started = True  # caller's scan and now was not seen as an event
            for each in present:
                capture.scan(each)
        for change, name in sorted(changes, key=lambda item: item[1]):
            path = Path(name)
            source = source_of(path, present)
            if source is None or not within(path, source.root):
                continue  # outside, or through a symbolic link (loomsync/watch/confine.py)
            if change == watchfiles.Change.deleted:
                capture.removed(path, source)
            elif path.is_dir():
                capture.scan(Source(path, source.format))  # a folder moved in, or made
            elif source.wants(path):
                capture.changed(path, source)
        capture.quiet()  # every batch, and every second without one (yield_on_timeout)
        if {each.root for each in watched.now() if each.root.is_dir()} != roots:
            return


__all__ = [
    "DEBOUNCE_MS",
    "NO_EVENTS",
    "REFRESH_SECONDS",
    "TIMEOUT_MS",
    "Watched",
    "filesystem_of",
    "needs_polling",
    "run",
]
