"""The server's second line of defence against credentials in threads (issue 12 item 4).

Clients other than loomsync (curl, other tools) may send credentials the client would have
redacted (API.md §9). ``LOOMSYNC_SECRET_SCAN`` says what the server does with the text a write
brings (create, replace, append, metadata patch):

- ``redact`` (default): each credential is replaced by the client's marker
  (``[REDACTED:<kind>]``, :func:`loomsync.secrets.default_redactor`: the same detector) and the
  redacted document is stored and answered;
- ``reject``: 422 ``validation_error`` whose ``errors`` name each location and kind (at most 20,
  never the value, API.md §7); nothing is stored;
- ``off``: stored as sent.

Only the strings of the request are scanned (an append: its new messages, never the stored
thread), in one pass that returns the very same object when nothing is found, so a clean
document is stored exactly as sent (API.md §2). A fork brings no text and is not scanned.
Both actions leave an audit event (:mod:`app.threads.auditing`: kinds, message indexes and
top-level fields, never a value) and count in ``loomsync_secrets_total{kind, action}``.
"""

from __future__ import annotations

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
from loomsync.secrets import Redactor

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


def locate(redactor: Redactor, value: Any, path: Path = ()) -> list[Spot]:
    """Every credential :meth:`Redactor.redact_value` would replace in ``value``, with its path.

    Only the public interface is used: a subtree is entered only when ``redact_value`` changes
    it (the fields the redactor treats as structure are skipped for the same reason it skips
    them, by probing ``{key: item}``), and a changed string's findings come from ``find``.
    Costs a pass per level of nesting over the changed subtrees only (the clean ones are left
    at the first probe)."""
    if isinstance(value, str):
        return [Spot(path, finding.kind) for finding in redactor.find(value)]
    spots: list[Spot] = []
    if isinstance(value, dict):
        for key, item in value.items():
            probe = {key: item}
            if redactor.redact_value(probe) is not probe:
                spots += locate(redactor, item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if redactor.redact_value(item) is not item:
                spots += locate(redactor, item, (*path, index))
    return spots


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

    def scan(self, body: Any) -> Scanned:
        """Scan a request body (parsed JSON). ``off``: nothing is looked at. Otherwise one pass
        of the detector; only when it finds something, a second to say where (:func:`locate`).
        ``redact``: ``value`` is the body with every credential replaced by its marker.

        Raises:
            JsonSyntaxError: 400, the body nests deeper than the detector can walk (it recurses
                once or twice a level: a few hundred levels, below the parser's limit).
        """
        if self.mode == "off":
            return Scanned(body)
        try:
            redacted = self.redactor.redact_value(body)
            if redacted is body:
                return Scanned(body)
            spots = locate(self.redactor, body)
        except RecursionError:
            raise JsonSyntaxError("JSON nesting is too deep to scan for credentials") from None
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


def get_secret_scan(request: Request) -> SecretScan:
    """FastAPI dependency: the app's :class:`SecretScan`."""
    scan: SecretScan = request.app.state.secret_scan
    return scan


SecretScanDep = Annotated[SecretScan, Depends(get_secret_scan)]
