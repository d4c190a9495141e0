"""The thread document of API.md section 2, as pydantic models shared by server and client.

Every model keeps unknown fields (``extra="allow"``) so that a newer client's fields survive
an older server. Timestamps are timezone-aware UTC ``datetime`` values; input without an offset
is read as UTC, and output is RFC 3339 with a ``Z`` suffix.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StrictInt,
    field_validator,
)
from pydantic.functional_validators import AfterValidator, BeforeValidator

from loomsync.core.document.ids import ThreadId

Visibility = Literal["private", "organization", "public"]
#: The visibilities of API.md section 1, narrowest first.
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
Role = Literal["user", "assistant", "tool", "system"]

#: Agent states named by API.md section 2; other strings are kept as given.
AGENT_STATE_KINDS = (
    "waiting_for_user_input",
    "calling_llm",
    "processing_llm_response",
    "executing_tools",
    "post_tools_hook",
    "error",
    "shutting_down",
)

#: Versions are 32-bit on the server (PostgreSQL ``integer``).
MAX_VERSION = 2**31 - 1

#: Fields the server sets on output and ignores on input (API.md section 2).
SERVER_FIELDS = frozenset({"owner_id", "org_id", "archived_at", "message_count"})


def to_utc(value: datetime) -> datetime:
    """Return ``value`` in UTC; a naive datetime is taken to be UTC already (API.md §2)."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def format_utc(value: datetime) -> str:
    """Format as RFC 3339 UTC with ``Z``, keeping only the sub-second digits that carry data.

    ``2026-01-02T16:39:45.349Z`` stays as written; whole seconds print without a fraction. The
    year always has four digits (``0001-01-01T00:00:00Z``; ``strftime`` writes year 1 as ``1``,
    which no RFC 3339 parser, this one included, reads back).
    """
    value = to_utc(value)
    base = (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        f"T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    )
    micros = value.microsecond
    if micros == 0:
        return base + "Z"
    if micros % 1000 == 0:
        return f"{base}.{micros // 1000:03d}Z"
    return f"{base}.{micros:06d}Z"


def format_utc_minute(value: datetime) -> str:
    """``2026-01-02 16:39``: the UTC date and time of :func:`format_utc`, to the minute, for
    people (the CLI's tables, transcript headers and exports). Four-digit year as there."""
    return format_utc(value)[:16].replace("T", " ")


#: A leap second, ``…:60`` with any fraction (RFC 3339 section 5.6 allows ``time-second`` 60).
_LEAP_SECOND = re.compile(
    r"(?P<head>\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:)60(?:[.,]\d+)?"
    r"(?P<tail>[Zz]|[+-]\d{2}(?::?\d{2})?)?"
)


def clamp_leap_second(text: str) -> str:
    """``text`` with a leap second (``2016-12-31T23:59:60Z``, RFC 3339 section 5.7) made the last
    microsecond before it, ``23:59:59.999999`` in the same offset; other text unchanged.

    Python's ``datetime`` (and so PostgreSQL through it) has no 60th second; clamping keeps
    the order of events (issue 11, item 9: accepted, not refused).
    """
    leap = _LEAP_SECOND.fullmatch(text) if len(text) <= 64 else None
    return f"{leap['head']}59.999999{leap['tail'] or ''}" if leap else text


def _rfc3339_text(value: Any) -> Any:
    """Timestamps arrive as RFC 3339 strings (leap seconds clamped: :func:`clamp_leap_second`);
    numbers are refused, never read as Unix time."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise ValueError("must be an RFC 3339 timestamp string")
    return clamp_leap_second(value)


def _utc_in_range(value: datetime) -> datetime:
    """:func:`to_utc`, refusing (with the field named by pydantic) an instant outside
    ``0001-01-01T00:00:00Z`` … ``9999-12-31T23:59:59.999999Z``, which an offset can reach
    (``0001-01-01T00:00:00+01:00``) and neither Python nor the API can write in UTC."""
    try:
        return to_utc(value)
    except OverflowError:
        raise ValueError(
            "is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z once converted to UTC"
        ) from None


UtcDatetime = Annotated[
    datetime,
    BeforeValidator(_rfc3339_text),
    AfterValidator(_utc_in_range),
    PlainSerializer(format_utc, return_type=str, when_used="json"),
]


class _Open(BaseModel):
    """Base for document parts: unknown fields are kept and returned unchanged.

    ``_always_set`` names mutable containers that count as set even when they hold their
    default, so that ``thread.conversation.messages.append(...)`` on a fresh thread is never
    dropped by a ``model_dump(exclude_unset=True)``.
    """

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    _always_set: ClassVar[frozenset[str]] = frozenset()

    def model_post_init(self, _context: Any, /) -> None:
        """Mark the ``_always_set`` containers as set."""
        self.__pydantic_fields_set__.update(self._always_set)


class ToolCall(_Open):
    """A tool call made by an assistant message: ``{id, tool_name, arguments_json}``."""

    id: str | None = None
    tool_name: str | None = None
    arguments_json: Any = None


class Message(_Open):
    """One turn of a conversation (API.md section 2, "Message").

    ``content`` is arbitrary text: NUL characters, lone surrogates and megabytes of tool
    output are all valid and round-trip exactly.
    """

    role: Role
    content: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_calls: list[ToolCall] | None = None
    created_at: UtcDatetime | None = None
    id: str | None = None


class Conversation(_Open):
    """``{"messages": [Message]}``, in conversation order."""

    messages: list[Message] = Field(default_factory=list)
    _always_set: ClassVar[frozenset[str]] = frozenset({"messages"})


class AgentState(_Open):
    """What the agent was doing when the thread was saved; unknown ``kind`` values are kept."""

    kind: str | None = None
    retries: StrictInt | None = None
    last_error: Any = None
    pending_tool_calls: list[Any] | None = None


class Metadata(_Open):
    """Title, tags, pin flag and a free-form ``extra`` object."""

    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    is_pinned: StrictBool = False
    extra: dict[str, Any] = Field(default_factory=dict)
    _always_set: ClassVar[frozenset[str]] = frozenset({"tags", "extra"})


class Thread(_Open):
    """A thread document (API.md section 2).

    Every field except ``id`` is optional on input. ``version`` is the base version of a write
    (section 5). Server fields (``owner_id``, ``org_id``, ``archived_at``, ``message_count``)
    appear on output and are ignored on input.
    """

    id: ThreadId | None = None
    version: StrictInt = Field(default=0, ge=0, le=MAX_VERSION)
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None
    last_activity_at: UtcDatetime | None = None
    workspace_root: str | None = None
    cwd: str | None = None
    loom_version: str | None = None
    git_branch: str | None = None
    git_remote_url: str | None = None
    git_initial_branch: str | None = None
    git_initial_commit_sha: str | None = None
    git_current_commit_sha: str | None = None
    git_commits: list[str] = Field(default_factory=list)
    git_start_dirty: StrictBool | None = None
    git_end_dirty: StrictBool | None = None
    provider: str | None = None
    model: str | None = None
    conversation: Conversation = Field(default_factory=Conversation)
    agent_state: AgentState | None = None
    metadata: Metadata = Field(default_factory=Metadata)
    is_private: StrictBool = False
    visibility: Visibility = "private"
    is_shared_with_support: StrictBool = False
    _always_set: ClassVar[frozenset[str]] = frozenset({"conversation", "metadata"})

    @field_validator("git_commits")
    @classmethod
    def _no_blank_commits(cls, value: list[str]) -> list[str]:
        if any(not sha.strip() for sha in value):
            raise ValueError("commit SHAs must not be blank")
        return value

    @property
    def messages(self) -> list[Message]:
        """Shortcut for ``conversation.messages``."""
        return self.conversation.messages


__all__ = [
    "AGENT_STATE_KINDS",
    "SERVER_FIELDS",
    "VISIBILITIES",
    "AgentState",
    "Conversation",
    "Message",
    "Metadata",
    "Role",
    "Thread",
    "ToolCall",
    "UtcDatetime",
    "Visibility",
    "clamp_leap_second",
    "format_utc",
    "format_utc_minute",
    "to_utc",
]
