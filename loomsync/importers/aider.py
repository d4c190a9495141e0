"""Aider chat histories: ``.aider.chat.history.md`` in each project folder (append-only).

Every ``# aider chat started at YYYY-MM-DD HH:MM:SS`` line starts a session, which becomes
a thread. Within a session, following what aider writes:

- ``#### `` lines are the user's input (one message per run of them);
- ``> `` lines are aider's own output (start-up banner, token counts, "Applied edit",
  commits, confirmations, errors) → system messages. A ``> `` line not ending in two spaces
  starts a multi-line note that runs to the next line that does (aider writes a note as
  ``"> " + text + "  "``);
- everything else is the model's reply → assistant messages, with reasoning blocks
  (``<think>…</think>``, ``<thinking-content-…>…</thinking-content-…>``) taken out.

There are no per-message times and no session ids: the start time (local wall-clock time,
read as UTC as API.md says for times without an offset) dates the thread, and the thread id
is a UUIDv5 over the file's identity (folder and name), the start time and, for repeated
start times, their order. Sessions without a user or assistant message are left out.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from loomsync.core.document.model import Message, Role
from loomsync.importers.common import (
    Importer,
    ImportResult,
    build_thread,
    clip_title,
    file_identity,
    find_files,
    head,
    name_thread_id,
    parse_time,
    read_bytes,
)

NAME = "aider"
FILE_NAME = ".aider.chat.history.md"

_START = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$")
_THINKING = re.compile(r"<(think|thinking-content-[0-9a-f]+)>.*?</\1>\s*", re.DOTALL)
_VERSION = re.compile(r"^Aider v(\S+)")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40})\b")


@dataclass
class _Session:
    started: str | None
    lines: list[tuple[Role, str]] = field(default_factory=list)


def _decode_lines(raw: bytes, result: ImportResult) -> list[str]:
    """The file's lines (split at ``\n``, a ``\r`` before it dropped); a line that is not
    UTF-8 is skipped and counted. The whole file is decoded at once when it can be (the
    usual case: bench/importers.py), line by line only when it cannot."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        lines = text.split("\n")
        return [line.removesuffix("\r") for line in lines] if "\r" in text else lines
    lines = []
    for chunk in raw.split(b"\n"):
        try:
            lines.append(chunk.decode("utf-8").removesuffix("\r"))
        except UnicodeDecodeError:
            result.skipped["invalid_utf8"] += 1
    return lines


def _sessions(lines: list[str]) -> list[_Session]:
    """Split the history into sessions and tag each line with its role."""
    sessions = [_Session(started=None)]
    in_note = False
    for line in lines:
        if line.startswith("# aider chat started at ") and (match := _START.match(line)):
            sessions.append(_Session(started=match.group(1)))
            in_note = False
            continue
        role: Role
        if line.startswith("####"):
            role, text, in_note = "user", line[5:], False
        elif line.startswith(">") and not line.startswith(">>>>>>>"):
            text = line[1:].removeprefix(" ")
            role, in_note = "system", bool(text.strip()) and not line.endswith("  ")
        elif in_note:
            role, text, in_note = "system", line, not line.endswith("  ")
        else:
            role, text = "assistant", line
        sessions[-1].lines.append((role, text.removesuffix("  ")))
    return sessions


def _messages(session: _Session) -> list[Message]:
    """Runs of lines with the same role → messages (a blank line does not end a run)."""
    runs: list[tuple[Role, list[str]]] = []
    for role, text in session.lines:
        if runs and (runs[-1][0] == role or not text.strip()):
            runs[-1][1].append(text)
        else:
            runs.append((role, [text]))
    messages: list[Message] = []
    for role, texts in runs:
        content = "\n".join(texts).strip("\n")
        if role == "assistant":
            content = _THINKING.sub("", content).strip("\n")
        if content.strip():
            messages.append(Message(role=role, content=content))
    return messages


def parse(path: Path) -> ImportResult:
    """Read one history file into one thread per session (see the module docstring). Lines
    that are not UTF-8 are skipped and counted; an unreadable file gives a warning."""
    result = ImportResult()
    raw = read_bytes(path, result)
    if raw is None:
        return result
    seen: dict[str | None, int] = {}
    identity = file_identity(path)
    folder = os.path.abspath(path.parent)
    for session in _sessions(_decode_lines(raw, result)):
        ordinal = seen.get(session.started, 0)
        seen[session.started] = ordinal + 1
        messages = _messages(session)
        if not any(m.role in ("user", "assistant") for m in messages):
            continue
        notes = [line for role, line in session.lines if role == "system"]
        version = next((m.group(1) for n in notes if (m := _VERSION.match(n))), None)
        model = next((m.group(1) for n in notes if (m := _MODEL.match(n))), None)
        commits = list(dict.fromkeys(m.group(1) for n in notes if (m := _COMMIT.match(n))))
        users = [m.content for m in messages if m.role == "user"]
        title = next(
            (u for u in users if not u.lstrip().startswith("/")), users[0] if users else None
        )
        started = parse_time(session.started) if session.started else None
        thread_id = name_thread_id(NAME, identity, session.started or "", str(ordinal))
        result.threads.append(
            build_thread(
                thread_id,
                messages,
                source={
                    "agent": "aider",
                    "version": version,
                    "file": path.name,
                    "started_at": session.started,
                },
                title=clip_title(title),
                created_at=started,
                last_activity_at=started,
                workspace_root=folder,
                cwd=folder,
                model=model,
                git_commits=commits,
                git_current_commit_sha=commits[-1] if commits else None,
            )
        )
    if not result.threads:
        result.warnings.append(f"{path}: no aider session with messages in this file")
    return result


def detect(path: Path) -> bool:
    """An ``.aider.chat.history.md`` file, or a Markdown file that starts like one."""
    if path.name == FILE_NAME:
        return True
    return path.suffix == ".md" and b"# aider chat started at " in head(path, 4096)


def discover(path: Path) -> list[Path]:
    """``.aider.chat.history.md`` files under ``path`` (hidden folders included), or the file."""
    return find_files(path, [FILE_NAME], detect)


def default_paths() -> list[Path]:
    """None: aider keeps its history in each project folder; name the folders to import."""
    return []


IMPORTER = Importer(
    name=NAME,
    default_paths=default_paths,
    detect=detect,
    discover=discover,
    parse=parse,
    agent="Aider",
    what="chat history",
    expects='expected "# aider chat started at" lines, in .aider.chat.history.md or another .md file',
    order=40,
    suffixes=(".aider.chat.history.md", ".md"),
    live="rewrite",
    watch_by_default=False,
    records=("messages",),
)
