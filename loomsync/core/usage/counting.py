"""What messages add up to: turns, tokens of each kind, tool calls, per UTC day and model.

The ``usage`` member of an assistant message is issue 28's shape (loomsync/importers/usage.py):
``input_tokens`` (full-price prompt tokens, cache excluded), ``output_tokens`` (reasoning
included), ``cache_read_tokens``, ``cache_write_tokens``, ``reasoning_tokens``, ``model``,
``provider``; a count the agent did not record is absent. Here:

- a **turn** is an assistant message with a ``usage`` object holding at least one valid count
  (a whole number from 0 to :data:`MAX_COUNT`); its tokens are added (an absent or malformed
  count adds nothing), under its usage's model and provider, or
  the thread's when the usage names none;
- an assistant message without usage is counted in ``without_usage`` under model and provider
  ``""`` ("not recorded"), never as a free turn;
- ``tool_calls`` counts the entries of ``tool_calls`` of assistant messages;
- the day is the UTC date of the message's ``created_at`` (a time without offset is UTC, API.md
  section 2), else the ``fallback`` day the caller gives (the thread's last activity).

Other roles add nothing. Text values are cleaned for PostgreSQL text columns (no NUL, no lone
surrogates) and cut to :data:`MAX_NAME` characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from typing import Any

from loomsync.core.textsearch.fields import remote_slug

#: The count members of a usage object (issue 28), in their documented order.
COUNTS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
#: The largest token count one message may record. No model call comes near it (context
#: windows are millions of tokens); a larger value is a malformed count, not recorded, so that
#: a hostile or broken file cannot overflow the sums (64-bit columns, API.md section 2 numbers).
MAX_COUNT = 10**10
#: Longest model, provider or agent name kept (characters); repositories and workspaces: 4x.
MAX_NAME = 200
#: Model and provider of messages without usage: "not recorded".
NOT_RECORDED = ""

Key = tuple[date, str, str]


@dataclass(slots=True)
class Sums:
    """Totals of a set of messages. ``turns``: assistant messages with usage;
    ``without_usage``: assistant messages without; token counts are sums of what was
    recorded; ``tool_calls``: tool calls the assistant made."""

    turns: int = 0
    without_usage: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: Sums) -> None:
        """Add ``other``'s every member to this one's."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    @property
    def tokens(self) -> int:
        """Every token counted once: input, output (reasoning inside it), cache reads, writes."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )

    def as_json(self) -> dict[str, int]:
        """The members as a JSON object (same names)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, slots=True)
class Facts:
    """What a thread's usage is grouped by besides day and model: ``agent``
    (``metadata.extra.source.agent``, the importer's name, ``""`` when none), ``repository``
    (``host/owner/repo`` of ``git_remote_url``) and ``workspace`` (``workspace_root``)."""

    agent: str
    repository: str | None
    workspace: str | None


def clean_text(value: Any, limit: int = MAX_NAME) -> str | None:
    """``value`` as text a PostgreSQL text column holds (NUL and lone surrogates become
    spaces), cut to ``limit`` characters; None for a non-string or blank value."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.replace("\x00", " ")[:limit]
    return text.encode("utf-8", "replace").decode("utf-8") if _has_surrogate(text) else text


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def thread_facts(doc: dict[str, Any]) -> Facts:
    """The :class:`Facts` of a thread document (API.md section 2 shape)."""
    metadata = doc.get("metadata")
    extra = metadata.get("extra") if isinstance(metadata, dict) else None
    source = extra.get("source") if isinstance(extra, dict) else None
    agent = clean_text(source.get("agent")) if isinstance(source, dict) else None
    remote = clean_text(doc.get("git_remote_url"), 4 * MAX_NAME)
    return Facts(
        agent=agent or "",
        repository=clean_text(remote_slug(remote), 4 * MAX_NAME) if remote else None,
        workspace=clean_text(doc.get("workspace_root"), 4 * MAX_NAME),
    )


def utc_day(when: datetime) -> date:
    """The UTC date of ``when`` (naive: UTC, API.md section 2). An offset that carries it past
    the calendar's ends (``0001-01-01T00:00+01:00``) gives the first or the last day there is."""
    if when.tzinfo is None:
        return when.date()
    try:
        return when.astimezone(UTC).date()
    except (OverflowError, ValueError):
        return date.min if when.year == 1 else date.max


def message_day(value: Any) -> date | None:
    """The UTC date of an RFC 3339 ``created_at`` (no offset: UTC); None when unreadable."""
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return utc_day(when)


def count_of(value: Any) -> int | None:
    """A recorded token count: a whole number from 0 to :data:`MAX_COUNT` (an integral float
    too); None for anything else (absent, negative, text, a boolean, too large)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_COUNT:
        return value
    return None


def _recorded(usage: Any) -> dict[str, Any] | None:
    """``usage`` when it is an object holding at least one valid count (:func:`count_of`;
    issue 28: no count, no usage): a usage of malformed counts only is no usage, never a free
    turn."""
    if not isinstance(usage, dict):
        return None
    if not any(count_of(usage.get(n)) is not None for n in COUNTS):
        return None
    return usage


def add_message(
    out: dict[Key, Sums],
    message: dict[str, Any],
    fallback: date,
    thread_model: str | None = None,
    thread_provider: str | None = None,
) -> None:
    """Add one message (a JSON object of API.md section 2) to ``out``; non-assistant messages
    add nothing. ``thread_model``/``thread_provider`` name a turn whose usage names none."""
    if message.get("role") != "assistant":
        return
    day = message_day(message.get("created_at")) or fallback
    calls = message.get("tool_calls")
    tool_calls = len(calls) if isinstance(calls, list) else 0
    usage = _recorded(message.get("usage"))
    if usage is None:
        key: Key = (day, NOT_RECORDED, NOT_RECORDED)
        sums = out.setdefault(key, Sums())
        sums.without_usage += 1
        sums.tool_calls += tool_calls
        return
    model = clean_text(usage.get("model")) or clean_text(thread_model) or NOT_RECORDED
    provider = clean_text(usage.get("provider")) or clean_text(thread_provider) or NOT_RECORDED
    sums = out.setdefault((day, model, provider), Sums())
    sums.turns += 1
    sums.tool_calls += tool_calls
    for name in COUNTS:
        setattr(sums, name, getattr(sums, name) + (count_of(usage.get(name)) or 0))


def day_sums(
    messages: Iterable[dict[str, Any]],
    fallback: date,
    thread_model: str | None = None,
    thread_provider: str | None = None,
) -> dict[Key, Sums]:
    """The :class:`Sums` of ``messages`` per (UTC day, model, provider); see the module
    docstring for the rules."""
    out: dict[Key, Sums] = {}
    for message in messages:
        if isinstance(message, dict):
            add_message(out, message, fallback, thread_model, thread_provider)
    return out


__all__ = [
    "COUNTS",
    "MAX_COUNT",
    "NOT_RECORDED",
    "Facts",
    "Key",
    "Sums",
    "add_message",
    "clean_text",
    "count_of",
    "day_sums",
    "message_day",
    "thread_facts",
    "utc_day",
]
