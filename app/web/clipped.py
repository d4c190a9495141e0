"""A message's digest: what a thread page needs of a large message, cut in SQL so a page never
reads or decodes a whole 5 MB body to show 9 KB of it (issue 13, review finding G1).

A message whose JSON text is at most :data:`WHOLE_BYTES` is read whole. A larger one is read
as :func:`digest_sql` builds it from the body cast to jsonb once: only the fields the renderer
reads (``role``, ``content``, ``created_at``, ``tool_name``, ``tool_calls[*].tool_name``,
``tool_calls[*].arguments_json`` and its top-level values), a string longer than
:data:`STRING_CHARS` replaced by ``{TEXT: <its first STRING_CHARS characters>, BYTES: <its
UTF-8 size>}`` and any other value over :data:`CLIP_CHARS` bytes by ``{MARK: <the start of its
JSON text>, BYTES: <its JSON size>}``. :func:`restore` turns those into :class:`Clipped`
strings carrying the whole value's size in :attr:`Clipped.full_bytes`.

Both limits exceed what any preview shows (app/web/render/messages.py: 6,000 characters), so
a clipped value is always shown as an incomplete preview with "show all", which reads the
message whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, literal_column

from loomsync.core.document import jsontext

#: Messages up to this many bytes of JSON text are read whole.
WHOLE_BYTES = 64 * 1024
#: A string of a large message keeps this many characters (more than any preview shows).
STRING_CHARS = 8_000
#: Any other value of a large message keeps this many characters of its JSON text.
CLIP_CHARS = 6 * 6_000 + 64
#: The keys of a clipped value's placeholder (only a placeholder has exactly these two): a
#: string's first characters (TEXT) or another value's JSON text's (MARK), and its whole size.
TEXT, MARK, BYTES = "~loomsync.text", "~loomsync.clip", "~loomsync.bytes"


class Clipped(str):
    """The start of a longer string; :attr:`full_bytes` is the size of all of it."""

    full_bytes: int

    def __new__(cls, text: str, full_bytes: int) -> Clipped:
        """``text`` (the prefix), remembering ``full_bytes``."""
        made = super().__new__(cls, text)
        made.full_bytes = full_bytes
        return made


def _clip(value: str) -> str:
    """SQL: the jsonb ``value`` itself when short, else its placeholder. A string is measured
    and cut as text (``#>> '{}'``: no serialisation), anything else as its JSON text."""
    text = f"({value} #>> '{{}}')"
    return (
        f"CASE WHEN {value} IS NULL THEN NULL "
        f"WHEN jsonb_typeof({value}) = 'string' THEN CASE "
        f"WHEN length({text}) <= {STRING_CHARS} THEN {value} "
        f"ELSE jsonb_build_object('{TEXT}', left({text}, {STRING_CHARS}), "
        f"'{BYTES}', octet_length({text})) END "
        f"WHEN pg_column_size({value}) <= {CLIP_CHARS} THEN {value} "
        f"ELSE jsonb_build_object('{MARK}', left({value}::text, {CLIP_CHARS}), "
        f"'{BYTES}', octet_length({value}::text)) END"
    )


def _fields(
    obj: str, names: tuple[str, ...], value_of: Callable[[str, str], str], alias: str
) -> str:
    """SQL: the jsonb object ``obj`` with only the keys ``names``, each value as
    ``value_of(value, key)`` gives it. One pass of ``jsonb_each``: extracting a key of a large
    jsonb with ``->`` copies the whole of it each time."""
    keys = ", ".join(f"'{name}'" for name in names)
    value = value_of(f"{alias}.value", f"{alias}.key")
    return (
        f"COALESCE((SELECT jsonb_object_agg({alias}.key, {value}) FROM jsonb_each({obj}) AS "
        f"{alias} WHERE {alias}.key IN ({keys})), '{{}}'::jsonb)"
    )


def _arguments_sql(value: str) -> str:
    each = f"(SELECT jsonb_object_agg(g.key, {_clip('g.value')}) FROM jsonb_each({value}) AS g)"
    return f"CASE WHEN jsonb_typeof({value}) = 'object' THEN {each} ELSE {_clip(value)} END"


def _calls_sql(value: str) -> str:
    """SQL: ``tool_calls``, each call with its name and its arguments' values clipped."""

    def value_of(value: str, key: str) -> str:
        return (
            f"CASE WHEN {key} = 'arguments_json' THEN {_arguments_sql(value)} "
            f"ELSE {_clip(value)} END"
        )

    inner = _fields("c", ("tool_name", "arguments_json"), value_of, "f")
    call = f"CASE WHEN jsonb_typeof(c) = 'object' THEN {inner} ELSE {_clip('c')} END"
    return (
        f"CASE WHEN jsonb_typeof({value}) = 'array' "
        f"THEN (SELECT jsonb_agg({call}) FROM jsonb_array_elements({value}) AS a(c)) "
        f"ELSE {_clip(value)} END"
    )


def digest_sql(body: str) -> ColumnElement[Any]:
    """SQL text of the digest of ``body``, a jsonb expression, but its ``tool_calls`` (see the
    module's docstring; the caller casts the json column to jsonb once, so the body is parsed
    once, not per field)."""
    names = ("role", "content", "created_at", "tool_name")
    return literal_column(f"({_fields(body, names, lambda value, _key: _clip(value), 'e')})::text")


def calls_sql(calls: str) -> ColumnElement[Any]:
    """SQL text of the digest of ``calls``, the jsonb ``tool_calls`` of a large message. A
    query of its own over the extracted value: in one statement with the rest, PostgreSQL
    (16) spent 4x the time of the whole digest on these nested subqueries even where a message
    has no calls (measured on 5 MB bodies)."""
    return literal_column(f"({_calls_sql(calls)})::text")


def partial_string(json_prefix: str) -> str:
    """The characters of a JSON string literal cut anywhere (``"abc\\u00`` gives ``abc``)."""
    for drop in range(7):
        candidate = json_prefix[: len(json_prefix) - drop] if drop else json_prefix
        try:
            value = jsontext.loads(candidate + '"')
        except (ValueError, RecursionError):
            continue
        if isinstance(value, str):
            return value
    return json_prefix


def decoded_size(decoded: str, encoded: str, encoded_bytes: int) -> int:
    """The size of a whole decoded string estimated from its encoded size ``encoded_bytes`` and
    a prefix: ``decoded`` is what ``encoded`` (that prefix of the encoding) decodes to; the
    whole is assumed to escape as its prefix does (exact for text without escapes)."""
    raw = len(encoded.encode("utf-8", "surrogatepass"))
    if raw == 0:
        return max(0, encoded_bytes)
    ratio = len(decoded.encode("utf-8", "surrogatepass")) / raw
    return max(0, round(encoded_bytes * min(1.0, ratio)))


def restore(value: Any) -> Any:
    """``value`` (a decoded digest) with each placeholder as a :class:`Clipped` string: a
    string's decoded prefix, or the JSON text's prefix of any other value."""
    if isinstance(value, dict):
        for key in (TEXT, MARK):
            if set(value) == {key, BYTES} and isinstance(value[key], str):
                size = value[BYTES]
                return Clipped(value[key], size if isinstance(size, int) else len(value[key]))
        return {key: restore(item) for key, item in value.items()}
    if isinstance(value, list):
        return [restore(item) for item in value]
    return value


def json_size(value: Any, dumped: str) -> int:
    """The UTF-8 size of the whole of ``value`` as JSON, given ``dumped`` (its JSON text, with
    each :class:`Clipped` string in it as its prefix)."""
    size = len(dumped.encode("utf-8", "surrogatepass"))
    for leaf in _clipped_leaves(value):
        size += leaf.full_bytes - len(leaf.encode("utf-8", "surrogatepass"))
    return size


def _clipped_leaves(value: Any) -> list[Clipped]:
    if isinstance(value, Clipped):
        return [value]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _clipped_leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _clipped_leaves(item)]
    return []
