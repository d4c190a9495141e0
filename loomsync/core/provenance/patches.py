"""Files named by patch text: Codex's ``apply_patch`` envelope and unified diffs.

Codex's format (codex-rs/apply-patch, its ``apply_patch`` tool): ``*** Begin Patch``, then per
file ``*** Add File: P`` (every line ``+``), ``*** Update File: P`` (hunks, optionally
``*** Move to: Q``) or ``*** Delete File: P``, then ``*** End Patch``. A unified diff
(``git diff``, Cline's and Roo's ``apply_diff`` in that form) names files in ``--- a/P`` /
``+++ b/P`` lines. Search/replace blocks (``<<<<<<< SEARCH`` … ``=======`` … ``>>>>>>> REPLACE``,
Cline's ``replace_in_file``) name no file; their replacement text is :func:`replacement_text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CODEX_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_CODEX_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
_DIFF_NEW = re.compile(r"^\+\+\+ (?:b/)?(.+?)(?:\t.*)?\s*$")
_DIFF_OLD = re.compile(r"^--- (?:a/)?(.+?)(?:\t.*)?\s*$")
_ACTIONS = {"Add": "write", "Update": "edit", "Delete": "delete"}


@dataclass(frozen=True, slots=True)
class PatchedFile:
    """One file a patch touches: ``action`` (``write``, ``edit`` or ``delete``) and the lines
    the patch adds to it, joined by newlines (``""`` for a deletion)."""

    path: str
    action: str
    added: str


_CODEX_HEAD = re.compile(r"^\*\*\* (?:Begin Patch|(?:Add|Update|Delete) File: )", re.MULTILINE)


def is_patch(text: str) -> bool:
    """True when ``text`` holds a Codex patch (with or without its ``*** Begin Patch``
    envelope: opencode's ``patch`` tool sends the file sections alone) or a unified diff."""
    return bool(_CODEX_HEAD.search(text)) or ("\n+++ " in text and "--- " in text)


def patched_files(text: str) -> list[PatchedFile]:
    """Every file named by a Codex patch or unified diff in ``text``, in order; ``[]`` for
    anything else (never raises)."""
    if _CODEX_HEAD.search(text):
        return _codex(text)
    return _unified(text)


def _codex(text: str) -> list[PatchedFile]:
    found: list[PatchedFile] = []
    path, action = "", ""
    added: list[str] = []

    def flush() -> None:
        if path:
            found.append(PatchedFile(path, action, "\n".join(added)))

    for line in text.splitlines():
        if head := _CODEX_FILE.match(line):
            flush()
            path, action, added = head.group(2), _ACTIONS[head.group(1)], []
        elif (move := _CODEX_MOVE.match(line)) and path:
            found.append(PatchedFile(path, "delete", ""))
            path, action = move.group(1), "write"
        elif path and line.startswith("+"):
            added.append(line[1:])
        elif line.startswith("*** End Patch"):
            flush()
            path = ""
    flush()
    return found


def _unified(text: str) -> list[PatchedFile]:
    found: list[PatchedFile] = []
    old = ""
    path, action = "", ""
    added: list[str] = []
    for line in text.splitlines():
        if line.startswith("--- "):
            m = _DIFF_OLD.match(line)
            old = m.group(1) if m else ""
            continue
        if line.startswith("+++ ") and (m := _DIFF_NEW.match(line)):
            if path:
                found.append(PatchedFile(path, action, "\n".join(added)))
            new = m.group(1)
            if new == "/dev/null":
                path, action, added = old, "delete", []
            else:
                path, action, added = new, "write" if old == "/dev/null" else "edit", []
        elif path and line.startswith("+"):
            added.append(line[1:])
    if path:
        found.append(PatchedFile(path, action, "\n".join(added)))
    return found


_REPLACE_BLOCK = re.compile(r"^=======\s*\n(.*?)^>>>>>>> REPLACE", re.MULTILINE | re.DOTALL)


def replacement_text(diff: str) -> str:
    """The replacement halves of search/replace blocks in ``diff`` (Cline's
    ``replace_in_file``, Roo's ``apply_diff``), joined; ``diff`` itself when it holds none."""
    parts = [m.group(1) for m in _REPLACE_BLOCK.finditer(diff)]
    if parts:
        return "\n".join(parts)
    files = patched_files(diff)
    return "\n".join(f.added for f in files) if files else diff
