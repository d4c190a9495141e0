"""Credentials in threads: find them and replace each with a marker naming its kind (API.md §9).

This is the public face of the detector; the client (every save, import, fork, share) and the
server (``LOOMSYNC_SECRET_SCAN``) use only what is exported here:

- :class:`Redactor` ``.find(text)`` → :class:`Finding` spans, ``.redact_text(text)``,
  ``.redact_value(json_value)``, ``.scan_thread(thread)`` / ``.redact_thread(thread)`` →
  :class:`Located` findings (kind, JSON path, message index, masked preview, never the value),
  ``.redact_messages(messages, first_index)`` for appends.
- :func:`marker` (``[REDACTED:<kind>]``) and :func:`default_redactor` (no allow-list, cached).

Redaction is deterministic and idempotent: redacting redacted text changes nothing, and text
without a finding is returned unchanged (the same object).

SKELETON: the rules below are a placeholder to build against; the detector proper replaces them
behind the same interface.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from loomsync.model import Message, Thread

#: ``[REDACTED:<kind>]``: what a credential becomes.
MARKER_PREFIX = "[REDACTED:"


def marker(kind: str) -> str:
    """``[REDACTED:<kind>]`` for a finding of ``kind`` (e.g. ``aws-access-key``)."""
    return f"{MARKER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class Finding:
    """One credential in a text: its kind and its span ``text[start:end]`` (characters)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Located:
    """One credential in a thread, without its value.

    ``path`` is the JSON path of the string that holds it (``("conversation", "messages", 3,
    "content")``); ``message_index`` the message's position, or None outside messages;
    ``preview`` a masked preview (the first characters and the length, never the secret).
    """

    kind: str
    path: tuple[str | int, ...]
    message_index: int | None
    preview: str


def _preview(value: str) -> str:
    head = value[:4] if len(value) >= 12 else ""
    return f"{head}…({len(value)} chars)"


_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b")),
    (
        "private-key",
        re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----"),
    ),
)

#: Fields of a thread that are structure, never credentials (ids, timestamps, enums, SHAs).
_STRUCTURAL = frozenset(
    {
        "id",
        "version",
        "created_at",
        "updated_at",
        "last_activity_at",
        "archived_at",
        "role",
        "visibility",
        "tool_call_id",
        "git_initial_commit_sha",
        "git_current_commit_sha",
        "git_commits",
        "owner_id",
        "org_id",
    }
)


class Redactor:
    """Finds credentials and replaces them with :func:`marker` (thread-safe, reusable).

    ``allow``: exact strings that are never redacted; ``allow_patterns``: regular expressions
    (Python ``re``, matched with ``fullmatch`` against a finding's text) that are never
    redacted. Raises ``re.error`` for an allow pattern that does not compile.
    """

    def __init__(self, *, allow: Iterable[str] = (), allow_patterns: Iterable[str] = ()) -> None:
        self.allow = frozenset(allow)
        self.allow_patterns = tuple(re.compile(p) for p in allow_patterns)

    def _allowed(self, value: str) -> bool:
        return value in self.allow or any(p.fullmatch(value) for p in self.allow_patterns)

    def find(self, text: str) -> list[Finding]:
        """The credentials in ``text``, in order, not overlapping."""
        found: list[Finding] = []
        for kind, rule in _RULES:
            for match in rule.finditer(text):
                if not self._allowed(match.group()):
                    found.append(Finding(kind, match.start(), match.end()))
        found.sort(key=lambda f: (f.start, -f.end))
        kept: list[Finding] = []
        for finding in found:
            if not kept or finding.start >= kept[-1].end:
                kept.append(finding)
        return kept

    def redact_text(self, text: str) -> str:
        """``text`` with every finding replaced by its marker; unchanged (same object) if none."""
        findings = self.find(text)
        if not findings:
            return text
        parts: list[str] = []
        at = 0
        for finding in findings:
            parts.append(text[at : finding.start])
            parts.append(marker(finding.kind))
            at = finding.end
        parts.append(text[at:])
        return "".join(parts)

    def redact_value(self, value: Any) -> Any:
        """A JSON value (dict/list/str/number/bool/None) with every string redacted; dict keys
        are kept. Returns the same object when nothing changed."""
        return self._walk(value, (), None, [])

    def _walk(
        self, value: Any, path: tuple[str | int, ...], index: int | None, out: list[Located]
    ) -> Any:
        if isinstance(value, str):
            findings = self.find(value)
            if not findings:
                return value
            out.extend(
                Located(f.kind, path, index, _preview(value[f.start : f.end])) for f in findings
            )
            return self.redact_text(value)
        if isinstance(value, dict):
            changed = False
            result: dict[str, Any] = {}
            for key, item in value.items():
                new = item if key in _STRUCTURAL else self._walk(item, (*path, key), index, out)
                changed = changed or new is not item
                result[key] = new
            return result if changed else value
        if isinstance(value, list):
            items = [self._walk(item, (*path, n), index, out) for n, item in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def redact_messages(
        self, messages: Sequence[Message], first_index: int = 0
    ) -> tuple[list[Message], list[Located]]:
        """Messages redacted (unchanged ones are the same objects), and what was found; message
        ``n`` of the list is message ``first_index + n`` of its thread."""
        out: list[Located] = []
        result: list[Message] = []
        for n, message in enumerate(messages):
            index = first_index + n
            data = message.model_dump(mode="json", exclude_unset=True)
            path: tuple[str | int, ...] = ("conversation", "messages", index)
            new = self._walk(data, path, index, out)
            result.append(message if new is data else Message.model_validate(new))
        return result, out

    def redact_thread(self, thread: Thread) -> tuple[Thread, list[Located]]:
        """The thread with every credential replaced (the same object if none), and the findings."""
        out: list[Located] = []
        data = thread.model_dump(mode="json", exclude_unset=True)
        new = self._walk(data, (), None, out)
        return (thread if new is data else Thread.model_validate(new)), _indexed(out)

    def scan_thread(self, thread: Thread) -> list[Located]:
        """What :meth:`redact_thread` would replace, changing nothing."""
        return self.redact_thread(thread)[1]


def _indexed(found: list[Located]) -> list[Located]:
    """Fill ``message_index`` from the path of findings inside messages."""
    result = []
    for item in found:
        path = item.path
        if len(path) >= 3 and path[:2] == ("conversation", "messages") and isinstance(path[2], int):
            item = Located(item.kind, path, path[2], item.preview)
        result.append(item)
    return result


@functools.cache
def default_redactor() -> Redactor:
    """The shared :class:`Redactor` with no allow-list."""
    return Redactor()


__all__ = [
    "MARKER_PREFIX",
    "Finding",
    "Located",
    "Redactor",
    "default_redactor",
    "marker",
]
