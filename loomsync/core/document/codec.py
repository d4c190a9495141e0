"""Thread documents to and from JSON bytes, exactly (API.md section 2).

Content may hold NUL characters and lone surrogates. ``json.dumps(ensure_ascii=False)`` keeps
other text readable but cannot encode a lone surrogate as UTF-8, so those (and only those) are
written as ``\\uXXXX`` escapes. Numbers are parsed strictly (no NaN or Infinity) and keep their
text: ``1E2``, ``-0`` or a 5,000-digit integer come back as written (:mod:`loomsync.core.document.jsontext`).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from loomsync.core.document import jsontext
from loomsync.core.document.model import Thread, format_utc

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return format_utc(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(value: Any, *, pretty: bool = False, sort_keys: bool = False) -> bytes:
    """Encode a JSON-able value (datetimes allowed) as UTF-8 JSON bytes.

    ``pretty`` indents by 2 spaces and ends with a newline. Lone surrogates become ``\\uXXXX``;
    numbers read by :func:`loads` are written as they were read.

    Raises:
        ValueError: NaN/Infinity or a value JSON cannot hold.
    """
    text = jsontext.dumps(
        value,
        indent=2 if pretty else None,
        separators=(",", ": ") if pretty else (",", ":"),
        sort_keys=sort_keys,
        default=_default,
    )
    text = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return (text + "\n").encode() if pretty else text.encode()


def loads(data: bytes | str) -> Any:
    """Parse JSON strictly (no NaN/Infinity), every number kept as written
    (:func:`loomsync.core.document.jsontext.loads`).

    Raises:
        ValueError: not valid JSON (``json.JSONDecodeError`` and ``UnicodeDecodeError`` included).
    """
    return jsontext.loads(data)


def document(thread: Thread) -> dict[str, Any]:
    """The thread as a JSON-able dict holding the fields that were set (unknown ones included).

    Timestamps stay ``datetime`` objects; :func:`dumps` formats them as RFC 3339 UTC ``Z``.
    """
    return thread.model_dump(mode="python", exclude_unset=True, by_alias=True)


def normalized(thread: Thread) -> dict[str, Any]:
    """Every field, defaults included, in JSON form: two equal documents give equal values."""
    value: dict[str, Any] = loads(dumps(thread.model_dump(mode="python", by_alias=True)))
    return value


def encode_thread(thread: Thread, *, pretty: bool = True) -> bytes:
    """The thread as JSON bytes (pretty by default, as thread files are written)."""
    return dumps(document(thread), pretty=pretty)


def decode_thread(data: bytes | str | dict[str, Any]) -> Thread:
    """Parse and validate a thread document.

    Raises:
        ValueError: not JSON, not an object, or not a valid thread (message says why, one line).
    """
    try:
        raw = loads(data) if isinstance(data, bytes | str) else data
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"not valid JSON ({str(exc)[:120]})") from None
    if not isinstance(raw, dict):
        raise ValueError("the document is not a JSON object")
    try:
        return Thread.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        loc = ".".join(str(part) for part in first["loc"]) or "document"
        raise ValueError(f"{loc}: {first['msg']} ({exc.error_count()} error(s))") from None


def digest(value: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of ``value`` (sorted keys, compact)."""
    return hashlib.sha256(dumps(value, sort_keys=True)).hexdigest()


__all__ = [
    "decode_thread",
    "digest",
    "document",
    "dumps",
    "encode_thread",
    "loads",
    "normalized",
]
