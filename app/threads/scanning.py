"""The server's second line of defence against credentials in threads (issue 12 item 4).

Clients other than loomsync (curl, other tools) may send credentials the client would have
redacted (API.md §9). ``LOOMSYNC_SECRET_SCAN`` says what the server does with the text a write
brings (create, replace, append, metadata patch):

- ``redact`` (default): each credential is replaced by the client's marker
  (``[REDACTED:<kind>]``, :func:`loomsync.core.secrets.default_redactor`: the same detector) and the
  redacted document is stored and answered;
- ``reject``: 422 ``validation_error`` whose ``errors`` name each location and kind (at most 20,
  never the value, API.md §7); nothing is stored;
- ``off``: stored as sent.

Only the strings of the request are scanned (an append: its new messages, never the stored
thread), in one walk of the detector that returns the very same object when nothing is found,
so a clean document is stored exactly as sent (API.md §2), and otherwise says where each
credential is, as the walk found it (field rules, URL userinfo, secret-named keys included). A fork brings no text and is not scanned.
Both actions leave an audit event (:mod:`app.threads.auditing`: kinds, message indexes and
top-level fields, never a value) and count in ``loomsync_secrets_total{kind, action}``.
"""

from __future__ import annotations

import re
import uuid
from collections import Counter as Tally
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from prometheus_client import Counter
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.context import AuditContext
from app.config import SecretScanMode
from app.errors import MAX_LISTED_ERRORS, ValidationFailed, short_part
from app.threads import auditing
from app.threads.documents import JsonSyntaxError
from loomsync.core.document import jsontext
from loomsync.core.secrets import MARKER_PREFIX, Redactor

Path = tuple[str | int, ...]

#: Where the messages of a scanned body are: a thread document's, and an append body's.
DOCUMENT_MESSAGES: Path = ("conversation", "messages")
APPEND_MESSAGES: Path = ("messages",)


@dataclass(frozen=True, slots=True)
class Spot:
    """One credential in a request body: the JSON path of the string that holds it (relative to
    the body) and its kind. Never its value."""

    path: Path
    kind: str


#: The kind of a change the detector made without saying where (:func:`changes`).
UNLOCATED = "unknown"

_MARKER_KIND = re.compile(re.escape(MARKER_PREFIX) + r"([a-z0-9-]+)\]")


def changes(old: Any, new: Any, path: Path = ()) -> list[Spot]:
    """Where ``new`` (a redaction of ``old``) differs from it: the backstop for a redaction
    that came back without its findings (the write is still audited, or refused). A changed
    string, or a container whose keys or length changed, is one spot; its kind is the first
    marker in the new value (``[REDACTED:<kind>]``), else :data:`UNLOCATED`."""
    if new is old:
        return []
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        return [spot for key in old for spot in changes(old[key], new[key], (*path, key))]
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        return [
            spot
            for n, (a, b) in enumerate(zip(old, new, strict=True))
            for spot in changes(a, b, (*path, n))
        ]
    if old == new:
        return []
    found = _MARKER_KIND.search(new if isinstance(new, str) else jsontext.dumps(new))
    return [Spot(path, found.group(1) if found else UNLOCATED)]


def redact_body(
    redactor: Redactor, body: Any, messages_at: Path = DOCUMENT_MESSAGES
) -> tuple[Any, list[Spot]]:
    """``body`` redacted (the same object when nothing was found), and where its credentials
    are (paths in the body; a change the detector made without saying where is found by
    :func:`changes`, so a changed body always has spots).

    Each part is walked at its position in the thread (which decides the structural fields
    kept, issue 12 item 2): a document or a patch is the thread itself; an append body's
    ``messages[n]`` is the thread's ``conversation.messages[n]`` (counted from the first new
    message: the paths are the body's) and its other fields the thread's own."""
    new, spots = _walk_parts(redactor, body, messages_at)
    if new is not body and not spots:
        spots = changes(body, new)
    return new, spots


def _walk_parts(redactor: Redactor, body: Any, messages_at: Path) -> tuple[Any, list[Spot]]:
    if messages_at == DOCUMENT_MESSAGES or not isinstance(body, dict):
        new, located = redactor.redact_value_located(body)
        return new, [Spot(found.path, found.kind) for found in located]
    depth = len(DOCUMENT_MESSAGES)
    result: dict[str, Any] = {}
    spots: list[Spot] = []
    for key, value in body.items():
        if (key,) == messages_at and isinstance(value, list):
            items = []
            for n, message in enumerate(value):
                new, located = redactor.redact_value_located(message, (*DOCUMENT_MESSAGES, n))
                items.append(new)
                spots += [Spot((*messages_at, *f.path[depth:]), f.kind) for f in located]
            changed = any(a is not b for a, b in zip(items, value, strict=True))
            result[key] = items if changed else value
        else:  # a field of the thread itself, walked at the root
            part, located = redactor.redact_value_located({key: value})
            result[key] = part[key]
            spots += [Spot(found.path, found.kind) for found in located]
    same = all(result[key] is value for key, value in body.items())
    return (body if same else result), spots


@dataclass(frozen=True, slots=True)
class Scanned:
    """What a scan of one request body found: ``value`` is what to store (the body itself when
    nothing was found or the mode stores bodies as sent), ``spots`` where the credentials are."""

    value: Any
    spots: Sequence[Spot] = ()

    @property
    def found(self) -> bool:
        """True when the body holds at least one credential."""
        return bool(self.spots)

    def kinds(self) -> dict[str, int]:
        """``{kind: count}``, kinds sorted."""
        return dict(sorted(Tally(spot.kind for spot in self.spots).items()))

    def details(self, messages_at: Path, first_index: int = 0) -> dict[str, Any]:
        """The audit details: ``kinds`` (:meth:`kinds`), ``message_indexes`` (positions in the
        thread, sorted; a body's message ``n`` under ``messages_at`` is message
        ``first_index + n``) and ``fields`` (top-level fields outside the messages, sorted).
        Never a value."""
        indexes: set[int] = set()
        fields: set[str] = set()
        depth = len(messages_at)
        for spot in self.spots:
            at = spot.path[depth] if len(spot.path) > depth else None
            if spot.path[:depth] == messages_at and isinstance(at, int):
                indexes.add(first_index + at)
            elif spot.path:
                fields.add(short_part(str(spot.path[0])))
        return {
            "kinds": self.kinds(),
            "message_indexes": sorted(indexes),
            "fields": sorted(fields),
        }

    def errors(self) -> list[dict[str, Any]]:
        """The 422 ``errors``: at most 20 ``{loc, msg, kind}``, ``loc`` from ``body`` (long
        field names cut, as every 422's are: they are client input too)."""
        return [
            {
                "loc": ["body", *(p if isinstance(p, int) else short_part(p) for p in spot.path)],
                "msg": f"holds a credential ({spot.kind}); remove it, or redact it as "
                f"[REDACTED:{spot.kind}]",
                "kind": spot.kind,
            }
            for spot in self.spots[:MAX_LISTED_ERRORS]
        ]


class SecretsRejected(ValidationFailed):
    """422 under ``LOOMSYNC_SECRET_SCAN=reject``: the body holds credentials (``errors`` say
    where and which kind, never the value)."""


class SecretScan:
    """The scan of one app: its mode, the detector and the counter (one per process)."""

    def __init__(self, mode: SecretScanMode, redactor: Redactor, counter: Counter) -> None:
        self.mode = mode
        self.redactor = redactor
        self.counter = counter

    def scan(self, body: Any, messages_at: Path = DOCUMENT_MESSAGES) -> Scanned:
        """Scan a request body (parsed JSON) whose messages are at ``messages_at``
        (:data:`DOCUMENT_MESSAGES`: a document or a patch; :data:`APPEND_MESSAGES`: an append).
        ``off``: nothing is looked at. Otherwise one walk of the detector, which says where each
        credential is (:meth:`Redactor.redact_value_located`); a body it changed without saying
        where still counts as found (:func:`changes`), so it is never stored unaudited.
        ``redact``: ``value`` is the body with every credential replaced by its marker.

        Raises:
            JsonSyntaxError: 400, the body nests deeper than the detector can walk (it recurses
                once or twice a level: a few hundred levels, below the parser's limit).
        """
        if self.mode == "off":
            return Scanned(body)
        try:
            redacted, spots = redact_body(self.redactor, body, messages_at)
        except RecursionError:
            raise JsonSyntaxError("JSON nesting is too deep to scan for credentials") from None
        if not spots:
            return Scanned(body)
        return Scanned(redacted if self.mode == "redact" else body, spots)

    def count(self, scanned: Scanned) -> None:
        """Count what a write's scan found, by kind, as this mode's action (after the write's
        answer: what was redacted in a stored write, or rejected)."""
        action = "rejected" if self.mode == "reject" else "redacted"
        for kind, number in scanned.kinds().items():
            self.counter.labels(kind, action).inc(number)

    async def settle(
        self,
        session: AsyncSession,
        audit: AuditContext,
        thread_id: uuid.UUID,
        scanned: Scanned,
        messages_at: Path,
        first_index: int = 0,
    ) -> None:
        """Act on a scan inside the write's transaction: nothing found, nothing done;
        ``redact``: a ``thread.secrets_redacted`` event beside the write.

        Raises:
            SecretsRejected: ``reject`` mode and something was found; the write's transaction is
                rolled back first and a ``thread.secrets_rejected`` event committed on its own.
        """
        if not scanned.found:
            return
        details = scanned.details(messages_at, first_index)
        if self.mode != "reject":
            await auditing.secrets_redacted(session, audit, thread_id, details)
            return
        await session.rollback()
        await auditing.secrets_rejected(session, audit, thread_id, details)
        await session.commit()
        self.count(scanned)
        raise SecretsRejected(
            "The body holds credentials; this server refuses them (LOOMSYNC_SECRET_SCAN=reject).",
            errors=scanned.errors(),
        )


async def get_secret_scan(request: Request) -> SecretScan:
    """FastAPI dependency: the app's :class:`SecretScan`. ``async`` although it never awaits:
    FastAPI runs a plain ``def`` dependency in a thread pool, a hand-off that cost the write
    path 5-8% of its CPU (bench/README.md, writes; issue 18)."""
    scan: SecretScan = request.app.state.secret_scan
    return scan


SecretScanDep = Annotated[SecretScan, Depends(get_secret_scan)]
