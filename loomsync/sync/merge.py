"""Pure sync logic: what to send, and how to merge two copies of a thread without losing a turn.

Copies are compared as *snapshots* (:mod:`loomsync.sync.snapshots`): the message count and
chain digest plus every other field. Three decisions live here:

- :func:`plan_push`: given the local copy and the server state it is based on (a
  :class:`SyncBase`), send nothing, only the new messages (``POST …/messages``), or the whole
  thread (``PUT`` + If-Match). :func:`plan_appended` decides the same from the thread file's
  last commit and the messages appended since the base's commit, without the whole thread.
- :func:`resolve_conflict`: after a 409, merge the local copy with the server's ``current``.
  One side's messages a prefix of the other's: keep the longer. Both added different messages:
  ``"diverged"``, the caller keeps the local side as a fork and adopts the server copy.
- :func:`merge_save`: the same idea on this machine, when a writer saves over a file that
  someone else changed since its last save (a pull, a conflict merge, ``loomsync share``).

Fields merge three-way against a common ancestor: a field only one side changed takes that
side's value; both changed: the local (or writer's) value wins, dicts merge key by key, commit
lists are unioned.

Before comparing, each side takes over the redaction markers of the other
(:func:`adopt_markers`): a copy that differs only where the other side wrote
``[REDACTED:<kind>]`` is the same copy, redacted (a server that redacts more than this client,
issue 12, item 1), not a divergent history; the merge keeps the redacted text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from loomsync.core.document.model import SERVER_FIELDS, Message, Thread
from loomsync.store.threadlog import EMPTY_CHAIN, Head, chain
from loomsync.sync.legacybase import upgraded
from loomsync.sync.markers import adopt_redactions
from loomsync.sync.snapshots import (
    IGNORED_FIELDS,
    Snapshot,
    SyncBase,
    canonical,
    chain_of,
    fields_of,
    snapshot,
    snapshot_of_head,
    split,
    sync_base,
)

#: Fields ``POST …/messages`` can carry besides messages (API.md section 6).
APPEND_FIELDS = (
    "agent_state",
    "last_activity_at",
    "git_branch",
    "git_remote_url",
    "git_current_commit_sha",
    "git_commits",
    "git_end_dirty",
)
_MISSING: Any = object()


def is_prefix(shorter: list[Any], longer: list[Any]) -> bool:
    """True if ``shorter`` is a prefix of (or equal to) ``longer``."""
    return len(shorter) <= len(longer) and longer[: len(shorter)] == shorter


@dataclass(frozen=True, slots=True)
class Push:
    """What to send: ``"none"``, ``"append"`` (``messages`` and ``fields``) or ``"put"``.

    Attributes:
        snapshot: the local thread's, when planning computed it (the next base, once sent).
        base: the base as planned against: the given one, or an older client's base upgraded
            to the chain digest (:func:`loomsync.sync.legacybase.upgraded`); worth writing back
            when it differs and nothing is sent.
    """

    kind: Literal["none", "append", "put"]
    messages: list[Message] = field(default_factory=list)
    fields: dict[str, Any] = field(default_factory=dict)
    snapshot: Snapshot | None = None
    base: SyncBase | None = None


def plan_push(thread: Thread, base: SyncBase | None) -> Push:
    """Decide how to bring the server (at ``base``) to ``thread``, the whole local copy.

    Append when the local messages extend the base's and every other difference is one the
    append endpoint carries (agent state, activity time, git fields; commits only added);
    otherwise PUT the whole thread. None when nothing differs. Dumps and hashes each message
    once: the result carries the thread's snapshot, so recording the next base costs nothing
    more. A base of an older client is upgraded on the way (``Push.base``).
    """
    if base is None:
        return Push("put")
    items = [canonical(m) for m in thread.messages]
    base = upgraded(base, items)
    shared = min(base.message_count, len(items))
    prefix = chain(EMPTY_CHAIN, items[:shared])
    whole = chain(prefix, items[shared:])
    taken = Snapshot(message_count=len(items), messages_digest=whole, fields=fields_of(thread))
    if len(items) < base.message_count or prefix != base.messages_digest:
        return Push("put", snapshot=taken, base=base)
    return _plan(base, taken, lambda: thread.messages[base.message_count :])


def plan_appended(head: Head, messages: Sequence[Message], base: SyncBase) -> Push | None:
    """:func:`plan_push` from a thread file's last commit and the messages committed after the
    base's commit (:meth:`loomsync.store.local.LocalThreadStore.messages_since`), without the
    whole thread: O(new messages + fields).

    Returns None when this cannot be decided so (the base locates no commit of this
    generation, or the new messages do not continue the base's chain to ``head``'s): the
    caller then plans from the whole thread.
    """
    if not base.locates() or head.generation != base.generation:
        return None
    if head.count != base.message_count + len(messages):
        return None
    try:
        if chain_of(messages, base.messages_digest) != head.chain:
            return None
    except ValueError:  # not a hex digest (a redacted base): matches nothing
        return None
    return _plan(base, snapshot_of_head(head), lambda: list(messages))


def _plan(base: SyncBase, taken: Snapshot, new: Callable[[], list[Message]]) -> Push:
    """The plan for a local copy (``taken``) whose messages extend the base's; ``new`` gives
    the messages after the base's."""
    fields = taken.fields
    rest = {k: v for k, v in fields.items() if k not in APPEND_FIELDS}
    if rest != {k: v for k, v in base.fields.items() if k not in APPEND_FIELDS}:
        return Push("put", snapshot=taken, base=base)
    changed: dict[str, Any] = {}
    for name in APPEND_FIELDS:
        now, old = fields.get(name), base.fields.get(name)
        if now == old:
            continue
        if now is None:
            return Push("put", snapshot=taken, base=base)  # an append cannot clear a field
        if name == "git_commits":
            old = old or []
            if now[: len(old)] != old:
                return Push("put", snapshot=taken, base=base)
            now = now[len(old) :]
        changed[name] = now
    if taken.message_count == base.message_count and not changed:
        return Push("none", snapshot=taken, base=base)
    if fields.get("last_activity_at"):
        changed["last_activity_at"] = fields["last_activity_at"]
    return Push("append", new(), changed, taken, base)


def merge_fields(
    base: dict[str, Any] | None, local: dict[str, Any], other: dict[str, Any]
) -> dict[str, Any]:
    """Three-way merge of field dicts; ``local`` wins where both changed a scalar.

    With no ancestor (``base`` None) local values win and ``other`` fills the gaps.
    """
    if base is None:
        return {**other, **local}
    out: dict[str, Any] = {}
    for key in dict.fromkeys([*local, *other]):
        b, mine, theirs = (
            base.get(key, _MISSING),
            local.get(key, _MISSING),
            other.get(key, _MISSING),
        )
        if mine == theirs or theirs == b:
            value = mine
        elif mine == b:
            value = theirs
        elif isinstance(mine, dict) and isinstance(theirs, dict):
            value = merge_fields(b if isinstance(b, dict) else {}, mine, theirs)
        elif key == "git_commits" and isinstance(mine, list) and isinstance(theirs, list):
            value = theirs + [sha for sha in mine if sha not in theirs]
        else:
            value = mine
        if value is not _MISSING:
            out[key] = value
    return out


def build(
    template: Thread, fields: dict[str, Any], messages: list[Message], **extra: Any
) -> Thread:
    """A thread with ``template``'s id and server fields, the given fields and messages."""
    data = dict(fields)
    conversation = dict(data.pop("conversation", None) or {})
    conversation["messages"] = [m.model_dump(mode="python", exclude_unset=True) for m in messages]
    data["conversation"] = conversation
    kept = {k: v for k, v in (template.model_extra or {}).items() if k in SERVER_FIELDS}
    data.update(kept, id=template.id, version=template.version, is_private=template.is_private)
    data.update(extra)
    return Thread.model_validate(data)


def adopt_markers(source: Thread, target: Thread, *, within: int | None = None) -> Thread:
    """``target`` with every message and field that ``source`` holds in redacted form (equal
    but for markers, :func:`loomsync.sync.markers.is_redaction_of`) taken from ``source``; the same
    object when there is none. Messages are compared position by position, only the first
    ``within`` (the common ancestor's; None: all, for the server's answer to what was just
    sent): a message both sides added since is no redaction of the other (review P2-10)."""
    source_messages, source_fields = split(source)
    target_messages, target_fields = split(target)
    messages = list(target.messages)
    changed = False
    pairs = list(zip(target_messages, source_messages, strict=False))[:within]
    for index, (mine, theirs) in enumerate(pairs):
        if mine != theirs and (adopted := adopt_redactions(theirs, mine)) is not mine:
            messages[index] = Message.model_validate(adopted)
            changed = True
    fields = adopt_redactions(source_fields, target_fields)
    if not changed and fields is target_fields:
        return target
    return build(target, fields, messages)


@dataclass(frozen=True, slots=True)
class Resolution:
    """Outcome of a 409 merge.

    ``kind``: ``"local_ahead"`` (the server's messages are a prefix of ours: push ours on top),
    ``"server_ahead"`` (ours are a prefix of the server's: keep the server's), ``"diverged"``.
    ``merged`` is the copy to keep locally (for ``"diverged"``: the server's copy).
    """

    kind: Literal["local_ahead", "server_ahead", "diverged"]
    merged: Thread


#: Visibilities from the narrowest (API.md section 2).
_WIDTH = {"private": 0, "organization": 1, "public": 2}


def _widest_sharing(fields: dict[str, Any], server: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with the wider ``visibility`` and support sharing of it and ``server``.

    For a first upload meeting a server copy (no ancestor): a copy never synced holds the
    default it got here, not a choice, so it never narrows a copy someone widened (a re-import
    on another machine after ``loomsync share``, issue 15 item 5); narrowing is an edit made
    on top of a known version."""
    out = dict(fields)
    mine, theirs = fields.get("visibility"), server.get("visibility")
    if theirs in _WIDTH and (mine not in _WIDTH or _WIDTH[theirs] > _WIDTH[mine]):
        out["visibility"] = theirs
    if server.get("is_shared_with_support") is True:
        out["is_shared_with_support"] = True
    return out


def resolve_conflict(local: Thread, base: SyncBase | None, server: Thread) -> Resolution:
    """Merge the local copy with the server's copy (``current`` of a 409); redaction markers
    either side holds are kept (:func:`adopt_markers`)."""
    shared = base.message_count if base else 0
    local = adopt_markers(server, local, within=shared)
    server = adopt_markers(local, server, within=shared)
    local_messages, local_fields = split(local)
    server_messages, server_fields = split(server)
    if is_prefix(server_messages, local_messages):
        kind: Literal["local_ahead", "server_ahead"] = "local_ahead"
        messages = local.messages
    elif is_prefix(local_messages, server_messages):
        kind = "server_ahead"
        messages = server.messages
    else:
        return Resolution("diverged", server)
    fields = merge_fields(base.fields if base else None, local_fields, server_fields)
    if base is None:
        fields = _widest_sharing(fields, server_fields)
    archived = (local.model_extra or {}).get("archived_at")
    extra = {"archived_at": archived} if archived else {}
    return Resolution(kind, build(server, fields, messages, is_private=local.is_private, **extra))


@dataclass(frozen=True, slots=True)
class SaveMerge:
    """Result of :func:`merge_save`: the file's new content, or ``fork`` for the writer's copy."""

    thread: Thread
    fork: bool = False


def merge_save(writer: Thread, previous: Snapshot | None, current: Thread) -> SaveMerge:
    """Merge a writer's save with a file someone else changed since the writer's last save.

    Args:
        writer: the thread being saved.
        previous: the writer's last save (the common ancestor), or None if unknown.
        current: the file as it is now.

    Returns ``fork=True`` when both added different messages: ``current`` stays, and the
    writer's copy must go to a fork. Otherwise the merged thread to write. Redaction markers
    either side holds are kept (:func:`adopt_markers`).
    """
    shared = previous.message_count if previous else 0
    writer = adopt_markers(current, writer, within=shared)
    current = adopt_markers(writer, current, within=shared)
    writer_messages, writer_fields = split(writer)
    current_messages, current_fields = split(current)
    if is_prefix(current_messages, writer_messages):
        messages = writer.messages
    elif is_prefix(writer_messages, current_messages):
        messages = current.messages
    elif previous is not None and chain_of(current.messages) == previous.messages_digest:
        messages = writer.messages  # only the writer changed the messages: a deliberate rewrite
    else:
        return SaveMerge(writer, fork=True)
    fields = merge_fields(previous.fields if previous else None, writer_fields, current_fields)
    # Server fields (owner, archived_at) come from the file: edits and pulls own them.
    return SaveMerge(build(current, fields, messages, is_private=writer.is_private))


__all__ = [
    "APPEND_FIELDS",
    "IGNORED_FIELDS",
    "Push",
    "Resolution",
    "SaveMerge",
    "Snapshot",
    "SyncBase",
    "adopt_markers",
    "build",
    "chain_of",
    "is_prefix",
    "merge_fields",
    "merge_save",
    "plan_appended",
    "plan_push",
    "resolve_conflict",
    "snapshot",
    "snapshot_of_head",
    "split",
    "sync_base",
]
