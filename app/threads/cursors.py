"""Opaque keyset-pagination cursors: base64url of a JSON list of the last row's sort key."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from datetime import datetime
from typing import Any

from app.errors import BadRequest


def encode(*key: float | datetime | uuid.UUID) -> str:
    """Encode a sort key (floats, timestamps, UUIDs) as an opaque cursor."""
    values: list[Any] = [
        v.isoformat() if isinstance(v, datetime) else str(v) if isinstance(v, uuid.UUID) else v
        for v in key
    ]
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def decode(cursor: str, *types: type) -> tuple[Any, ...]:
    """Decode a cursor made by :func:`encode` into values of ``types`` (float, datetime, UUID).

    Raises:
        BadRequest: the cursor was not made by this server for this kind of listing.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if not isinstance(values, list) or len(values) != len(types):
            raise ValueError("wrong shape")
        out: list[Any] = []
        for kind, value in zip(types, values, strict=True):
            if kind is datetime:
                parsed = datetime.fromisoformat(value)
                if parsed.tzinfo is None:
                    raise ValueError("naive timestamp")
                out.append(parsed)
            elif kind is uuid.UUID:
                out.append(uuid.UUID(value))
            elif kind is float and isinstance(value, int | float) and not isinstance(value, bool):
                out.append(float(value))
            else:
                raise ValueError("wrong type")
        return tuple(out)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError) as exc:
        raise BadRequest("The cursor is not one this server issued.") from exc
