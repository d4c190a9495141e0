"""``loomsync watch``: capture every session as it is written (issue 17 item 1).

Modules, one job each: :mod:`~loomsync.watch.sources` (which folders, which format),
:mod:`~loomsync.watch.offsets` (where each file was read up to, across restarts),
:mod:`~loomsync.watch.tailer` (the complete lines after an offset),
:mod:`~loomsync.watch.capture` (a changed file → its sessions saved) and
:mod:`~loomsync.watch.loop` (file events → capture). :func:`watch` puts them together with
the store and the background sync (:class:`loomsync.sync.worker.BackgroundSync`, whose backoff
the queue keeps), and logs one line per import and per sync::

    from loomsync.watch import watch
    watch(stop=threading.Event())  # until stop is set
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from loomsync.config import ClientConfig, ClientPaths, default_paths, load_config
from loomsync.errors import ConfigError
from loomsync.http.connect import open_store
from loomsync.importers.exclude import Exclusions
from loomsync.importers.run import import_owner
from loomsync.store.summary import SyncOutcome
from loomsync.sync.syncing import SyncingThreadStore
from loomsync.sync.worker import BackgroundSync
from loomsync.terminal import printable
from loomsync.watch.capture import Capture, Saved
from loomsync.watch.loop import run
from loomsync.watch.offsets import Offsets
from loomsync.watch.single import hold
from loomsync.watch.sources import Source, sources

log = logging.getLogger("loomsync.watch")


def offsets_file(paths: ClientPaths) -> Path:
    """``$XDG_STATE_HOME/loomsync/watch/offsets.sqlite3``."""
    return paths.state_dir / "watch" / "offsets.sqlite3"


def _saved_line(event: Saved) -> str:
    what = "new thread" if event.created else "updated"
    change = f"+{event.added}" + (f", {event.rewritten} grown in place" if event.rewritten else "")
    return printable(
        f"imported {event.path} ({event.format}): {event.thread_id} {what},"
        f" {event.messages} messages ({change})"
    )


def _sync_line(outcome: SyncOutcome) -> tuple[int, str]:
    detail = f": {outcome.detail}" if outcome.detail else ""
    level = logging.INFO if outcome.ok else logging.WARNING
    if outcome.status == "forked":
        level = logging.WARNING
    version = f" (server version {outcome.version})" if outcome.version is not None else ""
    return level, printable(
        f"sync {outcome.thread_id} {outcome.op}: {outcome.status}{version}{detail}"
    )


def watch(*, paths: ClientPaths | None = None, stop: threading.Event | None = None) -> list[Source]:
    """Watch the configured folders (:func:`loomsync.watch.sources.sources`) until ``stop``
    is set: import what each session file gains, save it locally, and keep the sync queue
    draining while logged in. Returns the folders it watched.

    Raises:
        ConfigError: config.toml is invalid (before anything is watched).
        WatchRunningError: another watch runs on this store (:mod:`loomsync.watch.single`).
    """
    paths = paths or default_paths()
    config = load_config(paths)
    lock = hold(paths)  # for the process's life; the kernel drops it however the process ends
    try:
        return _watch(paths, config, stop)
    finally:
        lock.release()


#: How often a running watch reads the login again (seconds): a ``loomsync logout`` stops
#: sending within this time, a ``loomsync login`` starts it (newcomer finding 3).
LOGIN_CHECK_SECONDS = 1.0


def _login_of(config: ClientConfig) -> tuple[str | None, str | None]:
    """What a login is made of: the server URL and the token (config.toml, the token file, or
    ``LOOMSYNC_*`` variables)."""
    return config.server_url, config.token.get_secret_value() if config.token else None


def _until_login_changes(
    paths: ClientPaths,
    login: tuple[str | None, str | None],
    stop: threading.Event,
    ended: threading.Event,
) -> None:
    """Set ``ended`` once the saved login differs from ``login`` (or ``stop`` is set); a
    config being rewritten (unreadable for a moment) counts as unchanged."""
    while not ended.is_set() and not stop.wait(LOGIN_CHECK_SECONDS):
        try:
            now = _login_of(load_config(paths))
        except ConfigError:
            continue
        if now != login:
            log.info("the login changed: %s", "sending again" if now[1] else "logged out")
            break
    ended.set()


#: How many folders the start-up line names before "and N more" (newcomer finding 7).
NAMED_FOLDERS = 3


def started_line(watched: list[Source], offsets_path: Path) -> str:
    """The watch's first log line, a few hundred characters at most (newcomer finding 7):
    ``started: 5 folder(s) to watch (2 not there yet: ~/a, ~/b); offsets in …`` (the home
    folder written ``~``), naming the first :data:`NAMED_FOLDERS` folders not there yet and
    counting the rest ("and N more")."""
    waiting = [_short(source.root) for source in watched if not source.root.is_dir()]
    named = ", ".join(waiting[:NAMED_FOLDERS])
    if len(waiting) > NAMED_FOLDERS:
        named += f" and {len(waiting) - NAMED_FOLDERS} more"
    absent = f" ({len(waiting)} not there yet: {named})" if waiting else ""
    where = _short(offsets_path)
    return printable(f"started: {len(watched)} folder(s) to watch{absent}; offsets in {where}")


def _short(path: Path) -> str:
    """``path`` with the home folder written ``~`` (``~/.codex/sessions``)."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except ValueError:
        return str(path)


def _watch(paths: ClientPaths, config: ClientConfig, stop: threading.Event | None) -> list[Source]:
    stop = stop or threading.Event()
    offsets = Offsets(offsets_file(paths))
    watched = sources(config.watch, exclusions=Exclusions.of(config.imports))
    log.info("%s", started_line(watched, offsets.path))
    try:
        while not stop.is_set():  # one round per login: a logout or a login starts the next
            ended = threading.Event()
            monitor = threading.Thread(
                target=_until_login_changes,
                args=(paths, _login_of(config), stop, ended),
                name="loomsync-watch-login",
                daemon=True,
            )
            monitor.start()
            try:
                _capture(paths, config, watched, offsets, ended)
            finally:
                ended.set()
                monitor.join()
            if not stop.is_set():
                config = load_config(paths)
    finally:
        offsets.close()
    return watched


def _capture(
    paths: ClientPaths,
    config: ClientConfig,
    watched: list[Source],
    offsets: Offsets,
    ended: threading.Event,
) -> None:
    """Capture with the store and background sync of one login until ``ended`` is set."""
    store = open_store(paths=paths, config=config, background=False)
    assert isinstance(store, SyncingThreadStore)
    worker: BackgroundSync | None = None

    def synced(outcome: SyncOutcome) -> None:
        level, line = _sync_line(outcome)
        log.log(level, "%s", line)

    if store.client is not None:
        worker = BackgroundSync(store.engine, store.queue, progress=synced)
    else:
        log.warning("not logged in: sessions are kept here and sent once you log in")

    def saved(event: Saved) -> None:
        log.info("%s", _saved_line(event))
        if worker is not None:
            worker.wake()

    try:
        owner = import_owner(paths, config)
        capture = Capture(
            store, offsets, owner, on_saved=saved, stop=ended,
            exclusions=Exclusions.of(config.imports),
        )  # fmt: skip
        run(
            capture,
            watched,
            polling=config.watch.polling,
            poll_interval=config.watch.poll_interval,
            stop=ended,
            refresh=lambda: sources(config.watch, exclusions=Exclusions.of(config.imports)),
        )
    finally:
        if worker is not None:
            worker.stop(timeout=5.0)
        store.close()


__all__ = ["Capture", "Saved", "Source", "offsets_file", "sources", "watch"]
