"""One changed file → its sessions saved (issue 17 item 1), through the importers and the store.

For a JSON Lines format (Codex rollouts, Claude Code transcripts: an importer with
``from_records``) only the complete lines after the file's offset are read; the file's records
stay in memory (for a few files at a time, :data:`OPEN_FILES`), because a Claude Code
conversation is a tree and a Codex tool call joins the message before it, so the messages are
rebuilt from every record, in memory. A file first seen by this process (or evicted) is read
from its start once. Other formats (Gemini CLI JSON, Aider Markdown) are read whole when their
size or modification time changed.

Each session is compared with what this process saved for it last: the messages that did not
change keep the stored (redacted) objects, so the store's save redacts and appends only the
new ones (O(turn), :meth:`loomsync.store.local.LocalThreadStore.save_prepared`). A message that
grew since (Claude Code writes one line per content block under one message id) is updated in
place, at its index: the stored copy read is named as the one replaced, never a fork. The first
save of a session in this process goes through what ``loomsync import`` does (ids per owner,
visibility and tags chosen here kept, never shorter).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat as stat_module
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Thread
from loomsync.importers import FORMATS, detect_format
from loomsync.importers.common import Importer, ImportResult, jsonl_records
from loomsync.importers.exclude import Exclusions
from loomsync.importers.run import (
    ImportOwner,
    comparable,
    older_capture,
    owned_copy,
    save_over,
    stored_copy,
    with_local_choices,
)
from loomsync.store.threaddocs import fields_of, with_messages
from loomsync.sync.syncing import SyncingThreadStore
from loomsync.terminal import printable
from loomsync.watch.junk import JUDGED_AFTER, Junk, has_lines, plainly_not
from loomsync.watch.offsets import Offset, Offsets, tail_digest
from loomsync.watch.sources import Source
from loomsync.watch.tailer import read_lines

log = logging.getLogger("loomsync.watch")

#: Files whose records are kept in memory at once (the most recently changed); another one
#: changing is read from its start again.
OPEN_FILES = 32


@dataclass
class _Session:
    """A session this process saved: the messages as last parsed (before redaction) and the
    thread as the store returned it (redacted: its message objects are the stored ones)."""

    raw: list[Message]
    saved: Thread


@dataclass
class _File:
    """A JSON Lines file being followed: identity, offset, records read so far."""

    device: int
    inode: int
    offset: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)
    sessions: dict[str, _Session] = field(default_factory=dict)
    keys: dict[str, str | None] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Saved:
    """One import event: a session of ``path`` saved as ``thread_id`` (``created``: new here;
    ``messages``: its count after; ``added``: how many more there are; ``rewritten``: how
    many of the earlier ones changed in place, a message that grew)."""

    path: Path
    format: str
    thread_id: str
    created: bool
    messages: int
    added: int
    rewritten: int


class Capture:
    """Imports changed session files into a :class:`SyncingThreadStore`.

    Args:
        store: where sessions go (its queue syncs them).
        offsets: the persisted offsets (:mod:`loomsync.watch.offsets`).
        owner: whose ids sessions get (:func:`loomsync.importers.run.import_owner`).
        on_saved: called after each save (the watch wakes its sync then, and logs).
        stop: set to end a scan early.
    """

    def __init__(
        self,
        store: SyncingThreadStore,
        offsets: Offsets,
        owner: ImportOwner,
        on_saved: Callable[[Saved], None] | None = None,
        stop: threading.Event | None = None,
        exclusions: Exclusions | None = None,
    ) -> None:
        """See the class docstring; ``stop``: when set, a scan ends early (SIGTERM during
        the first read of many files); ``exclusions``: config.toml's ``[import]``
        (:mod:`loomsync.importers.exclude`): a file inside an excluded repository is never
        opened, a session of one is never saved."""
        self.stop = stop or threading.Event()
        self.exclusions = exclusions or Exclusions()
        self.store = store
        self.offsets = offsets
        self.owner = owner
        self.on_saved = on_saved
        self.rows = offsets.all()
        self.junk = Junk(key for key, row in self.rows.items() if row.ignored)
        self._files: OrderedDict[str, _File] = OrderedDict()
        self._deleted: set[str] = set()  # deleted threads said once (finding 2)

    # -- what to read ------------------------------------------------------------------------

    def scan(self, source: Source) -> int:
        """Look at every file under ``source.root`` (start-up, or the folder just appeared):
        one ``stat`` for a file unchanged since its offset. Returns how many session files it
        found there (newcomer finding 10): a session unit once however many of its files
        (a ``-wal``, a session folder's siblings) are there; a link, a file that is no
        session (junk, not judged yet, or holding no conversation) and a file of an excluded
        repository are not counted."""
        units: set[str] = set()
        for folder, _, names in os.walk(source.root):
            for name in sorted(names):
                if self.stop.is_set():
                    return len(units)
                path = Path(folder) / name
                if source.wants(path):
                    self.changed(path, source)
                    found = _unit_of(path, source)
                    if found is not None and self._is_session(found[1]):
                        units.add(str(found[1]))
        return len(units)

    def _is_session(self, unit: Path) -> bool:
        """True when ``unit`` was read as a session file (its offsets row names a format and
        is not marked ignored) and is a file of its own, not a link."""
        row = self.rows.get(str(unit))
        return (
            row is not None and not row.ignored and row.format is not None
            and not unit.is_symlink()
        )  # fmt: skip

    def removed(self, path: Path, source: Source | None = None) -> None:
        """A file is gone: forget its offset (its threads stay). A sibling of a session unit
        gone (a SQLite ``-wal`` checkpointed into its database and deleted) is a change of
        that unit."""
        if source is not None and (unit := _unit_of(path, source)) is not None and unit[1] != path:
            self.changed(unit[1], source)
            return
        key = str(path)
        self._files.pop(key, None)
        self.junk.settled(key)
        self.junk.said.discard(key)  # a file made again at this path is judged afresh
        if self.rows.pop(key, None) is not None:
            self.offsets.forget(key)

    def changed(self, path: Path, source: Source) -> None:
        """Import what the session unit of ``path`` gained (``path`` itself, or the file its
        agent's ``unit_of`` names: a SQLite ``-wal`` → its ``.db``). Never raises for a file
        (unreadable, gone, not a session: logged); a failing save is logged and read again at
        the next change."""
        found = _unit_of(path, source)
        if found is None or self.exclusions.file(found[1]):
            return  # a file of the agent that is no session of it (a lock), or never read
        named, path = found
        key = str(path)
        try:
            info = path.lstat()  # a link is not followed out of the watched folder
        except FileNotFoundError:
            self.removed(path)
            return
        except OSError as exc:
            log.warning("cannot read %s: %s", printable(key), printable(exc.strerror or str(exc)))
            return
        if not stat_module.S_ISREG(info.st_mode):
            return
        row = self.rows.get(key)
        same = row is not None and row.same_file(info)
        name = named or (row.format if row is not None and same and row.format else None)
        whole = name is not None and name in FORMATS and FORMATS[name].from_records is None
        signature = _signature(path, FORMATS[name]) if whole and name is not None else ""
        if (
            row is not None
            and same
            and (row.size, row.mtime_ns) == (info.st_size, info.st_mtime_ns)
            and (not whole or row.ignored or row.tail == signature)
        ):
            return  # nothing new (the start-up case for almost every file)
        known = row is not None and same and row.format == name and not row.ignored
        if not known:
            name = _format(path, source)
        if name is None:
            self._not_a_session(path, info, source)
            return
        try:
            threads = self._import(path, name, FORMATS[name], info)
        except OSError as exc:
            log.warning("cannot read %s: %s", printable(key), printable(exc.strerror or str(exc)))
            return
        if threads == 0:
            self._no_conversation(path, name, source)
        elif threads:
            self.junk.settled(key)

    def quiet(self) -> None:
        """Judge the files that went quiet before they could be judged (a short junk file:
        :mod:`loomsync.watch.junk`); the loop calls it between batches of events."""
        for entry in self.junk.quiet():
            path = Path(entry.path)
            try:
                info = path.lstat()
            except OSError:
                continue  # gone: its removal is an event of its own
            if not stat_module.S_ISREG(info.st_mode):
                continue
            if entry.format is None:
                self._not_a_session(path, info, entry.source, quiet=True)
            else:
                self._no_conversation(path, entry.format, entry.source, quiet=True)

    def _not_a_session(
        self, path: Path, info: os.stat_result, source: Source, *, quiet: bool = False
    ) -> None:
        """Said once per file (:mod:`loomsync.watch.junk`), once it holds a few whole lines
        (:data:`JUDGED_AFTER`), went ``quiet``, or plainly is no session: a session file is
        created empty, its first line may still be being written, and a Claude Code
        transcript may open with lines that do not tell it yet (a ``file-history-snapshot``)."""
        if not (quiet or has_lines(path, JUDGED_AFTER) or plainly_not(path)):
            self.junk.wait(str(path), source, None)
            return
        why = "an empty file" if info.st_size == 0 else "not a session file of a watched format"
        self._ignored(path, info, None, why)

    def _no_conversation(
        self, path: Path, name: str, source: Source, *, quiet: bool = False
    ) -> None:
        """A file of format ``name`` (a Codex ``rollout-…<uuid>.jsonl``: recognised by its
        name) from which no session came: said once, once it has gone ``quiet`` (its offsets
        row, just written, is kept and marked). Never judged by its lines while it grows: a
        recognised file still being written is a session its agent is writing (a Claude Code
        transcript may open with more snapshot lines than :data:`JUDGED_AFTER`, and a loaded
        machine reads it between them)."""
        if not quiet:
            self.junk.wait(str(path), source, name)
            return
        try:
            info = path.lstat()
        except OSError:
            return
        why = f"a {name} session file that holds no conversation (read again as it grows)"
        self._ignored(path, info, name, why)

    def _ignored(self, path: Path, info: os.stat_result, name: str | None, why: str) -> None:
        """Log ``ignored <path>: <why>`` the first time only, and mark the file's row."""
        key = str(path)
        self.junk.settled(key)
        if self.junk.say(key):
            log.info("ignored %s: %s", printable(key), why)
        row = self.rows.get(key)
        if row is not None and name is not None and row.same_file(info):
            ignored = replace(row, ignored=True)  # where it was read up to, as it was then
        else:
            ignored = Offset(key, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, 0,
                             "", name, ignored=True)  # fmt: skip
        self.offsets.put(ignored)
        self.rows[key] = ignored

    # -- reading -----------------------------------------------------------------------------

    def _import(
        self, path: Path, name: str, importer: Importer, info: os.stat_result
    ) -> int | None:
        """Read what ``path`` gained and save its sessions: how many sessions it holds, None
        when nothing new could be read yet (a half-written line)."""
        key = str(path)
        if importer.from_records is None:  # live "rewrite" or "sqlite": the unit read whole
            tail = _signature(path, importer)  # before reading: a change during it is seen
            result = importer.parse(path)
            state = _File(info.st_dev, info.st_ino)
            previous = self._files.pop(key, None)
            if previous is not None and (previous.device, previous.inode) == (
                state.device,
                state.inode,
            ):
                state.sessions, state.keys = previous.sessions, previous.keys
            offset = info.st_size
        else:
            state = self._follow(key, info)
            tail_read = read_lines(path, state.offset)
            info = tail_read.stat
            if not tail_read.data and state.records:
                return None  # only a half-written line is new
            data = (
                tail_read.data.removeprefix(b"\xef\xbb\xbf")
                if state.offset == 0
                else tail_read.data
            )
            lines = ImportResult()
            state.records.extend(jsonl_records(data, lines))
            state.offset = tail_read.offset
            result = ImportResult()
            importer.from_records(path, state.records, result)
            offset, tail = tail_read.offset, tail_read.tail
        self._files[key] = state
        self._files.move_to_end(key)
        while len(self._files) > OPEN_FILES:
            self._files.popitem(last=False)
        for thread in result.threads:
            if not self.exclusions.thread(thread):
                self._save(path, name, state, thread)
        row = Offset(key, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, offset, tail,
                     name, ignored=key in self.junk.said)  # fmt: skip
        self.offsets.put(row)  # after the saves: a kill before it reads those lines again
        self.rows[key] = row
        return len(result.threads)

    def _follow(self, key: str, info: os.stat_result) -> _File:
        """The followed state of a JSON Lines file, or a fresh one (read from byte 0) when it
        is new here, was replaced (another inode), truncated, or rewritten before its offset."""
        state = self._files.get(key)
        if state is not None and (state.device, state.inode) == (info.st_dev, info.st_ino):
            if state.offset <= info.st_size and self._same_tail(key, state):
                return state
            log.info("%s was truncated or replaced: reading it again", printable(key))
        return _File(info.st_dev, info.st_ino)

    def _same_tail(self, key: str, state: _File) -> bool:
        row = self.rows.get(key)
        if row is None or row.offset != state.offset:
            return True
        with open(key, "rb") as handle:
            return tail_digest(handle, state.offset) == row.tail

    # -- saving ------------------------------------------------------------------------------

    def _save(self, path: Path, name: str, state: _File, thread: Thread) -> None:
        local = self.store.local
        owned = owned_copy(local, thread, self.owner, state.keys)
        thread_id = str(owned.id)
        if self.store.deletions.get(thread_id) is not None:  # newcomer finding 2
            if thread_id not in self._deleted:
                self._deleted.add(thread_id)
                log.info(
                    "skipped %s: you deleted it (`loomsync import --include-deleted %s` brings "
                    "it back)",
                    thread_id,
                    printable(str(path)),
                )
            return
        session = state.sessions.get(thread_id)
        if session is None or len(session.raw) != len(session.saved.messages):
            saved, created, added, rewritten = self._first_save(owned)
        else:
            saved, added, rewritten = self._next_save(owned, session)
            created = False
        state.sessions[thread_id] = _Session(list(owned.messages), saved)
        if added == 0 and not rewritten and not created:
            return
        if str(saved.id) != thread_id:  # the store kept this copy as a fork: start afresh
            state.sessions.pop(thread_id, None)
        event = Saved(path, name, str(saved.id), created, len(saved.messages), added, rewritten)
        if self.on_saved is not None:
            self.on_saved(event)

    def _first_save(self, owned: Thread) -> tuple[Thread, bool, int, int]:
        """``loomsync import``'s rules (:mod:`loomsync.importers.run`): ``(saved, created,
        added, rewritten)``; ``saved`` is the stored copy when nothing changed."""
        stored = stored_copy(self.store.local, str(owned.id))
        if stored is None:
            saved = self.store.save(owned)
            return saved, True, len(saved.messages), 0
        clean = self.store.local.redaction.thread(owned)
        candidate = with_local_choices(clean, stored)
        if (
            comparable(candidate) == comparable(stored)
            or older_capture(candidate, stored)
            or _read_again(candidate, stored)
        ):
            return stored, False, 0, 0
        saved = save_over(
            self.store, candidate.model_copy(update={"version": stored.version}), stored
        )
        same = _same_prefix(stored.messages, saved.messages)
        kept = min(len(stored.messages), len(saved.messages))
        return saved, False, len(saved.messages) - same, kept - same

    def _next_save(self, owned: Thread, session: _Session) -> tuple[Thread, int, int]:
        """A session saved before by this process: ``(saved, added, rewritten)``; only the
        messages that changed since are new objects (the store scans and appends those)."""
        raw, old = owned.messages, session.raw
        same = _same_prefix(old, raw)
        if same == len(raw) < len(old):
            return session.saved, 0, 0  # an earlier capture: never shorten
        messages = [*session.saved.messages[:same], *raw[same:]]
        candidate = with_local_choices(with_messages(owned, messages), session.saved)
        candidate = candidate.model_copy(update={"version": session.saved.version})
        if same == len(raw) == len(old):
            fields = self.store.local.redaction.value(fields_of(candidate))
            if fields == fields_of(session.saved):
                return session.saved, 0, 0
        saved = self.store.save(candidate, read=session.saved)
        return saved, len(raw) - len(old), len(old) - same


def _read_again(candidate: Thread, stored: Thread) -> bool:
    """True when ``candidate`` is the stored session read again from a file cut short and
    being written again (newcomer finding 1): fewer messages, every one but the last the
    stored one (the last may still be growing, a line per content block). Saving it would
    shorten the thread here and on the server, or fork it; the stored copy is kept until the
    file catches up, then updated in place."""
    count = len(candidate.messages)
    if not 0 < count < len(stored.messages):
        return False
    mine = [m.model_dump(mode="python") for m in candidate.messages[:-1]]
    theirs = [m.model_dump(mode="python") for m in stored.messages[: count - 1]]
    return mine == theirs and candidate.messages[-1].role == stored.messages[count - 1].role


def _same_prefix(left: list[Message], right: list[Message]) -> int:
    """How many first messages of the two lists are equal."""
    count = 0
    for a, b in zip(left, right, strict=False):
        if a is not b and a != b:
            break
        count += 1
    return count


def _unit_of(path: Path, source: Source) -> tuple[str | None, Path] | None:
    """``(agent, unit)``: the session unit a changed ``path`` belongs to (the agent's
    ``unit_of``; ``path`` itself for an agent without one) and the agent when the source
    names it (None: a folder of any agent, told by :func:`_format` later). None when the
    source's agent says ``path`` is none of its session files."""
    if source.format is not None and source.format in FORMATS:
        importer = FORMATS[source.format]
        unit = importer.unit_of(path) if importer.unit_of is not None else path
        return None if unit is None else (source.format, unit)
    for name, importer in FORMATS.items():  # a folder of any agent: the first whose unit it is
        if importer.unit_of is None or not path.name.endswith(importer.suffixes):
            continue
        unit = importer.unit_of(path)
        if unit is not None and unit != path and unit.is_file() and importer.detect(unit):
            return name, unit
    return None, path


def _signature(unit: Path, importer: Importer) -> str:
    """What tells that a unit read whole changed: the size and modification time of the unit
    and of its siblings (the files of its folder whose ``unit_of`` is the unit: a session
    folder's other files, a database's ``-wal``), as one SHA-256 (hex)."""
    parts: list[str] = []
    files = [unit]
    if importer.unit_of is not None:
        try:
            names = sorted(os.listdir(unit.parent))
        except OSError:
            names = []
        files += [
            unit.parent / name
            for name in names
            if name != unit.name
            and not name.endswith("-shm")  # SQLite's shared-memory index: readers touch it
            and importer.unit_of(unit.parent / name) == unit
        ]
    for file in files:
        try:
            info = file.stat()
        except OSError:
            continue
        parts.append(f"{file.name}\0{info.st_size}\0{info.st_mtime_ns}\0{info.st_ino}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _format(path: Path, source: Source) -> str | None:
    """The format ``path`` is read with: the source's, if the file is of it; else (a folder of
    any format) the one that recognises it; None for a file that is no session."""
    if source.format is not None:
        return source.format if FORMATS[source.format].detect(path) else None
    return detect_format(path)


__all__ = ["JUDGED_AFTER", "OPEN_FILES", "Capture", "Saved"]
