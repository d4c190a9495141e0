"""``loomsync import``: sessions other agents wrote → threads in the local store, then synced.

The importers (:mod:`loomsync.importers`) turn files into thread documents with stable ids, so
importing the same sessions again changes nothing and a session that grew updates its thread:
the new messages extend the stored ones, and the sync sends them with one append.

Each imported session is redacted before it is compared with the stored copy (which is
redacted: issue 12, item 1), so a re-import of a session holding credentials is "unchanged",
not an update. A new session gets the store's default visibility (``private`` unless
configured); a stored copy keeps the visibility it has.

Ids are per owner (issue 15, item 5; :class:`ImportOwner`): the logged-in token's ``sub``, or a
key of this machine when not logged in, so two people importing one file never collide and
nobody can pre-create the id of someone else's import.
"""

from __future__ import annotations

import base64
import json
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from loomsync.config import ClientConfig, ClientPaths
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import SERVER_FIELDS, Thread
from loomsync.errors import CorruptThreadError, InvalidInputError, ThreadNotFoundError
from loomsync.importers import FORMATS, ImportResult, detect_format
from loomsync.importers.common import (
    LINKS,
    Importer,
    as_dict,
    owned_by,
    refusal,
    unknown_format,
)
from loomsync.importers.exclude import Exclusions
from loomsync.store.files import atomic_write, ensure_dir
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.sync.deletions import Deletions
from loomsync.terminal import printable

#: Fields a person may have changed on this machine since an earlier import; a re-import keeps
#: the stored values instead of the importer's defaults.
_KEPT_FIELDS = ("visibility", "is_shared_with_support", "is_private")
_KEPT_METADATA = ("tags", "is_pinned")
_IGNORED = {"version", "updated_at"}
#: Fields that say where a session's file was found, not what it holds (:func:`comparable`).
_LOCATION_FIELDS = ("cwd", "workspace_root")
_LOCATION_SOURCE = ("file",)
#: Times a session file may not carry (SWE-agent trajectories have none): the store fills them
#: in on the first save, so a re-import keeps the stored ones instead of reading as an update
#: (newcomer finding 2: every re-import "updated" the trajectories and sent them again).
_FILLED_TIMES = ("created_at", "last_activity_at")


class _Store(Protocol):
    def save(self, thread: Thread, *, read: Thread | None = None) -> Thread: ...


class _Loader(Protocol):
    def load(self, thread_id: str) -> Thread: ...


@dataclass
class ImportSummary:
    """What an import did: thread ids by outcome, files read, damage and warnings."""

    files: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    older: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    excluded: int = 0
    #: sessions (files) left out, by the config.toml pattern of the repository that excludes them
    excluded_by: Counter[str] = field(default_factory=Counter)
    #: session files left out, by the agent excluded in config.toml that wrote them
    excluded_agents: Counter[str] = field(default_factory=Counter)
    skipped_lines: Counter[str] = field(default_factory=Counter)
    warnings: list[str] = field(default_factory=list)

    def add(self, other: ImportSummary) -> None:
        """Add ``other``'s files, ids, damage and warnings to this one (``import auto``)."""
        self.files += other.files
        self.excluded += other.excluded
        self.excluded_by.update(other.excluded_by)
        self.excluded_agents.update(other.excluded_agents)
        for name in ("created", "updated", "unchanged", "older", "deleted", "warnings"):
            getattr(self, name).extend(getattr(other, name))
        self.skipped_lines.update(other.skipped_lines)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (counts and ids)."""
        return {
            "files": self.files,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "older_than_since": self.older,
            "deleted": self.deleted,
            "excluded": self.excluded,
            "excluded_repositories": dict(self.excluded_by),
            "excluded_agents": dict(self.excluded_agents),
            "skipped_lines": dict(self.skipped_lines),
            "warnings": self.warnings,
        }

    @property
    def threads(self) -> int:
        """Distinct threads the files held (deleted ones included)."""
        return len({*self.created, *self.updated, *self.unchanged, *self.older, *self.deleted})

    def lines(self, *, dry_run: bool) -> list[str]:
        """The human summary printed by ``loomsync import``: printable lines (warnings quote
        file names and file contents; see :func:`loomsync.terminal.printable`)."""
        verb = "Would import" if dry_run else "Imported"
        # "older than --since" only when some are: the line fits 80 columns (issue 16 item 1)
        older = f", {len(self.older)} older than --since" if self.older else ""
        out = [
            f"{verb} {self.files} file(s), {self.threads} thread(s): {len(self.created)} created,"
            f" {len(self.updated)} updated, {len(self.unchanged)} unchanged{older}."
        ]
        if self.deleted:
            out.append(
                f"Skipped {len(self.deleted)} thread(s) you deleted: {', '.join(self.deleted)};"
                " to import them anyway, add --include-deleted."
            )
        out += self.left_out()
        if self.skipped_lines:
            reasons = ", ".join(f"{reason} {n}" for reason, n in sorted(self.skipped_lines.items()))
            out.append(f"Skipped damaged lines: {reasons}.")
        out += [f"warning: {w}" for w in self.warnings]
        return [printable(line) for line in out]

    def left_out(self) -> list[str]:
        """What config.toml's ``[import]`` left out (newcomer finding 4): one line per excluded
        agent whose files were named or found, one for the sessions of excluded repositories
        naming their patterns."""
        out = [
            f"Left out {n} file(s) of {name}: {name} is excluded in config.toml"
            " ([import] exclude_agents)."
            for name, n in sorted(self.excluded_agents.items())
        ]
        if self.excluded:
            where = ", ".join(sorted(self.excluded_by))
            out.append(
                f"Left out {self.excluded} session(s) of repositories excluded in config.toml"
                f" ([import] exclude_repositories): {where}."
            )
        return out


@dataclass(frozen=True, slots=True)
class ImportOwner:
    """Whose ids an import makes (issue 15, item 5; :meth:`loomsync.core.document.ids.ThreadId.owned`).

    ``key``: the logged-in token's ``sub``, else this machine's key (``machine:<uuid>``).
    ``earlier``: keys an earlier import on this machine may have used (the machine's key, once
    one exists, when logged in): a session already stored under one of them keeps that id.
    """

    key: str
    earlier: tuple[str, ...] = ()
    logged_in: bool = False


def token_subject(token: str | None) -> str | None:
    """The ``sub`` claim of a JWT, read without verifying it (the client holds its own token;
    the server checks it); None for a token that is not a JWT or has no string ``sub``."""
    try:
        payload = (token or "").split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return None
    sub = claims.get("sub") if isinstance(claims, dict) else None
    return sub if isinstance(sub, str) and sub.strip() else None


def import_owner(paths: ClientPaths, config: ClientConfig, *, create: bool = True) -> ImportOwner:
    """The owner ``loomsync import`` keys ids by (issue 15, item 5).

    Logged in with a JWT: its ``sub``, so the same person gets the same ids on every machine
    and two people never share one. Otherwise (offline, an opaque token): a random key of this
    machine: nobody else can compute those ids either, and a later import while logged in keeps
    updating the threads stored under it instead of making second copies.

    ``<config>/import-owner`` holds the machine key (a ``machine:<uuid>`` line, made on first
    use) and a ``login:<sub>`` line per login an import ran under on this machine (most recent
    first), so an import while logged out finds the copies stored under those logins (the
    ``earlier`` keys) instead of making machine-key duplicates. With ``create`` False (a dry
    run) the file is not written.
    """
    file = paths.config_dir / "import-owner"
    try:
        lines = [line.strip() for line in file.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        lines = []
    machine = next((line for line in lines if not line.startswith("login:")), None)
    logins = [line.removeprefix("login:") for line in lines if line.startswith("login:")]
    token = config.token.get_secret_value() if config.token else None
    sub = token_subject(token) if config.logged_in else None
    if sub is not None:
        if create and logins[:1] != [sub]:
            logins = [sub, *(other for other in logins if other != sub)]
            _remember(paths, file, machine, logins)
        earlier = (*(other for other in logins if other != sub), *([machine] if machine else []))
        return ImportOwner(sub, earlier, logged_in=True)
    if machine is None:
        machine = f"machine:{uuid.uuid4()}"
        if create:
            _remember(paths, file, machine, logins)
    return ImportOwner(machine, tuple(logins))


def _remember(paths: ClientPaths, file: Path, machine: str | None, logins: list[str]) -> None:
    ensure_dir(paths.config_dir)
    lines = ([machine] if machine else []) + [f"login:{sub}" for sub in logins]
    atomic_write(file, "".join(line + "\n" for line in lines).encode())


#: ``loomsync import auto``: every format, each file read by the one that recognises it.
AUTO = "auto"


def session_files(format_name: str, paths: Iterable[Path]) -> list[Path]:
    """The files of ``format_name`` under ``paths`` (default: the format's usual folders).

    A file named directly must be of that format (:func:`~loomsync.importers.common.refusal`):
    nothing is imported when one is not (issue 16, item 8).

    Raises:
        KeyError: unknown format.
        InvalidInputError: a named path does not exist, or a named file is not of the format.
    """
    importer = FORMATS[format_name]
    roots = [root.expanduser() for root in paths] or importer.default_paths()
    missing = [str(root) for root in paths if not root.expanduser().exists()]
    if missing:
        raise InvalidInputError(f"no such file or folder: {', '.join(missing)}")
    roots = [(_session_of(importer, root) or root) if root.is_file() else root for root in roots]
    refused = [why for root in roots if root.is_file() and (why := refusal(importer, root))]
    if refused:
        raise InvalidInputError(_refused(refused))
    files: list[Path] = []
    for root in roots:
        files.extend(importer.discover(root))
    return list(dict.fromkeys(files))


def detected_files(paths: Iterable[Path]) -> list[tuple[str, Path]]:
    """``loomsync import auto``: ``(format, file)`` for each session file under ``paths``
    (default: every format's usual folders), each file read by the first format of
    :data:`FORMATS` that recognises it.

    Raises:
        InvalidInputError: a named path does not exist, or a named file is of no known format.
    """
    roots = [root.expanduser() for root in paths]
    missing = [str(root) for root in roots if not root.exists()]
    if missing:
        raise InvalidInputError(f"no such file or folder: {', '.join(missing)}")
    found: dict[Path, str] = {}
    refused: list[str] = []
    for root in roots:
        if root.is_file():
            name = detect_format(root)
            if name is not None:
                found.setdefault(root, name)
            elif (sibling := _sibling_session(root)) is not None:
                found.setdefault(sibling[1], sibling[0])
            else:
                refused.append(unknown_format(root, FORMATS))
    if refused:
        raise InvalidInputError(_refused(refused))
    for name, importer in FORMATS.items():
        for root in roots or importer.default_paths():
            if not root.is_file():
                for file in importer.discover(root):
                    found.setdefault(file, name)
    return [(name, file) for file, name in found.items()]


def _session_of(importer: Importer, path: Path) -> Path | None:
    """The session file ``importer`` reads for ``path``, a sibling file of a session of
    several files (Cline's ``<id>.messages.json`` → ``<id>.json``, Roo Code's
    ``ui_messages.json`` → ``api_conversation_history.json``, an opencode message →
    its session: the importer's ``unit_of``, newcomer finding 8), when ``path`` is not one
    itself; None when it is, or is no file of this agent's."""
    if importer.unit_of is None or importer.detect(path):
        return None
    try:
        unit = importer.unit_of(path)
    except (OSError, ValueError):  # a sibling that cannot be read names no session
        return None
    if unit is None or unit == path or not unit.is_file() or not importer.detect(unit):
        return None
    return unit


def _sibling_session(path: Path) -> tuple[str, Path] | None:
    """``(format, session file)`` for a file no format recognises that is a sibling file of
    a session (:func:`_session_of`), trying the formats in :data:`FORMATS` order."""
    for name, importer in FORMATS.items():
        if (unit := _session_of(importer, path)) is not None:
            return name, unit
    return None


def _refused(lines: list[str]) -> str:
    more = f" (and {len(lines) - 1} more file(s) like it)" if len(lines) > 1 else ""
    return f"{lines[0]}{more}; nothing imported"


def comparable(thread: Thread) -> dict[str, Any]:
    """The thread's document without the fields a save sets (``version``, ``updated_at``)
    and without where its file was found: equal for an import that changes nothing.

    Where the file lies is not the session (newcomer finding 3): a session found in two
    places (a copy under another name, a Crush store whose folder says its project) must not
    be "updated" on every import as the two alternate. So ``metadata.extra.source.file`` is
    left out, and ``cwd`` / ``workspace_root`` count only as relative or absolute: two
    absolute folders compare equal (a relative one, as older imports stored, still differs
    from the absolute one an import stores now). A capture that changes anything else is
    saved whole, its location with it: the stored copy names the location of the capture
    that last changed it (docs/client.md, "Importing sessions other agents wrote")."""
    document = {k: v for k, v in thread.model_dump(mode="python").items() if k not in _IGNORED}
    for name in _LOCATION_FIELDS:
        value = document.get(name)
        if isinstance(value, str) and value.startswith("/"):
            document[name] = "/"
    extra = as_dict(as_dict(document.get("metadata")).get("extra"))
    source = as_dict(extra.get("source"))
    if any(key in source for key in _LOCATION_SOURCE):
        kept = {k: v for k, v in source.items() if k not in _LOCATION_SOURCE}
        document["metadata"] = {**document["metadata"], "extra": {**extra, "source": kept}}
    return document


def older_capture(imported: Thread, stored: Thread) -> bool:
    """True when ``imported`` is an earlier capture of the stored session: its messages are a
    strict prefix of the stored ones. An import never shortens a thread."""
    mine = [m.model_dump(mode="python") for m in imported.messages]
    theirs = [m.model_dump(mode="python") for m in stored.messages]
    return len(mine) < len(theirs) and theirs[: len(mine)] == mine


def stored_copy(existing: _Loader, thread_id: str) -> Thread | None:
    """The stored thread, or None when there is none or its file is corrupt."""
    try:
        return existing.load(thread_id)
    except (ThreadNotFoundError, CorruptThreadError):
        return None


def _stored_key(
    existing: _Loader, thread_id: str, owner: ImportOwner, keys: dict[str, str | None] | None = None
) -> str | None:
    """The key ``thread_id`` (an owner-free id from a file) is stored under here: None for a
    copy under the bare id (imported before issue 15), else the owner's key, else an earlier
    key of this machine (issue 15, item 5: the login before the machine key); a session
    stored under none of them gets the owner's key. ``keys``: answers found before, by id
    (filled in; each look-up reads a whole thread file)."""
    if keys is not None and thread_id in keys:
        return keys[thread_id]
    found: str | None = owner.key
    if stored_copy(existing, thread_id) is not None:
        found = None
    else:
        for key in (owner.key, *owner.earlier):
            if stored_copy(existing, str(ThreadId.owned(key, thread_id))) is not None:
                found = key
                break
    if keys is not None:
        keys[thread_id] = found
    return found


def owned_copy(
    existing: _Loader,
    thread: Thread,
    owner: ImportOwner | None,
    keys: dict[str, str | None] | None = None,
) -> Thread:
    """``thread`` (the file's own ids) under the key the store already holds it by, or the
    owner's (:func:`_stored_key`); each thread it links to (``resumed_from``,
    ``parent_thread_id``) is looked up the same way, so a link names the copy that exists
    even when it was stored under another key than the thread itself. ``keys``: a cache of
    those look-ups kept by the caller (``loomsync watch`` re-keys a growing session on every
    change and must not read its stored copy each time)."""
    if owner is None:
        return thread
    key = _stored_key(existing, str(thread.id), owner, keys)
    document = thread if key is None else owned_by(thread, key)
    extra = dict(thread.metadata.extra or {})
    links = dict(document.metadata.extra or {})
    for name in LINKS:
        target = extra.get(name)
        if not isinstance(target, str):
            continue
        try:
            ThreadId.parse(target)
        except InvalidThreadId:
            continue
        link_key = _stored_key(existing, target, owner, keys)
        links[name] = target if link_key is None else str(ThreadId.owned(link_key, target))
    metadata = document.metadata.model_copy(update={"extra": links})
    return document.model_copy(update={"metadata": metadata})


def with_local_choices(imported: Thread, stored: Thread) -> Thread:
    """The imported document, keeping what a person set on the stored copy (visibility,
    sharing, privacy, tags, pin) and the fields the server set on a copy that came from it
    (``owner_id``, ``org_id``, ``message_count``, ``archived_at``: :data:`SERVER_FIELDS`),
    which the imported document lacks: without them a re-import on a second machine was never
    "unchanged" (issue 15, item 5); and the times the file lacks and the store filled in
    (:data:`_FILLED_TIMES`)."""
    fields = {key: getattr(stored, key) for key in _KEPT_FIELDS}
    fields.update(
        {key: getattr(stored, key) for key in _FILLED_TIMES if getattr(imported, key) is None}
    )
    fields.update({k: v for k, v in (stored.model_extra or {}).items() if k in SERVER_FIELDS})
    metadata = imported.metadata.model_copy(
        update={key: getattr(stored.metadata, key) for key in _KEPT_METADATA}
    )
    return imported.model_copy(update={**fields, "metadata": metadata})


def import_sessions(
    store: _Store,
    format_name: str,
    files: Iterable[Path],
    *,
    existing: _Loader,
    since: datetime | None = None,
    dry_run: bool = False,
    progress: Callable[[Path], None] | None = None,
    redaction: Redaction | None = None,
    owner: ImportOwner | None = None,
    deletions: Deletions | None = None,
    include_deleted: bool = False,
    exclusions: Exclusions | None = None,
) -> ImportSummary:
    """Import every session in ``files`` into ``store``.

    ``existing`` answers what is already stored (the local store: an import never asks the
    server). A thread whose ``last_activity_at`` is before ``since`` (UTC) is left out. With
    ``dry_run`` nothing is written. ``progress`` is called after each file. ``redaction``:
    the store's (default: the detector without an allow-list). ``owner``: whose ids the
    threads get (:func:`import_owner`; None: the ids the files carry). ``deletions``: the
    threads deleted on this machine (:class:`~loomsync.sync.deletions.Deletions`): one of them
    is skipped and listed in ``deleted`` (newcomer finding 2), or with ``include_deleted``
    imported again: as a private thread (this machine only) when the server had it, since the
    server never takes a deleted id again (API.md, "Deleted"). ``exclusions``: config.toml's
    ``[import]`` (:mod:`loomsync.importers.exclude`): a file inside an excluded repository is
    never opened, a session of one is dropped before anything of it is kept (counted in
    ``excluded``).

    Raises:
        KeyError: unknown format.
    """
    importer = FORMATS[format_name]
    summary = ImportSummary()
    exclusions = exclusions or Exclusions()
    for path in files:
        if (place := exclusions.file_reason(path)) is not None:
            summary.excluded += 1
            summary.excluded_by[place] += 1
            continue
        result: ImportResult = importer.parse(path)
        kept = []
        for thread in result.threads:
            if (place := exclusions.thread_reason(thread)) is None:
                kept.append(thread)
            else:
                summary.excluded += 1
                summary.excluded_by[place] += 1
        result.threads = kept
        summary.files += 1
        summary.skipped_lines.update(result.skipped)
        summary.warnings.extend(result.warnings)
        for thread in result.threads:
            clean = (redaction or default_redaction()).thread(owned_copy(existing, thread, owner))
            was = deletions.get(str(clean.id)) if deletions is not None else None
            if was is not None and not include_deleted:
                if str(clean.id) not in summary.deleted:
                    summary.deleted.append(str(clean.id))
                continue
            if was == "server":
                clean = clean.model_copy(update={"is_private": True})
            _import_one(store, existing, clean, since, dry_run, summary)
            if was is not None and not dry_run and deletions is not None:
                deletions.forget(str(clean.id))
        if progress is not None:
            progress(path)
    return summary


def _import_one(
    store: _Store,
    existing: _Loader,
    thread: Thread,
    since: datetime | None,
    dry_run: bool,
    summary: ImportSummary,
) -> None:
    thread_id = str(thread.id)
    activity = thread.last_activity_at or thread.created_at
    if since is not None and activity is not None and activity < since:
        summary.older.append(thread_id)
        return
    stored = stored_copy(existing, thread_id)
    if stored is None:
        summary.created.append(thread_id)
        if not dry_run:
            store.save(thread)
        return
    candidate = with_local_choices(thread, stored)
    if comparable(candidate) == comparable(stored) or older_capture(candidate, stored):
        # two captures of one session (two files) name it once (newcomer finding 2)
        if thread_id not in (*summary.updated, *summary.created, *summary.unchanged):
            summary.unchanged.append(thread_id)
        return
    if thread_id not in summary.updated and thread_id not in summary.created:
        summary.updated.append(thread_id)
    if thread_id in summary.unchanged:
        summary.unchanged.remove(thread_id)
    if not dry_run:
        save_over(store, candidate.model_copy(update={"version": stored.version}), stored)


def save_over(store: _Store, thread: Thread, stored: Thread) -> Thread:
    """Save a newer capture ``thread`` of the session whose stored copy is ``stored``.

    A session file only grows, but a message of it may grow too: Claude Code writes one line
    per content block under one message id, so an import between two of those lines stored a
    shorter message than the file holds now. Saved plainly, that differs from the file's copy
    without extending it and went to a fork (5 messages, then a fork with 11: issue 17 item 1).
    ``stored`` is named as the copy this capture replaces
    (:meth:`loomsync.sync.syncing.SyncingThreadStore.save`'s ``read``), so the message is
    updated in place and the sync sends the thread as it is now. A capture with fewer messages
    than the stored copy is saved plainly (an import never shortens a thread: it merges or
    forks as before).
    """
    if len(thread.messages) >= len(stored.messages):
        return store.save(thread, read=stored)
    return store.save(thread)


__all__ = [
    "AUTO",
    "ImportOwner",
    "ImportSummary",
    "comparable",
    "detected_files",
    "import_owner",
    "import_sessions",
    "older_capture",
    "owned_copy",
    "save_over",
    "session_files",
    "stored_copy",
    "token_subject",
    "with_local_choices",
]
