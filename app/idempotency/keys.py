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
- Atomicity: the key row is inserted as the first statement of the write's own transaction and
  its answer added just before that transaction commits (:meth:`Idempotency.commit`). The key
  and the write commit together or not at all, so one key never has two outcomes.
- A duplicate that arrives while the first is in flight waits (on the key row's unique index,
  inside PostgreSQL) for the first to finish, then gets its answer; if the first failed, the
  duplicate runs the request itself. No 409: the SDK reads a 409 as a version conflict.
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
from datetime import timedelta
from typing import Annotated, Any

from fastapi import Depends, Header, Request, Response
from sqlalchemy import Interval, Row, delete, func, literal, null, select, true, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth import CurrentPrincipal
from app.config import Settings
from app.database import SessionDep, SettingsDep
from app.errors import AppError, BadRequest
from app.idempotency.tables import idempotency_keys as keys

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
    """What a POST route does about its key: ``replay`` is the stored first answer to return
    as it is (the route then does nothing else); otherwise the route writes and ends with
    :meth:`commit`. ``claimed`` is the (user, key) this request owns, None without a key."""

    def __init__(
        self, claimed: tuple[str, str] | None = None, replay: Response | None = None
    ) -> None:
        self.claimed = claimed
        self.replay = replay

    async def commit(self, session: AsyncSession, response: Response) -> Response:
        """Record ``response`` as the key's answer (when a key was claimed) and commit the
        session's transaction: the write and its answer commit together. Returns ``response``."""
        if self.claimed is not None:
            user_id, key = self.claimed
            headers = {n: response.headers[n] for n in REPLAYED_HEADERS if n in response.headers}
            await session.execute(
                update(keys)
                .where(keys.c.user_id == user_id, keys.c.key == key)
                .values(status=response.status_code, headers=headers, body=bytes(response.body))
            )
        await session.commit()
        return response


#: For routes that take no key (PUT): :meth:`Idempotency.commit` only commits.
NO_KEY = Idempotency()


def _expired(ttl: float) -> Any:
    return keys.c.created_at < func.now() - literal(timedelta(seconds=ttl), Interval())


async def _claim(
    session: AsyncSession, user_id: str, key: str, digest: bytes, ttl: float
) -> Row[Any, Any, Any, Any] | None:
    """Insert the key row in the session's (new) transaction; None when this request now owns
    the key, else the row as stored. An expired row is taken over in the same statement. A row
    inserted by a transaction still in flight makes this wait until that one ends."""
    where = (keys.c.user_id == user_id, keys.c.key == key)
    for _ in range(3):  # a row purged between the two statements: claim again
        stmt = insert(keys).values(user_id=user_id, key=key, fingerprint=digest)
        stmt = stmt.on_conflict_do_update(
            index_elements=[keys.c.user_id, keys.c.key],
            set_={
                "fingerprint": stmt.excluded.fingerprint,
                "created_at": func.now(),
                "status": null(),
                "headers": null(),
                "body": null(),
            },
            where=_expired(ttl),
        )
        if (await session.execute(stmt.returning(true()))).first() is not None:
            return None
        stored = (
            await session.execute(
                select(keys.c.fingerprint, keys.c.status, keys.c.headers, keys.c.body).where(*where)
            )
        ).first()
        if stored is not None:
            return stored
    raise AssertionError("an idempotency key row vanished three times in a row")


def _replay(stored: Row[Any, Any, Any, Any]) -> Response:
    # a committed row always holds its answer: it is filled before its transaction commits
    assert stored.status is not None
    assert stored.body is not None
    headers = {**(stored.headers or {}), REPLAYED_HEADER: "true"}
    return Response(stored.body, status_code=stored.status, headers=headers)


class _Purge:
    """Deletes expired keys in the background, at most once per ``interval`` seconds."""

    def __init__(self) -> None:
        self.next_at = 0.0
        self.task: asyncio.Task[int] | None = None

    def maybe_start(self, maker: async_sessionmaker[AsyncSession], settings: Settings) -> None:
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
    session: SessionDep,
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
    """FastAPI dependency of the POST routes: claim the request's key (see the module
    docstring) as the first statement of the request's transaction.

    Raises:
        BadRequest: a malformed key (400).
        KeyReused: the key was used for another request (422).
    """
    if idempotency_key is None or principal.user_id is None:
        return NO_KEY
    key = parse_key(request.headers.getlist(HEADER))
    digest = fingerprint(
        request.method, request.url.path, request.headers.getlist("if-match"), await request.body()
    )
    _purge_of(request).maybe_start(request.app.state.sessionmaker, settings)
    stored = await _claim(session, principal.user_id, key, digest, settings.idempotency_key_ttl)
    if stored is None:
        return Idempotency((principal.user_id, key))
    await session.rollback()  # release the key row at once
    if stored.fingerprint != digest:
        raise KeyReused(
            f"This {HEADER} was used for a different request (method, path, If-Match or body)."
        )
    return Idempotency(replay=_replay(stored))


IdempotencyDep = Annotated[Idempotency, Depends(get_idempotency)]
