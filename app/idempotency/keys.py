"""``Idempotency-Key`` on the POST routes of /api/threads (create, append, fork), after the IETF
httpapi draft "The Idempotency-Key HTTP Header Field" (draft-ietf-httpapi-idempotency-key-header).

A client that sends a key with a POST may send the same request again with the same key (after a
timeout, a dropped connection, a crash) and get the answer of the first attempt, with the write
done once:

- A key is 1-255 characters: the draft's structured-field string (``"…"``, RFC 8941 §3.3.3),
  or the same characters bare (visible ASCII, no spaces). Empty, longer, non-ASCII, or sent in
  more than one header line: 400. Keys are per user (the token's ``sub``); anonymous requests
  are refused before the key is read (writes need a token).
- "The same request" is the same method, path, ``If-Match`` and body bytes (their SHA-256, the
  draft's request fingerprint). The same key with another request: 422 ``idempotency_key_reused``.
- Only successful answers are stored: status, body, ``ETag``, ``Location`` and ``Content-Type``;
  a replay adds ``Idempotent-Replayed: true``. A refusal (4xx) or failure (5xx) writes nothing
  (each write is one transaction) and stores nothing, so a retry runs the request again and can
  succeed once what refused it changed (a 409's base version, a 503's outage).
- Atomicity: the answer is inserted as the last statement of the write's own transaction
  (:meth:`Idempotency.run`), so the key and the write commit together or not at all, and one
  key never has two outcomes. It is the only statement a key adds to a first attempt.
- A retry, or a duplicate sent while the first is in flight, runs until it meets the key: its
  own insert of the answer waits (on the unique index, inside PostgreSQL) for the first to end,
  or its write is refused because the first changed the thread (an append's base version, a
  create's id). Either way its own work is rolled back and it answers the first's answer; had
  the first failed, the duplicate's own write stands. No 409: the SDK reads one as a version
  conflict.
- An answer that holds a thread (a create's or fork's 201, ``Location: /api/threads/{id}``)
  records the thread's id. A later write that replaces the thread's text (PUT, PATCH) rewrites
  such answers with the thread as it is then (:func:`refresh_answers`): a retry still gets a
  201 for its create, with the current thread and ``ETag``, and no stored answer keeps text its
  owner replaced (issue 12 item 3: the server keeps no older version of a replaced message).
- Deleting the thread makes those answers the 410 a read of it gives (:func:`forget_answers`):
  a retry learns the thread is gone, and no stored answer keeps the deleted text.
- A key is kept ``LOOMSYNC_IDEMPOTENCY_KEY_TTL`` seconds (24 h); an older row no longer
  replays (the key may be used again), and expired rows are deleted at most every
  ``LOOMSYNC_IDEMPOTENCY_PURGE_INTERVAL`` seconds per process, in the background.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, Header, Request, Response
from sqlalchemy import Interval, Row, delete, func, literal, select, true, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth import CurrentPrincipal
from app.config import Settings
from app.database import SettingsDep
from app.errors import AppError, BadRequest, Gone, Unavailable
from app.idempotency.tables import idempotency_keys as keys
from loomsync.core.document.ids import InvalidThreadId, ThreadId

log = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_CHARS = 255
#: Response headers a replay repeats (lower case, as Starlette keeps them).
REPLAYED_HEADERS = ("content-type", "etag", "location")

_SF_STRING = re.compile(r'"((?:[ !#-\[\]-~]|\\["\\])*)"')
_BARE = re.compile(r"[!#-~][!-~]*")
_ESCAPE = re.compile(r"\\(.)")
#: What :func:`parse_key` accepts, for the OpenAPI document.
KEY_PATTERN = (
    rf'^("([ !#-\[\]-~]|\\["\\]){{1,{MAX_KEY_CHARS}}}"|[!#-~][!-~]{{0,{MAX_KEY_CHARS - 1}}})$'
)
KEY_DESCRIPTION = (
    "Makes the POST safe to retry: the same key with the same request (method, path, If-Match, "
    "body) within the key's lifetime (LOOMSYNC_IDEMPOTENCY_KEY_TTL, 24 h) answers the first "
    "success again (with `Idempotent-Replayed: true`) without writing twice; with another "
    "request it is 422. Failures are not kept. 1-255 visible ASCII characters, "
    'bare or as a structured-field string (`"…"`); a random UUID per operation is ideal.'
)


class KeyReused(AppError):
    """422: this key was used (by this user, within the TTL) for a different request (the
    draft's "Idempotency-Key is already used with a different request payload")."""

    status, code, title = 422, "idempotency_key_reused", "Idempotency key reused"


def parse_key(values: list[str]) -> str:
    """The key of the ``Idempotency-Key`` header lines ``values`` (one expected).

    Raises:
        BadRequest: several lines, an empty key, one over 255 characters, or characters other
            than visible ASCII (RFC 8941 §3.3.3 for the quoted form).
    """
    if len(values) != 1:
        raise BadRequest(f"Send one {HEADER} header, not {len(values)}.")
    value = values[0].strip(" \t")
    quoted = _SF_STRING.fullmatch(value)
    if quoted:
        key = _ESCAPE.sub(r"\1", quoted.group(1))
    elif _BARE.fullmatch(value):
        key = value
    else:
        raise BadRequest(f"{HEADER} must be visible ASCII, bare or as a quoted string.")
    if not 1 <= len(key) <= MAX_KEY_CHARS:
        raise BadRequest(f"{HEADER} must hold 1 to {MAX_KEY_CHARS} characters.")
    return key


def fingerprint(method: str, path: str, if_match: list[str], body: bytes) -> bytes:
    """SHA-256 (32 bytes) of method, path, the ``If-Match`` lines and the body bytes; the parts
    before the body are one JSON array, so no two requests share an encoding (no ``If-Match``
    and an empty one differ)."""
    head = json.dumps([method, path, if_match], ensure_ascii=True).encode()
    return hashlib.sha256(head + b"\0" + body).digest()


class Idempotency:
    """The key of one POST (None: none was sent) and how its route runs: :meth:`run`."""

    def __init__(
        self,
        user_id: str | None = None,
        key: str | None = None,
        digest: bytes = b"",
        ttl: float = 0.0,
    ) -> None:
        self.user_id = user_id
        self.key = key
        self.digest = digest
        self.ttl = ttl

    async def run(
        self, session: AsyncSession, write: Callable[[], Awaitable[Response]]
    ) -> Response:
        """Run ``write`` (the route's work, uncommitted; its success response) and commit.

        With a key, the answer is inserted in the same transaction, as its last statement (the
        one statement a key adds to a first attempt). That insert meets an earlier use of the
        key: a committed one at once, one in flight by waiting on the unique index until it
        ends. Then this attempt's write is rolled back and the stored answer replayed (or 422).
        A refusal (``AppError``) whose key holds an answer is a retry whose write already
        happened (an append's base version moved on, a create's id exists): replayed too.

        Raises:
            KeyReused: the key holds the answer of another request (422).
            AppError: ``write``'s refusal, when the key holds no answer.
        """
        if self.key is None:
            response = await write()
            await session.commit()
            return response
        try:
            response = await write()
        except AppError:
            await session.rollback()
            stored = await self._stored(session)
            if stored is None:
                raise
            return self._answer(stored)
        if await self._record(session, response):
            await session.commit()
            return response
        await session.rollback()  # another attempt's write committed first: undo this one
        stored = await self._stored(session)
        if stored is None:  # it expired and was purged in between: unlikely, and a retry works
            raise Unavailable("The idempotency key changed hands; retry.")
        return self._answer(stored)

    async def _record(self, session: AsyncSession, response: Response) -> bool:
        """Insert the answer (taking over an expired row); False when the key is in use."""
        headers = {n: response.headers[n] for n in REPLAYED_HEADERS if n in response.headers}
        values = {
            "fingerprint": self.digest,
            "status": response.status_code,
            "headers": headers,
            "body": bytes(response.body),
            "thread_id": answered_thread(headers),
        }
        stmt = insert(keys).values(user_id=self.user_id, key=self.key, **values)
        stmt = stmt.on_conflict_do_update(
            index_elements=[keys.c.user_id, keys.c.key],
            set_={**{name: stmt.excluded[name] for name in values}, "created_at": func.now()},
            where=_expired(self.ttl),
        )
        return (await session.execute(stmt.returning(true()))).first() is not None

    async def _stored(self, session: AsyncSession) -> Row[Any, Any, Any, Any] | None:
        """The key's unexpired row (fingerprint and answer), read in a new transaction."""
        stmt = select(keys.c.fingerprint, keys.c.status, keys.c.headers, keys.c.body).where(
            keys.c.user_id == self.user_id, keys.c.key == self.key, ~_expired(self.ttl)
        )
        stored = (await session.execute(stmt)).first()
        await session.rollback()
        return stored

    def _answer(self, stored: Row[Any, Any, Any, Any]) -> Response:
        """The stored answer, marked ``Idempotent-Replayed``, if it is this request's."""
        if stored.fingerprint != self.digest:
            raise KeyReused(
                f"This {HEADER} was used for a different request (method, path, If-Match or body)."
            )
        headers = {**stored.headers, REPLAYED_HEADER: "true"}
        return Response(stored.body, status_code=stored.status, headers=headers)


_THREAD_LOCATION = re.compile(r"/api/threads/(T-[0-9a-f-]{36})")


def answered_thread(headers: dict[str, str]) -> uuid.UUID | None:
    """The thread an answer's body holds: the one its ``Location`` names (a create's or a
    fork's 201), else None (an append's answer holds no document)."""
    location = _THREAD_LOCATION.fullmatch(headers.get("location", ""))
    if location is None:
        return None
    try:
        return ThreadId.parse(location.group(1)).uuid
    except InvalidThreadId:
        return None


async def refresh_answers(
    session: AsyncSession, thread_id: uuid.UUID, body: bytes, etag: str
) -> None:
    """Rewrite the stored answers that hold thread ``thread_id`` (:func:`answered_thread`) with
    ``body``, its output now, and ``etag``, in the caller's (writing) transaction: called by
    every write that replaces text of a thread and renders it whole (PUT replace, PATCH). Status,
    ``Location`` and fingerprint stay, so a retry still replays a 201 without writing again. One
    probe of the partial index ``idempotency_keys_thread``; nothing when no answer holds it."""
    await session.execute(
        update(keys)
        .where(keys.c.thread_id == thread_id)
        .values(body=body, headers=keys.c.headers.op("||")(func.jsonb_build_object("etag", etag)))
    )


async def forget_answers(session: AsyncSession, thread_id: uuid.UUID) -> None:
    """Make the stored answers that hold thread ``thread_id`` (:func:`answered_thread`) the 410
    a read of it now gives, in the caller's (deleting) transaction: a deleted thread disappears
    from every read (API.md section 1), replays included. The fingerprint stays, so a retry of
    the create or fork that made the thread gets 410 and writes nothing (its id is never
    reused), and another request with the key is still 422. One probe of the partial index
    ``idempotency_keys_thread``; nothing when no answer holds it."""
    gone = Gone().to_response()
    await session.execute(
        update(keys)
        .where(keys.c.thread_id == thread_id)
        .values(
            status=gone.status_code,
            body=bytes(gone.body),
            headers={"content-type": gone.headers["content-type"]},
        )
    )


#: For requests without a key (and PUT): :meth:`Idempotency.run` runs the write and commits.
NO_KEY = Idempotency()


def _expired(ttl: float) -> Any:
    return keys.c.created_at < func.now() - literal(timedelta(seconds=ttl), Interval())


class _Purge:
    """Deletes expired keys in the background, at most once per ``interval`` seconds."""

    def __init__(self) -> None:
        self.next_at = 0.0
        self.task: asyncio.Task[int] | None = None

    def maybe_start(self, maker: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        """Start :func:`purge_expired` unless one runs or the last began under an interval ago."""
        now = time.monotonic()
        if now < self.next_at or (self.task is not None and not self.task.done()):
            return
        self.next_at = now + settings.idempotency_purge_interval
        self.task = asyncio.create_task(purge_expired(maker, settings.idempotency_key_ttl))


async def purge_expired(maker: async_sessionmaker[AsyncSession], ttl: float) -> int:
    """Delete the keys older than ``ttl`` seconds (one statement, an index range scan); the
    number deleted, or 0 when the database could not be reached (logged; tried again later)."""
    try:
        async with maker() as session:
            result = await session.execute(delete(keys).where(_expired(ttl)))
            await session.commit()
    except Exception as exc:  # a background task: log, never raise into the void
        log.warning("purging expired idempotency keys failed: %s", exc)
        return 0
    deleted: int = getattr(result, "rowcount", 0)
    return deleted


def _purge_of(request: Request) -> _Purge:
    state = request.app.state
    purge: _Purge | None = getattr(state, "idempotency_purge", None)
    if purge is None:
        purge = state.idempotency_purge = _Purge()
    return purge


async def get_idempotency(
    request: Request,
    settings: SettingsDep,
    principal: CurrentPrincipal,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias=HEADER,
            description=KEY_DESCRIPTION,
            json_schema_extra={"pattern": KEY_PATTERN, "maxLength": MAX_KEY_CHARS + 2},
        ),
    ] = None,
) -> Idempotency:
    """FastAPI dependency of the POST routes: the request's key and fingerprint (no database
    statement: the key is looked up by :meth:`Idempotency.run`).

    Raises:
        BadRequest: a malformed key (400).
    """
    if idempotency_key is None or principal.user_id is None:
        return NO_KEY
    key = parse_key(request.headers.getlist(HEADER))
    digest = fingerprint(
        request.method, request.url.path, request.headers.getlist("if-match"), await request.body()
    )
    _purge_of(request).maybe_start(request.app.state.sessionmaker, settings)
    return Idempotency(principal.user_id, key, digest, settings.idempotency_key_ttl)


IdempotencyDep = Annotated[Idempotency, Depends(get_idempotency)]
