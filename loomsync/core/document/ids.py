"""Thread identifiers: ``T-`` followed by a canonical lowercase UUID (API.md section 1).

New identifiers are UUIDv7 (RFC 9562), so they sort by creation time.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import uuid_utils
from pydantic import GetCoreSchemaHandler
from pydantic_core import PydanticCustomError, core_schema

PREFIX = "T-"

#: Namespace of the per-owner ids of imported sessions (:meth:`ThreadId.owned`). Fixed
#: forever: changing it would give every imported session a new id on the next import.
OWNED_NAMESPACE = uuid.UUID("3f1c7a52-2d0e-4d55-9a43-6a1f0e7b9c21")


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

    @classmethod
    def owned(cls, owner: str, thread_id: str) -> ThreadId:
        """The id an import of ``thread_id`` (a session's own id, as the importers derive it)
        gets for ``owner``: ``T-`` + UUIDv5 in :data:`OWNED_NAMESPACE` over ``[owner,
        thread_id]`` (RFC 9562 section 5.5).

        Two owners never share an imported id, the same owner gets the same id on every
        machine, and nobody who knows only a session's UUID can compute (and pre-create) the
        id of its owner's copy without also naming that owner (issue 15, item 5). ``owner`` is
        the token's ``sub`` (API.md section 3), or a key of this machine when not logged in
        (:func:`loomsync.importers.run.import_owner`).

        Raises:
            InvalidThreadId: ``thread_id`` is not a thread id.
        """
        base = cls.parse(thread_id)
        return cls.from_uuid(uuid.uuid5(OWNED_NAMESPACE, json.dumps([owner, str(base)])))

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


__all__ = ["OWNED_NAMESPACE", "PREFIX", "InvalidThreadId", "ThreadId"]
