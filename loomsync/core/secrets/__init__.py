"""Credentials in threads: find them and replace each with a marker naming its kind (API.md §9).

This is the public face of the detector; the client (every save, import, fork, share) and the
server (``LOOMSYNC_SECRET_SCAN``) use only what is exported here:

- :class:`Redactor` ``.find(text)`` → :class:`Finding` spans, ``.redact_text(text)``,
  ``.redact_value(json_value)``, ``.scan_thread(thread)`` / ``.redact_thread(thread)`` →
  :class:`Located` findings (kind, JSON path, message index, masked preview, never the value),
  ``.redact_messages(messages, first_index)`` for appends.
- :func:`marker` (``[REDACTED:<kind>]``), :func:`default_redactor` (no allow-list, cached) and
  :data:`KINDS` (every kind the detector claims, with a description and its public prefixes).

Redaction is deterministic and idempotent: redacting redacted text changes nothing, and text
without a finding is returned unchanged (the same object).

How it works (issue 12 item 2; measured in bench/redaction.py, written up in docs/client.md
"Redaction: how detection works"): the token patterns of detect-secrets' plugins (the
maintained rule source) and loomsync's own rules for what transcripts add (rules.py) run in an
RE2 engine of ours (engine.py): one ``RE2::Set`` pass says which rules can match, and only
those run. detect-secrets' own per-line scanner measured 0.04-0.12 MB/s on the real
transcripts (90-280 s for a 10 MB thread), made 24,638 findings in their 2,540 messages and
found 0.451 of the labelled set; the engine scans the same text at 14-33 MB/s, alters none of
those messages and finds all of the labelled set (0.971 before it was tuned on it).
JSON walking and the field rules (structural fields kept, URL userinfo dropped, secret-named
JSON keys) are in walk.py.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from loomsync.core.document.model import Message, Thread
from loomsync.core.redactionmark import MARKER_PREFIX
from loomsync.core.secrets.engine import Engine
from loomsync.core.secrets.kinds import KINDS, Kind
from loomsync.core.secrets.rules import all_rules
from loomsync.core.secrets.walk import Found, Walker, marker, redact_string


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
    ``preview`` a masked preview: the kind's public prefix if the value starts with one
    (``AKIA``, ``ghp_``) and the length, never another character of the secret.
    """

    kind: str
    path: tuple[str | int, ...]
    message_index: int | None
    preview: str


@functools.cache
def _engine() -> Engine:
    """The rules compiled once per process (about 0.3 s: importing detect-secrets' plugins
    and compiling RE2), on first use rather than on import."""
    return Engine(all_rules())


class Redactor:
    """Finds credentials and replaces them with :func:`marker` (thread-safe, reusable).

    ``allow``: exact strings that are never redacted; ``allow_patterns``: regular expressions
    (Python ``re``, matched with ``fullmatch`` against a finding's text) that are never
    redacted. Raises ``re.error`` for an allow pattern that does not compile.
    """

    def __init__(self, *, allow: Iterable[str] = (), allow_patterns: Iterable[str] = ()) -> None:
        self.allow = frozenset(allow)
        self.allow_patterns = tuple(re.compile(p) for p in allow_patterns)
        self._allowed = self._allow if self.allow or self.allow_patterns else None

    def _allow(self, value: str) -> bool:
        return value in self.allow or any(p.fullmatch(value) for p in self.allow_patterns)

    @property
    def _walker(self) -> Walker:
        return Walker(_engine(), self._allowed)

    def find(self, text: str) -> list[Finding]:
        """The credentials in ``text``, in order, not overlapping (one pass of the rules:
        :meth:`redact_text` repeats it on its result when tokens were glued together)."""
        return [Finding(s.kind, s.start, s.end) for s in _engine().scan(text, self._allowed)]

    def redact_text(self, text: str) -> str:
        """``text`` with every finding replaced by its marker; unchanged (same object) if none."""
        return redact_string(_engine(), text, self._allowed)[0]

    def redact_value(self, value: Any) -> Any:
        """A JSON value (dict/list/str/number/bool/None) with every string redacted; a dict
        key holding a token becomes its marker (``#2``… on a collision), other keys are kept,
        and so are the structural fields of a thread (at the root), a message
        (``conversation.messages[n]``, or the root when a message is redacted alone) and a
        tool call (their ``tool_calls[m]``); commit SHAs only while hex (walk.py). Returns the
        same object when nothing changed."""
        return self._walker.walk(value, (), [])

    def redact_value_located(
        self, value: Any, path: tuple[str | int, ...] = ()
    ) -> tuple[Any, list[Located]]:
        """:meth:`redact_value`, with every finding located as the walk made it (field rules,
        URL userinfo and secret-named keys included). ``path`` is where ``value`` sits in its
        thread (``("conversation", "messages", 3)`` for an appended message), which decides
        both the structural fields kept and the reported paths and message indexes."""
        found: list[Found] = []
        new = self._walker.walk(value, path, found)
        return new, _located(found)

    def redact_messages(
        self, messages: Sequence[Message], first_index: int = 0
    ) -> tuple[list[Message], list[Located]]:
        """Messages redacted (unchanged ones are the same objects), and what was found; message
        ``n`` of the list is message ``first_index + n`` of its thread."""
        walker = self._walker
        found: list[Found] = []
        result: list[Message] = []
        for n, message in enumerate(messages):
            path: tuple[str | int, ...] = ("conversation", "messages", first_index + n)
            result.append(_redact_message(walker, message, path, found))
        return result, _located(found)

    def redact_thread(self, thread: Thread) -> tuple[Thread, list[Located]]:
        """The thread with every credential replaced (the same object if none), and the findings
        in the order of the thread's JSON (its fields in order, the messages where
        ``conversation`` stands)."""
        walker = self._walker
        found: list[Found] = []
        data = thread.model_dump(
            mode="json", exclude_unset=True, exclude={"conversation": {"messages"}}
        )
        order = {key: n for n, key in enumerate(data)}
        conversation = data.pop("conversation", None)
        new = walker.walk(data, (), found)
        messages = thread.conversation.messages
        redacted = [
            _redact_message(walker, message, ("conversation", "messages", n), found)
            for n, message in enumerate(messages)
        ]
        if conversation is not None:
            rest = {k: v for k, v in conversation.items() if k != "messages"}
            new_rest = walker.walk(rest, ("conversation",), found)
        else:
            new_rest = rest = {}
        same_messages = all(a is b for a, b in zip(redacted, messages, strict=True))
        found.sort(key=lambda item: order.get(str(item[1][0]), -1) if item[1] else -1)
        if new is data and new_rest is rest and same_messages:
            return thread, _located(found)
        if new is not data or new_rest is not rest:
            if conversation is not None:
                new = {**new, "conversation": {**new_rest, "messages": []}}
            result = Thread.model_validate(new)
            result.conversation.messages = redacted
        else:
            conversation_copy = thread.conversation.model_copy(update={"messages": redacted})
            result = thread.model_copy(update={"conversation": conversation_copy})
        return result, _located(found)

    def scan_thread(self, thread: Thread) -> list[Located]:
        """What :meth:`redact_thread` would replace, changing nothing."""
        return self.redact_thread(thread)[1]


def _redact_message(
    walker: Walker, message: Message, path: tuple[str | int, ...], found: list[Found]
) -> Message:
    """One message redacted (the same object if nothing changed).

    Most messages hold no credential: their strings are scanned on the model first, and only
    a message with a finding is dumped to JSON, walked and validated again (dumping every
    message cost 0.4 s of a 10 MB thread's 0.9 s).
    """
    if walker.clean_model(message):
        return message
    data = message.model_dump(mode="json", exclude_unset=True)
    new = walker.walk(data, path, found)
    return message if new is data else Message.model_validate(new)


def _located(found: list[Found]) -> list[Located]:
    """Findings with ``message_index`` read from their paths (``conversation.messages[n]``)."""
    result = []
    for kind, path, preview in found:
        index = None
        if len(path) >= 3 and path[:2] == ("conversation", "messages") and isinstance(path[2], int):
            index = path[2]
        result.append(Located(kind, path, index, preview))
    return result


@functools.cache
def default_redactor() -> Redactor:
    """The shared :class:`Redactor` with no allow-list."""
    return Redactor()


__all__ = [
    "KINDS",
    "MARKER_PREFIX",
    "Finding",
    "Kind",
    "Located",
    "Redactor",
    "default_redactor",
    "marker",
]
