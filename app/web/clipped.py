"""A message's digest: what a thread page needs of a large message, cut in SQL so a page never
reads or decodes a whole 5 MB body to show 9 KB of it (issue 13, review finding G1).

A message whose JSON text is at most :data:`WHOLE_BYTES` is read whole. A larger one is read
as :func:`digest_sql` builds it: only the fields the renderer reads (``role``, ``content``,
``created_at``, ``tool_name``, ``tool_calls[*].tool_name``, ``tool_calls[*].arguments_json``
and its top-level values), each value longer than :data:`CLIP_CHARS` characters of JSON text
replaced by ``{MARK: <its first CLIP_CHARS characters of JSON text>, BYTES: <its JSON size>}``.
:func:`restore` turns those back into :class:`Clipped` strings: the decoded prefix, carrying
the whole value's size in :attr:`Clipped.full_bytes` (for a string, its JSON size less the
escapes at the rate of its prefix, :func:`decoded_size`: exact for text without escapes).

A prefix of :data:`CLIP_CHARS` JSON characters decodes to at least ``CLIP_CHARS // 6``
characters (``\\u0000`` is the longest escape), more than any preview shows
(app/web/render/messages.py), so a clipped value is always shown as an incomplete preview
with "show all", which reads the message whole.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, literal_column

from loomsync import jsontext

#: Messages up to this many bytes of JSON text are read whole.
WHOLE_BYTES = 64 * 1024
#: A value of a large message keeps this many characters of its JSON text.
CLIP_CHARS = 6 * 6_000 + 64
#: The keys of a clipped value's placeholder (only a placeholder has exactly these two).
MARK, BYTES = "~loomsync.clip", "~loomsync.bytes"


class Clipped(str):
    """The start of a longer string; :attr:`full_bytes` is the size of all of it."""

    full_bytes: int

    def __new__(cls, text: str, full_bytes: int) -> Clipped:
        """``text`` (the prefix), remembering ``full_bytes``."""
        made = super().__new__(cls, text)
        made.full_bytes = full_bytes
        return made


def _clip(value: str) -> str:
    """SQL: the json ``value`` itself when short, else its placeholder."""
    value = f"({value})"
    return (
        f"CASE WHEN {value} IS NULL THEN NULL "
        f"WHEN length({value}::text) <= {CLIP_CHARS} THEN {value} "
        f"ELSE jsonb_build_object('{MARK}', left({value}::text, {CLIP_CHARS}), "
        f"'{BYTES}', octet_length({value}::text)) END"
    )


def _calls_sql(body: str) -> str:
    arguments = "c->'arguments_json'"
    name = _clip("c->'tool_name'")
    each_argument = (
        f"(SELECT jsonb_object_agg(k, {_clip('v')}) FROM jsonb_each({arguments}) AS e(k, v))"
    )
    call = (
        f"CASE WHEN jsonb_typeof(c) = 'object' THEN jsonb_build_object("
        f"'tool_name', {name}, "
        f"'arguments_json', CASE WHEN jsonb_typeof({arguments}) = 'object' "
        f"THEN {each_argument} ELSE {_clip(arguments)} END) "
        f"ELSE {_clip('c')} END"
    )
    calls = f"{body}->'tool_calls'"
    return (
        f"CASE WHEN jsonb_typeof({calls}) = 'array' "
        f"THEN (SELECT jsonb_agg({call}) FROM jsonb_array_elements({calls}) AS a(c)) "
        f"ELSE {_clip(calls)} END"
    )


def digest_sql(body: str) -> ColumnElement[Any]:
    """SQL text of the digest of ``body``, a jsonb expression (see the module's docstring; the
    caller casts the json column to jsonb once, so the body is parsed once, not per field)."""
    fields = ", ".join(
        f"'{name}', " + _clip(f"{body}->'{name}'")
        for name in ("role", "content", "created_at", "tool_name")
    )
    return literal_column(f"jsonb_build_object({fields}, 'tool_calls', {_calls_sql(body)})::text")


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
        if set(value) == {MARK, BYTES} and isinstance(value[MARK], str):
            text, size = value[MARK], value[BYTES]
            size = size if isinstance(size, int) else len(text)
            if text.startswith('"'):
                decoded = partial_string(text)
                return Clipped(decoded, decoded_size(decoded, text[1:], size - 2))
            return Clipped(text, size)
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
