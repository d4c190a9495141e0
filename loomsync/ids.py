"""Thread identifiers: ``T-`` followed by a canonical lowercase UUID (API.md section 1).

New identifiers are UUIDv7 (RFC 9562), so they sort by creation time.
"""

from __future__ import annotations

import uuid
from typing import Any

import uuid_utils
from pydantic import GetCoreSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

PREFIX = "T-"


class InvalidThreadId(ValueError):
    """Raised when a string is not ``T-`` + a canonical lowercase UUID."""


class ThreadId(str):
    """A validated thread id string, e.g. ``"T-019b7f94-51b4-7593-922e-ba12b5b73b52"``.

    Construct with :meth:`parse` (validates) or :meth:`new` (fresh UUIDv7). Usable as a
    pydantic field type; invalid input becomes a ``thread_id`` validation error.
    """

    __slots__ = ()

    @classmethod
    def parse(cls, value: str) -> ThreadId:
        """Validate ``value`` and return it as a ThreadId.

        Raises:
            InvalidThreadId: not ``T-`` + a canonical (lowercase, hyphenated) UUID.
        """
        if not isinstance(value, str) or not value.startswith(PREFIX) or len(value) != 38:
            raise InvalidThreadId("a thread id is 'T-' followed by a lowercase UUID")
        raw = value[len(PREFIX) :]
        try:
            parsed = uuid.UUID(raw)
        except ValueError as exc:
            raise InvalidThreadId("a thread id is 'T-' followed by a lowercase UUID") from exc
        if str(parsed) != raw:
            raise InvalidThreadId("a thread id is 'T-' followed by a lowercase UUID")
        return cls(value)

    @classmethod
    def new(cls) -> ThreadId:
        """Return a fresh id built on a UUIDv7 (time-ordered, RFC 9562 section 5.7)."""
        return cls(PREFIX + str(uuid_utils.uuid7()))

    @classmethod
    def from_uuid(cls, value: uuid.UUID) -> ThreadId:
        """Return the id for a UUID value (any version)."""
        return cls(PREFIX + str(value))

    @property
    def uuid(self) -> uuid.UUID:
        """The UUID part of the id."""
        return uuid.UUID(self[len(PREFIX) :])

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        def validate(value: str) -> ThreadId:
            try:
                return cls.parse(value)
            except InvalidThreadId as exc:
                raise PydanticCustomError("thread_id", str(exc)) from None

        return core_schema.no_info_after_validator_function(
            validate,
            core_schema.str_schema(
                pattern=r"^T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
            ),
            serialization=core_schema.to_string_ser_schema(),
        )


__all__ = ["PREFIX", "InvalidThreadId", "ThreadId"]
