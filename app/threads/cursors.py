"""Opaque keyset-pagination cursors, signed (API.md section 6: "Cursors are opaque").

A cursor is ``base64url(tag || payload)`` without padding, where ``payload`` is the JSON list of
the last row's sort key (finite floats, RFC 3339 UTC timestamps, canonical UUIDs) and ``tag`` the
first 16 bytes of HMAC-SHA256(key, purpose NUL [SHA-256(bound) NUL] payload). ``purpose`` names the
listing (``threads``, ``search``, ``audit``), so a cursor of one listing is refused by another;
``bound`` is the request parameters a cursor is valid for (a search's query and filters; empty
for the other listings), so a search cursor is refused for another query (issue 14 review).

Cursors are client input (issue 11, item 1): :meth:`CursorCodec.decode` checks the tag before
it parses anything, then validates every slot anyway; every failure, whatever the bytes, is
the same 400 ``invalid_request``. The key is :func:`cursor_key`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import math
import os
import re
import secrets
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from fastapi import Depends, Query, Request

from app.config import Settings
from app.errors import BadRequest
from app.times import rfc3339
from loomsync.core.document.model import to_utc

log = logging.getLogger(__name__)

#: The longest cursor accepted; the longest issued (a search cursor) is about 150 characters.
MAX_CURSOR_CHARS = 512
TAG_BYTES = 16
NOT_ISSUED = "The cursor is not one this server issued."
_KEY_LABEL = b"loomsync cursor key v1"
_BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
_KEY_FILE = "cursor_secret"

Slot = float | datetime | uuid.UUID
#: The listings that issue cursors; a cursor is accepted only by the listing that issued it.
Purpose = Literal["threads", "search", "audit", "share_links", "provenance"]
R = TypeVar("R")


def _derive(secret: str | bytes) -> bytes:
    """A key of its own from a secret (HMAC-SHA256 keyed by the secret over a fixed label), so
    that a cursor tag can never serve as a signature of anything else made with that secret,
    such as a token."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(raw, _KEY_LABEL, hashlib.sha256).digest()


def _key_file(data_dir: Path) -> bytes:
    """The random key in ``data_dir/cursor_secret`` (mode 0600), created on first use.

    Created as a temporary file linked into place, so workers starting together all read the
    one that won. Raises OSError when the folder cannot be written."""
    path = data_dir / _KEY_FILE
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        tmp = data_dir / f".{_KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_urlsafe(48))
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            tmp.unlink(missing_ok=True)
    text = path.read_text().strip()
    if not text:
        raise OSError(f"{path} is empty")
    return text.encode()


def cursor_key(settings: Settings) -> bytes:
    """The HMAC key for cursors, from the first source configured:

    1. ``LOOMSYNC_CURSOR_SECRET``;
    2. ``LOOMSYNC_JWT_SECRET`` (HS* tokens, and the embedded server's generated secret);
    3. a random secret kept in ``LOOMSYNC_DATA_DIR/cursor_secret``, shared by the workers and
       restarts of one host (RS*/ES*-only configurations; a warning says to set
       ``LOOMSYNC_CURSOR_SECRET`` when several hosts serve one database);
    4. when that folder cannot be written, a random key of this process (a warning says so).

    Each is derived (:func:`_derive`), never used as is. A key that changes (a new secret, a
    different host) only makes the cursors issued before refused with 400.
    """
    if settings.cursor_secret is not None:
        return _derive(settings.cursor_secret.get_secret_value())
    if settings.jwt_secret is not None:
        return _derive(settings.jwt_secret.get_secret_value())
    try:
        key = _key_file(settings.data_dir)
    except OSError as exc:
        log.warning(
            "cursors are signed with a key of this process only (cannot keep one in %s: %s);"
            " set LOOMSYNC_CURSOR_SECRET so that every worker and restart accepts them",
            settings.data_dir,
            exc,
        )
        return _derive(secrets.token_bytes(32))
    log.warning(
        "cursors are signed with the key in %s; set LOOMSYNC_CURSOR_SECRET when more than one"
        " host serves this database",
        settings.data_dir / _KEY_FILE,
    )
    return _derive(key)


class CursorCodec:
    """Makes and reads the cursors of this server (one per app, ``app.state.cursors``).

    The key is found on first use (:func:`cursor_key`), so an app that never pages writes no
    key file.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._key: bytes | None = None

    @property
    def key(self) -> bytes:
        """The HMAC key (see :func:`cursor_key`)."""
        if self._key is None:
            self._key = cursor_key(self._settings)
        return self._key

    def _tag(self, purpose: Purpose, payload: bytes, bound: bytes) -> bytes:
        # An issued payload starts with "[", so an unbound message never equals a bound one.
        binding = hashlib.sha256(bound).digest() + b"\x00" if bound else b""
        message = purpose.encode() + b"\x00" + binding + payload
        return hmac.new(self.key, message, hashlib.sha256).digest()[:TAG_BYTES]

    def encode(self, purpose: Purpose, *key: Slot, bound: bytes = b"") -> str:
        """The cursor for a sort key (floats, aware timestamps, UUIDs) of listing ``purpose``,
        valid only for the request parameters ``bound`` (their canonical bytes, e.g. a search's
        query and filters): they are signed, not carried, so :meth:`decode` refuses the cursor
        for any other parameters without the cursor saying what they were.

        Timestamps are written as RFC 3339 UTC (:func:`app.times.rfc3339`), so every value the
        database holds, ``0001-01-01T00:00:00Z`` and ``9999-12-31T23:59:59.999999Z`` included,
        is written and read back exactly.
        """
        values = [
            rfc3339(v) if isinstance(v, datetime) else str(v) if isinstance(v, uuid.UUID) else v
            for v in key
        ]
        payload = json.dumps(values, separators=(",", ":"), allow_nan=False).encode()
        token = base64.urlsafe_b64encode(self._tag(purpose, payload, bound) + payload)
        return token.decode().rstrip("=")

    def page(
        self, purpose: Purpose, rows: Sequence[R], limit: int, key: Callable[[R], tuple[Slot, ...]]
    ) -> tuple[Sequence[R], str | None]:
        """Split the ``limit`` + 1 rows a keyset query fetched into (the page, its
        ``next_cursor``): the cursor of the page's last row's ``key`` when a further row exists,
        else None."""
        page = rows[:limit]
        more = len(rows) > limit and bool(page)
        return page, self.encode(purpose, *key(page[-1])) if more else None

    def decode(
        self, purpose: Purpose, cursor: str, *types: type, bound: bytes = b""
    ) -> tuple[Any, ...]:
        """Read a cursor made by :meth:`encode` for ``purpose`` and the same ``bound``, into
        values of ``types`` (``float``, ``datetime``, ``uuid.UUID``): finite floats, aware UTC
        datetimes, UUIDs.

        Raises:
            BadRequest: 400 ``invalid_request`` for anything else: too long, not base64url, a
                tag that does not match (tampered, another listing's, another key's, issued for
                other ``bound`` parameters), or a payload of the wrong shape or types.
        """
        if len(cursor) > MAX_CURSOR_CHARS or not _BASE64URL.fullmatch(cursor):
            raise BadRequest(NOT_ISSUED)
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        except (binascii.Error, ValueError):
            raise BadRequest(NOT_ISSUED) from None
        if base64.urlsafe_b64encode(raw).rstrip(b"=") != cursor.encode():
            # a last character whose unused low bits are set decodes to the same bytes: an
            # issued cursor changed in its last character, which the server did not issue
            raise BadRequest(NOT_ISSUED)
        tag, payload = raw[:TAG_BYTES], raw[TAG_BYTES:]
        if not hmac.compare_digest(tag, self._tag(purpose, payload, bound)):
            raise BadRequest(NOT_ISSUED)
        try:
            return _parse(payload, types)
        except (ValueError, TypeError, OverflowError, RecursionError, UnicodeDecodeError):
            raise BadRequest(NOT_ISSUED) from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a cursor value")


def _parse(payload: bytes, types: tuple[type, ...]) -> tuple[Any, ...]:
    """The sort key in ``payload``, each slot checked against its type.

    Raises:
        ValueError, TypeError, OverflowError, RecursionError, UnicodeDecodeError: not a key.
    """
    values = json.loads(payload.decode("utf-8"), parse_constant=_reject_constant)
    if not isinstance(values, list) or len(values) != len(types):
        raise ValueError("wrong shape")
    return tuple(_slot(kind, value) for kind, value in zip(types, values, strict=True))


def _slot(kind: type, value: Any) -> Slot:
    if kind is float:
        if type(value) is not float or not math.isfinite(value):
            raise ValueError("not a finite float")
        return value
    if not isinstance(value, str):
        raise TypeError("not a string")
    if kind is datetime:
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            raise ValueError("naive timestamp")
        return to_utc(parsed)  # OverflowError past year 1 or 9999 in UTC
    if kind is uuid.UUID:
        parsed_id = uuid.UUID(value)
        if str(parsed_id) != value:
            raise ValueError("not a canonical UUID")
        return parsed_id
    raise TypeError(f"no cursor slot of type {kind.__name__}")


async def get_cursors(request: Request) -> CursorCodec:
    """FastAPI dependency: the app's :class:`CursorCodec`."""
    codec: CursorCodec = request.app.state.cursors
    return codec


CursorsDep = Annotated[CursorCodec, Depends(get_cursors)]
#: The ``cursor`` query parameter of a keyset listing. No length limit here: a value too long
#: to be one this server issued is a 400 like any other (:meth:`CursorCodec.decode`).
CursorParam = Annotated[
    str | None,
    Query(
        description="Opaque, from next_cursor (absent or empty: the first page); any other value is 400"
    ),
]
