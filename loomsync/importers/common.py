"""What every importer shares: the result type, the registry entry, damage-counting readers,
timestamps, text helpers, name-based thread ids and the thread builder.

Importers are pure: they read one file and return :class:`ImportResult`; they never write,
never look at the clock and never make random ids, so importing the same bytes twice gives the
same documents.
"""

from __future__ import annotations

import json
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.jsontext import JsonNumber
from loomsync.core.document.model import (
    AgentState,
    Conversation,
    Message,
    Metadata,
    Thread,
    clamp_leap_second,
    to_utc,
)
from loomsync.store.redaction import default_redaction
from loomsync.terminal import clip

#: Namespace of the name-based (UUIDv5) thread ids of sessions that carry no UUID of their own.
#: Fixed forever: changing it would give every such session a new id on the next import.
NAMESPACE = uuid.UUID("59570019-7d95-44d7-a794-18b8486ea9da")

#: Titles longer than this many characters are cut and end with "…".
TITLE_LENGTH = 80


@dataclass
class ImportResult:
    """What importing one file (or several, merged with :meth:`add`) produced.

    ``threads`` are complete thread documents in file order; ``warnings`` are human-readable
    notes about files (unreadable, not a session, …); ``skipped`` counts the lines or records
    left out because they were damaged, by reason (``invalid_json``, ``truncated_line``,
    ``invalid_utf8``, ``not_an_object``, ``bad_record``, ``duplicate_uuid``).
    """

    threads: list[Thread] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, other: ImportResult) -> None:
        """Append ``other``'s threads and warnings and add its skipped counts to this one."""
        self.threads.extend(other.threads)
        self.warnings.extend(other.warnings)
        self.skipped.update(other.skipped)


@dataclass(frozen=True)
class Importer:
    """One session format: its name, where it lives, how to find and read its files.

    - ``default_paths()``: the usual folders on this machine, expanded from ``HOME`` at call
      time (they may not exist).
    - ``detect(path)``: a cheap look at a file's name and first bytes; True if it is this format.
    - ``discover(path)``: the files of this format under a folder (sorted), or ``[path]`` for
      a file; a missing path gives ``[]``.
    - ``parse(path)``: read one file; never raises for bad input (see :class:`ImportResult`).
    - ``agent`` and ``what``: how a person names the format (``Aider``, ``chat history``);
      ``expects``: what a file of it looks like, said when a file is refused
      (:func:`refusal`).
    - ``from_records(path, records, result)``: JSON Lines formats only (None for the others):
      ``parse`` of records already read (:func:`jsonl_records`), adding its threads and
      warnings to ``result``; ``loomsync watch`` keeps a growing file's records and reads only
      its new lines (issue 17 item 1).

    The importer contract of issue 28 item 2 adds (all with defaults, so a third-party
    importer written for the first fields still loads):

    - ``order``: where :func:`~loomsync.importers.detect_format` tries it (lower first; ties
      by name). A format whose ``detect`` is loose (any ``.json``) takes a high number.
    - ``suffixes``: the name ends of every file the agent writes for a session (``.jsonl``;
      ``.db``, ``.db-wal`` for SQLite stores; the sibling files of a session folder), so
      ``loomsync watch`` knows which events may concern it.
    - ``unit_of(path)``: the file ``parse`` is given for a changed file ``path`` (a Roo task's
      ``ui_messages.json`` → its ``api_conversation_history.json``; ``crush.db-wal`` →
      ``crush.db``), or None when ``path`` is none of this agent's. None: ``path`` itself.
    - ``live``: how the agent writes, so how ``watch`` follows it: ``append`` (JSON Lines
      read from an offset, ``from_records``), ``rewrite`` (a file rewritten in place, read
      whole on change), ``sqlite`` (rows of a database the agent holds open, read read-only
      on change), ``none`` (import only).
    - ``watch_by_default``: ``loomsync watch`` with no ``[watch]`` entry watches
      ``default_paths()``.
    - ``records``: what the agent's files record, for ``loomsync agents`` and docs/agents.md:
      a subset of ``messages``, ``tool calls``, ``usage``, ``git``, ``subagents``,
      ``lineage``.
    """

    name: str
    default_paths: Callable[[], list[Path]]
    detect: Callable[[Path], bool]
    discover: Callable[[Path], list[Path]]
    parse: Callable[[Path], ImportResult]
    agent: str = ""
    what: str = "session file"
    expects: str = ""
    from_records: Callable[[Path, list[dict[str, Any]], ImportResult], None] | None = None
    order: int = 100
    suffixes: tuple[str, ...] = ()
    unit_of: Callable[[Path], Path | None] | None = None
    live: str = "rewrite"
    watch_by_default: bool = False
    records: tuple[str, ...] = ("messages",)

    @property
    def kind(self) -> str:
        """``Aider chat history``: the agent and what it writes."""
        return f"{self.agent or self.name} {self.what}"


def _article(words: str) -> str:
    return "an" if words[:1].lower() in "aeiou" else "a"


def _unlike_text(path: Path) -> str | None:
    """Why ``path`` cannot be a session file of any format, from a look at its first bytes:
    not a file, unreadable, empty, binary; None when it is text."""
    if not path.is_file():
        return "not a file"
    try:
        with path.open("rb") as handle:
            data = handle.read(4096)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or type(exc).__name__}"
    if not data.strip():
        return "it is empty"
    if data.startswith(b"SQLite format 3\x00"):
        return None  # an agent's database: what it is not is said by the importer's expects
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(data) - 4:  # not only a character cut by the 4096 bytes
            return "it is binary, not UTF-8 text"
    if b"\0" in data:
        return "it is binary, not UTF-8 text"
    return None


def refusal(importer: Importer, path: Path) -> str | None:
    """None when ``importer`` recognises the file ``path``; else the one line that refuses
    it: ``PATH: not an Aider chat history (it is empty)`` (issue 16, item 8)."""
    if importer.detect(path):
        return None
    why = _unlike_text(path) or importer.expects or "its first lines are of another format"
    return f"{path}: not {_article(importer.kind)} {importer.kind} ({why})"


def unknown_format(path: Path, names: Iterable[str]) -> str:
    """The line that refuses a file no importer recognises (``loomsync import auto``)."""
    why = _unlike_text(path) or f"none of {', '.join(names)} recognises its first lines"
    return f"{path}: not a session file of a known format ({why})"


# --- reading ---------------------------------------------------------------------------------


def read_bytes(path: Path, result: ImportResult) -> bytes | None:
    """Return the bytes of ``path``, or None after adding a warning if it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        result.warnings.append(f"{path}: cannot read ({exc.strerror or type(exc).__name__})")
        return None


def read_jsonl(path: Path, result: ImportResult) -> list[dict[str, Any]] | None:
    """Return the JSON objects of a JSON Lines file, one per line, in file order.

    Blank lines are ignored. A line that is not UTF-8, not JSON or not an object is skipped
    and counted in ``result.skipped``; an unparsable last line without a newline counts as
    ``truncated_line`` (a writer was interrupted). Returns None (with a warning) when the file
    cannot be read at all.
    """
    raw = read_bytes(path, result)
    if raw is None:
        return None
    return jsonl_records(raw.removeprefix(b"\xef\xbb\xbf"), result)


def jsonl_records(raw: bytes, result: ImportResult) -> list[dict[str, Any]]:
    """The JSON objects of JSON Lines bytes (:func:`read_jsonl` of bytes already read: the
    lines ``loomsync watch`` read after its offset, issue 17 item 1), damage counted alike."""
    chunks = raw.split(b"\n")
    records: list[dict[str, Any]] = []
    for index, chunk in enumerate(chunks):
        if not chunk.strip():
            continue
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError:
            result.skipped["invalid_utf8"] += 1
            continue
        try:
            values = [jsontext.loads(text)]
        except (ValueError, RecursionError):
            values = glued_values(text)
            if not values:
                last = index == len(chunks) - 1
                result.skipped["truncated_line" if last else "invalid_json"] += 1
                continue
        for value in values:
            if isinstance(value, dict):
                records.append(value)
            else:
                result.skipped["not_an_object"] += 1
    return records


_GLUED = json.JSONDecoder(
    parse_int=jsontext.parse_int,
    parse_float=jsontext.parse_float,
    parse_constant=jsontext.reject_constant,
)


def glued_values(text: str) -> list[Any]:
    """The JSON values of a line that holds several written without a newline between them
    (``{…}{…}``: two appends that raced, as in a real Pi session), or ``[]`` when the line is
    not a whole number of JSON values (a torn or garbage line stays one damaged line)."""
    text = text.strip()
    values: list[Any] = []
    position, end = 0, len(text)
    try:
        while position < end:
            value, position = _GLUED.raw_decode(text, position)
            values.append(value)
            while position < end and text[position] in " \t\r":
                position += 1
    except (ValueError, RecursionError):
        return []
    return values if len(values) > 1 else []


def read_json(path: Path, result: ImportResult) -> Any:
    """Return the JSON document in ``path``, or None after a warning (unreadable, not UTF-8,
    not JSON: one damaged document is one skipped record, counted by reason)."""
    raw = read_bytes(path, result)
    if raw is None:
        return None
    try:
        text = raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError:
        result.skipped["invalid_utf8"] += 1
        result.warnings.append(f"{path}: not UTF-8 text")
        return None
    try:
        return jsontext.loads(text)
    except (ValueError, RecursionError):
        result.skipped["invalid_json"] += 1
        result.warnings.append(f"{path}: not a JSON document (damaged or truncated)")
        return None


def head(path: Path, size: int = 65536) -> bytes:
    """The first ``size`` bytes of ``path`` (empty if it cannot be read); for ``detect``."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def first_objects(path: Path, count: int = 5) -> list[dict[str, Any]]:
    """Up to ``count`` JSON objects from the first complete lines of ``path`` (for ``detect``)."""
    found: list[dict[str, Any]] = []
    for line in head(path).split(b"\n")[:-1]:
        try:
            value = jsontext.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(value)
            if len(found) == count:
                break
    return found


def find_files(path: Path, patterns: Iterable[str], detect: Callable[[Path], bool]) -> list[Path]:
    """``[path]`` for a file; the files under a folder matching a glob pattern and ``detect``,
    sorted; ``[]`` when ``path`` does not exist."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    found = {p for pattern in patterns for p in path.rglob(pattern) if p.is_file()}
    return sorted(p for p in found if detect(p))


def home() -> Path:
    """The user's home folder, read from ``HOME`` at call time."""
    return Path.home()


# --- values ----------------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 / ISO 8601 string (``Z`` or an offset; naive read as UTC; a leap second as
    ``:59.999999``) or a Unix time in seconds or milliseconds, as an aware UTC datetime; None
    for anything else."""
    try:
        if isinstance(value, JsonNumber):  # written as 1.7E9, say
            value = float(value)
        if isinstance(value, str):
            return to_utc(datetime.fromisoformat(clamp_leap_second(value.strip())))
        if isinstance(value, int | float) and not isinstance(value, bool):
            seconds = value / 1000 if abs(value) > 1e11 else value
            return datetime.fromtimestamp(seconds, tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None
    return None


def as_str(value: Any) -> str | None:
    """``value`` if it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty dict."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a JSON array, else an empty list."""
    return value if isinstance(value, list) else []


def json_text(value: Any) -> str:
    """Text for a JSON value: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return jsontext.dumps(value, separators=(", ", ": "))


def tool_arguments(raw: Any) -> Any:
    """Tool-call arguments as JSON: a string holding JSON is decoded; any other string is
    kept as ``{"raw": text}``; other values are returned unchanged."""
    if isinstance(raw, str):
        try:
            return jsontext.loads(raw)
        except (ValueError, RecursionError):
            return {"raw": raw}
    return raw


def blocks_text(content: Any, *, image: str | None = None) -> str:
    """The text of a message ``content`` that is a string or a list of blocks
    (``{"type": "text", "text": …}``, plain strings, images): text blocks joined by newlines;
    image blocks become ``image`` when given, other blocks are left out."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in as_list(content):
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif image is not None and block.get("type") in ("image", "input_image", "image_url"):
                parts.append(image)
    return "\n".join(parts)


_SPACE = re.compile(r"\s+")


def clip_title(text: str | None) -> str | None:
    """A one-line title: whitespace collapsed, at most :data:`TITLE_LENGTH` characters
    as shown (longer ones are cut by :func:`loomsync.terminal.clip`, which keeps escape
    sequences whole, and end with "…"); None for blank text. Credentials are redacted before
    the cut (issue 12, item 1): a cut token is no longer recognisable, so the store's redaction
    would miss its first characters (this uses the default detector, without allow-list)."""
    if not text:
        return None
    line = _SPACE.sub(" ", default_redaction().text(text)).strip()
    if not line:
        return None
    return clip(line, TITLE_LENGTH)


# --- ids and documents -----------------------------------------------------------------------


def name_thread_id(*parts: str) -> ThreadId:
    """A name-based id: UUIDv5 in :data:`NAMESPACE` over ``parts`` (format first)."""
    return ThreadId.from_uuid(uuid.uuid5(NAMESPACE, json.dumps(list(parts))))


def session_thread_id(fmt: str, session_id: str) -> ThreadId:
    """``T-<uuid>`` when ``session_id`` is a UUID, else :func:`name_thread_id` (fmt, id)."""
    try:
        return ThreadId.from_uuid(uuid.UUID(session_id.strip()))
    except ValueError:
        return name_thread_id(fmt, session_id)


#: ``metadata.extra`` keys that name another imported thread; :func:`owned_by` re-keys them.
LINKS = ("parent_thread_id", "resumed_from", "forked_from")


def owned_by(thread: Thread, owner: str | None) -> Thread:
    """``thread`` under ``owner``'s ids (issue 15, item 5): its id and the imported threads it
    names in ``metadata.extra`` (:data:`LINKS`) become :meth:`ThreadId.owned` ids, and
    ``metadata.extra.source.session_thread_id`` keeps the owner-free id the file gives. With
    ``owner`` None the thread is returned unchanged (the ids of :func:`import_path` without
    an owner, which tests and the search benchmark name threads by)."""
    if owner is None:
        return thread
    extra = dict(thread.metadata.extra or {})
    for key in LINKS:
        if isinstance(extra.get(key), str):
            extra[key] = str(ThreadId.owned(owner, extra[key]))
    extra["source"] = {**as_dict(extra.get("source")), "session_thread_id": str(thread.id)}
    metadata = thread.metadata.model_copy(update={"extra": extra})
    return thread.model_copy(
        update={"id": ThreadId.owned(owner, str(thread.id)), "metadata": metadata}
    )


def file_identity(path: Path) -> str:
    """How a session file without an id of its own is named in its thread id: its folder's
    name and its own name (stable when the folder moves, distinct between projects)."""
    return f"{path.parent.name}/{path.name}"


def build_thread(
    thread_id: ThreadId,
    messages: list[Message],
    *,
    source: dict[str, Any],
    title: str | None = None,
    created_at: datetime | None = None,
    last_activity_at: datetime | None = None,
    extra: dict[str, Any] | None = None,
    **fields: Any,
) -> Thread:
    """Assemble a thread document the way every importer does.

    ``source`` becomes ``metadata.extra.source`` (None values dropped); ``extra`` adds other
    keys to ``metadata.extra``; ``created_at`` / ``last_activity_at`` default to the first /
    last message time, and ``updated_at`` is ``last_activity_at``. ``fields`` are other
    Thread fields (``cwd``, ``model``, git fields, …).

    ``workspace_root`` defaults to ``cwd`` when the agent records a working folder but no
    distinct project root (Pi, Copilot CLI outside git, …), as Codex and Claude Code do, so
    ``loomsync list --workspace`` and MCP ``list_threads`` find every such session (newcomer
    finding 5); an importer passing its own ``workspace_root`` keeps it.
    """
    if fields.get("workspace_root") is None and fields.get("cwd"):
        fields["workspace_root"] = fields["cwd"]
    times = [m.created_at for m in messages if m.created_at is not None]
    created = created_at or (min(times) if times else None)
    last = last_activity_at or (max(times) if times else created)
    meta_extra: dict[str, Any] = {"source": {k: v for k, v in source.items() if v is not None}}
    meta_extra.update(extra or {})
    return Thread(
        id=thread_id,
        created_at=created,
        updated_at=last,
        last_activity_at=last,
        conversation=Conversation(messages=messages),
        agent_state=AgentState(
            kind="waiting_for_user_input", retries=0, last_error=None, pending_tool_calls=[]
        ),
        metadata=Metadata(title=title, extra=meta_extra),
        **fields,
    )


__all__ = [
    "LINKS",
    "NAMESPACE",
    "TITLE_LENGTH",
    "ImportResult",
    "Importer",
    "as_dict",
    "as_list",
    "as_str",
    "blocks_text",
    "build_thread",
    "clip_title",
    "file_identity",
    "find_files",
    "first_objects",
    "glued_values",
    "head",
    "home",
    "json_text",
    "name_thread_id",
    "owned_by",
    "parse_time",
    "read_bytes",
    "read_json",
    "read_jsonl",
    "refusal",
    "session_thread_id",
    "tool_arguments",
    "unknown_format",
]
