"""Pure edits of thread documents shared by the stores: ids, metadata patches, archive, forks.

None of these touch disk or network; each returns a new :class:`Thread` and leaves its input
unchanged.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import (
    SERVER_FIELDS,
    VISIBILITIES,
    Metadata,
    Thread,
    Visibility,
    format_utc,
)
from loomsync.core.document.patch import merge_patch
from loomsync.errors import InvalidInputError


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def parse_id(value: str) -> ThreadId:
    """Validate a thread id.

    Raises:
        InvalidInputError: not ``T-`` + a lowercase UUID.
    """
    try:
        return ThreadId.parse(value)
    except InvalidThreadId:
        raise InvalidInputError(f"not a thread id: {value!r} (expected T-<uuid>)") from None


def with_fields(thread: Thread, **fields: Any) -> Thread:
    """A copy with fields replaced; unknown names become unknown (kept) fields."""
    data = thread.model_dump(mode="python", exclude_unset=True, by_alias=True)
    data.update(fields)
    return Thread.model_validate(data)


def without_fields(thread: Thread, *names: str) -> Thread:
    """A copy without the named fields (declared fields go back to their defaults)."""
    data = thread.model_dump(mode="python", exclude_unset=True, by_alias=True)
    for name in names:
        data.pop(name, None)
    return Thread.model_validate(data)


def prepared(thread: Thread) -> Thread:
    """The thread ready to store: an id (fresh UUIDv7) and ``created_at`` (now) when missing."""
    fields: dict[str, Any] = {}
    if thread.id is None:
        fields["id"] = ThreadId.new()
    if thread.created_at is None:
        fields["created_at"] = now()
    return with_fields(thread, **fields) if fields else thread


def compose_patches(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """One merge patch with the effect of applying ``first`` then ``second`` (nulls kept)."""
    result = dict(first)
    for key, value in second.items():
        before = result.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            result[key] = compose_patches(before, value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def patched_metadata(thread: Thread, patch: Mapping[str, Any]) -> Thread:
    """Apply a merge patch to ``metadata``: absent keys unchanged, ``null`` clears one.

    A cleared key goes back to its default (title None, tags [], is_pinned False, extra {}).

    Raises:
        InvalidInputError: the patch is not an object, or the result is not valid metadata.
    """
    if not isinstance(patch, Mapping):
        raise InvalidInputError("a metadata patch is a JSON object")
    merged = merge_patch(thread.metadata.model_dump(mode="python", by_alias=True), patch)
    try:
        metadata = Metadata.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InvalidInputError(f"invalid metadata patch: {loc}: {first['msg']}") from None
    return with_fields(thread, metadata=metadata.model_dump(mode="python", exclude_unset=False))


def archived_at(thread: Thread) -> str | None:
    """When the thread was archived (RFC 3339), or None; kept as the server field ``archived_at``."""
    value = (thread.model_extra or {}).get("archived_at")
    return str(value) if value else None


def set_archived(thread: Thread, archived: bool) -> Thread:
    """Archive (``archived_at`` = now unless already set) or unarchive (``archived_at`` removed)."""
    if archived:
        if archived_at(thread):
            return thread
        return with_fields(thread, archived_at=format_utc(now()))
    return without_fields(thread, "archived_at")


def shared(
    thread: Thread, visibility: Visibility | None, shared_with_support: bool | None
) -> Thread:
    """Change visibility and/or support sharing; None leaves a setting as it is.

    Raises:
        InvalidInputError: an unknown visibility.
    """
    fields: dict[str, Any] = {}
    if visibility is not None:
        if visibility not in VISIBILITIES:
            raise InvalidInputError(f"visibility must be one of {', '.join(VISIBILITIES)}")
        fields["visibility"] = visibility
    if shared_with_support is not None:
        fields["is_shared_with_support"] = shared_with_support
    return with_fields(thread, **fields) if fields else thread


def sharing_patch(
    visibility: Visibility | None, shared_with_support: bool | None
) -> dict[str, Any]:
    """The PATCH body (API.md section 6) for a sharing change."""
    patch: dict[str, Any] = {}
    if visibility is not None:
        patch["visibility"] = visibility
    if shared_with_support is not None:
        patch["is_shared_with_support"] = shared_with_support
    return patch


def widens(payload: Mapping[str, object] | None) -> bool:
    """Does this PATCH payload let more people read the thread (``organization``/``public``
    visibility, or support sharing on)? Such a patch waits for the thread's pending save
    (issue 12, item 5: nobody may read the server's copy before the redacted one is there)."""
    payload = payload or {}
    return payload.get("visibility") in ("organization", "public") or (
        payload.get("is_shared_with_support") is True
    )


#: How long the words of an untitled source may be in a fork's title.
FORK_TITLE_WORDS = 60


def fork_title(source: Thread) -> str:
    """The title of a fork of ``source``: its title (untitled: the first line of its first
    user message, cut at :data:`FORK_TITLE_WORDS` characters), then ``(fork of <source
    id>)``. Stored in the fork's ``metadata.title``, it shows in every listing (``loomsync
    list``, the server's list, the MCP ``list_threads``, the web), so a fork is never one
    more row with its source's title."""
    title = source.metadata.title
    if not title:
        first = next((m.content for m in source.messages if m.role == "user"), "")
        words = first.strip().split("\n", 1)[0].strip() if first else ""
        if len(words) > FORK_TITLE_WORDS:
            words = words[: FORK_TITLE_WORDS - 1].rstrip() + "…"
        title = words or "untitled"
    return f"{title} (fork of {source.id})"


def forked(
    source: Thread,
    *,
    up_to: int | None = None,
    new_id: ThreadId | None = None,
    reason: str | None = None,
    keep_sharing: bool = False,
) -> Thread:
    """A fork: messages ``[0, up_to)`` (all by default) under a new id, as the server forks.

    The fork is visibility ``private`` and not shared with support (unless ``keep_sharing``:
    a conflict fork keeps the source's sharing), has no server fields,
    ``metadata.extra.forked_from = {"id", "version"[, "reason"]}``, and the title of
    :func:`fork_title`, so every listing tells it from its source (issue 27, item 10).

    Raises:
        InvalidInputError: ``up_to`` is negative or past the end of the thread.
    """
    count = len(source.messages)
    if up_to is None:
        up_to = count
    if not 0 <= up_to <= count:
        raise InvalidInputError(f"up_to must be between 0 and {count}")
    data = source.model_dump(mode="python", exclude_unset=True, by_alias=True)
    for name in (*SERVER_FIELDS, "updated_at"):
        data.pop(name, None)
    conversation = dict(data.get("conversation") or {})
    conversation["messages"] = conversation.get("messages", [])[:up_to]
    origin: dict[str, Any] = {"id": str(source.id), "version": source.version}
    if reason:
        origin["reason"] = reason
    metadata = dict(data.get("metadata") or {})
    metadata["extra"] = {**dict(metadata.get("extra") or {}), "forked_from": origin}
    metadata["title"] = fork_title(source)
    stamp = now()
    data.update(
        id=new_id or ThreadId.new(),
        version=0,
        conversation=conversation,
        metadata=metadata,
        created_at=stamp,
        last_activity_at=stamp,
    )
    if not keep_sharing:
        data.update(visibility="private", is_shared_with_support=False)
    return Thread.model_validate(data)


__all__ = [
    "FORK_TITLE_WORDS",
    "VISIBILITIES",
    "archived_at",
    "compose_patches",
    "fork_title",
    "forked",
    "merge_patch",
    "now",
    "parse_id",
    "patched_metadata",
    "prepared",
    "set_archived",
    "shared",
    "sharing_patch",
    "widens",
    "with_fields",
    "without_fields",
]
