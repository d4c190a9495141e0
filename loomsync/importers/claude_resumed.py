"""The copied history at the start of a resumed Claude Code session (issue 27, item 9).

How Claude Code writes it: ``claude --resume`` (and ``--continue``, ``--fork-session``) does
not append to the session it continues. It starts a new session id, so a new file
``<project folder>/<new session id>.jsonl`` beside the old one, and writes into it a copy of
the history it continues before the first new turn: every copied line keeps its ``uuid`` and
``parentUuid`` (the tree goes on from the copied leaf), and its ``timestamp``. Public
reports agree on that much (anthropics/claude-code issues #4926, #10806 and #12235: a new
file under a new id on every resume; notes of tools reading these files: the new file
"copies the entire conversation history" and opens with a ``summary`` line whose
``leafUuid`` is the old session's last message; ccusage and agentsview deduplicate the
copies across files by message id), not on which ``sessionId`` the copies carry: the
current shape gives them the new one (the shape issue 27 describes and the tests build from
a real transcript), files of earlier versions keep the old one (issue 15, item 5). Both are
handled.

So the copy is recognised by what survives in both shapes: the message ``uuid`` s. A file is
a resumption of a sibling file (same folder) when its first conversation lines are lines of
that sibling and it goes on past them; the sibling sharing the longest such run is the one it
continues (``A`` resumed as ``B``, ``B`` resumed as ``C``: ``C`` continues ``B``). The
candidates are the siblings whose first conversation line is the file's first conversation
line, and the files named by another ``sessionId`` the file's lines carry. A file holding
nothing but the copy (Claude Code has not written the first new turn yet) continues the
sibling it equals when that sibling was written earlier (modification time, then name).

The original file is read when it is there; when it is gone the resumed file is the only copy
of the history and keeps all of it. Reading a sibling is cached by its path, size and
modification time, so importing a folder of many sessions reads each file's head once.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loomsync.core.document import jsontext
from loomsync.importers.common import ImportResult, as_str, read_jsonl

_CONVERSATION = ("user", "assistant")
_HEAD_LINES = 200  # lines read from a sibling's start to find its first conversation line


@dataclass(frozen=True)
class Resumed:
    """The session a transcript resumes: ``path`` of its file, its ``records`` (JSON objects
    in file order) and ``copied``, the ``uuid`` s of the transcript's lines that are copies of
    lines of that file (left out of the resumed thread)."""

    path: Path
    records: list[dict[str, Any]]
    copied: frozenset[str]


def _first_uuid(records: list[dict[str, Any]]) -> str | None:
    """The ``uuid`` of the first user or assistant line that is not a sidechain line."""
    for record in records:
        if record.get("type") in _CONVERSATION and not record.get("isSidechain"):
            if uuid := as_str(record.get("uuid")):
                return uuid
    return None


@functools.lru_cache(maxsize=4096)
def _head_uuid(path: str, _size: int, _mtime_ns: int) -> str | None:
    """The first conversation line's ``uuid`` of the file at ``path`` (read line by line, at
    most :data:`_HEAD_LINES` lines); the size and time only key the cache."""
    try:
        with open(path, "rb") as handle:
            for _ in range(_HEAD_LINES):
                line = handle.readline()
                if not line:
                    return None
                try:
                    record = jsontext.loads(line.removeprefix(b"\xef\xbb\xbf"))
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and (found := _first_uuid([record])):
                    return found
    except OSError:
        return None
    return None


@functools.lru_cache(maxsize=8)
def _read(path: str, _size: int, _mtime_ns: int) -> tuple[list[dict[str, Any]], frozenset[str]]:
    """The records of the file at ``path`` and the ``uuid`` s of its lines (cached by size and
    modification time, which only key the cache)."""
    records = read_jsonl(Path(path), ImportResult()) or []
    return records, frozenset(u for r in records if (u := as_str(r.get("uuid"))))


def _stat(path: Path) -> os.stat_result | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info if path.is_file() else None


def _candidates(path: Path, entries: list[dict[str, Any]], first: str) -> list[Path]:
    """Siblings of ``path`` that may hold the history it copies (see the module docstring)."""
    named = {
        path.with_name(f"{sid}.jsonl")
        for e in entries
        if (sid := as_str(e.get("sessionId"))) and sid != path.stem
    }
    found: list[Path] = []
    try:
        siblings = sorted(path.parent.glob("*.jsonl"))
    except OSError:
        return []
    for sibling in siblings:
        if sibling == path or sibling.name.startswith("agent-"):
            continue
        info = _stat(sibling)
        if info is None:
            continue
        if sibling in named or _head_uuid(str(sibling), info.st_size, info.st_mtime_ns) == first:
            found.append(sibling)
    return found


def _is_older(sibling: Path, path: Path) -> bool:
    """True when ``sibling`` was written before ``path`` (modification time, then name)."""
    mine, theirs = _stat(path), _stat(sibling)
    if mine is None or theirs is None or mine.st_mtime_ns == theirs.st_mtime_ns:
        return sibling.name < path.name
    return theirs.st_mtime_ns < mine.st_mtime_ns


def find(
    path: Path,
    entries: list[dict[str, Any]],
    session_of: Callable[[list[dict[str, Any]], str], str],
) -> Resumed | None:
    """The session the main transcript at ``path`` resumes, or None.

    ``entries`` are its lines with a ``uuid``, in file order; ``session_of(records, file
    stem)`` names a file's session: a sibling of the same session (another capture of one
    session file, a backup) is not one it resumes. Subagent files are never resumptions. Returns the sibling sharing the longest leading run of ``entries``'
    conversation lines, provided the file goes on past that run or (nothing new yet) the
    sibling is the older of two equal files. Unreadable siblings are passed over.
    """
    if path.parent.name == "subagents" or path.name.startswith("agent-"):
        return None
    conversation = [
        e["uuid"] for e in entries if e.get("type") in _CONVERSATION and not e.get("isSidechain")
    ]
    first = _first_uuid(entries)
    if first is None:
        return None
    own = session_of(entries, path.stem)
    best: tuple[int, Path, list[dict[str, Any]], frozenset[str]] | None = None
    for sibling in _candidates(path, entries, first):
        info = _stat(sibling)
        if info is None:
            continue
        records, uuids = _read(str(sibling), info.st_size, info.st_mtime_ns)
        if session_of(records, sibling.stem) == own:
            continue
        run = next((i for i, u in enumerate(conversation) if u not in uuids), len(conversation))
        if run == 0:
            continue
        if run == len(conversation):  # nothing past the copy: which one is the copy?
            theirs = [
                u
                for r in records
                if r.get("type") in _CONVERSATION
                and not r.get("isSidechain")
                and (u := as_str(r.get("uuid")))
            ]
            if set(theirs) - set(conversation) or not _is_older(sibling, path):
                continue  # the sibling goes on past this file: it resumed this one
        if best is None or run > best[0]:
            best = (run, sibling, records, uuids)
    if best is None:
        return None
    _, sibling, records, uuids = best
    return Resumed(sibling, records, frozenset(e["uuid"] for e in entries if e["uuid"] in uuids))
