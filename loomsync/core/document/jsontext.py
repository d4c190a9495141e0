"""JSON text with every number kept exactly as written (RFC 8259; API.md section 2).

API.md's round-trip guarantee says JSON number values come back unchanged, but Python's ``json``
changes some of them: ``1E2`` and ``1e5`` come back as ``100.0`` and ``100000.0``, ``-0`` as
``0``, ``0.50`` as ``0.5``, a 36-digit decimal is rounded to a float, ``1e400`` overflows to
infinity, and an integer of more than 4,300 digits is refused outright
(``sys.set_int_max_str_digits``).

:func:`loads` returns every number that Python writes back to the same text as the usual
``int`` or ``float`` (nearly all of them, so code that reads numbers sees what it always saw),
and every other one as a :class:`JsonNumber` that holds its text; :func:`dumps` writes a
``JsonNumber`` back verbatim. NaN and Infinity are not JSON and are refused.

Speed: :func:`dumps` first tries the standard library's C encoder, so a value without a
``JsonNumber`` costs what it always did; only a value holding one (or any other
``simplejson.RawJSON`` fragment) is encoded again by simplejson, which writes raw fragments as
they are.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any, NoReturn

import simplejson
from simplejson import RawJSON

#: Longest integer kept as a Python ``int`` (Python's default ``sys.get_int_max_str_digits``);
#: longer ones stay JsonNumber, so no process setting changes what a document decodes to.
MAX_INT_DIGITS = 4300


class JsonNumber(RawJSON):
    """A JSON number whose text Python's ``int``/``float`` would not give back: ``-0``, ``1E2``,
    ``0.50``, ``1e400``, 36-digit decimals, integers of more than :data:`MAX_INT_DIGITS`.

    Equality and hash compare the text: ``JsonNumber("1E2") != JsonNumber("100")``, because two
    documents that differ there are different documents (a sync must not skip the change).
    ``to_decimal()`` gives the exact value, ``float()`` the nearest float (maybe infinite).
    """

    encoded_json: str

    def __init__(self, text: str) -> None:  # RawJSON.__init__ without the super() call (hot)
        self.encoded_json = text

    @property
    def text(self) -> str:
        """The number as written in the JSON text."""
        return self.encoded_json

    def to_decimal(self) -> Decimal:
        """The exact value (any JSON number is a valid ``Decimal`` literal)."""
        return Decimal(self.encoded_json)

    def __float__(self) -> float:
        return float(self.encoded_json)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, JsonNumber):
            return self.encoded_json == other.encoded_json
        return NotImplemented

    def __hash__(self) -> int:
        return hash((JsonNumber, self.encoded_json))

    def __repr__(self) -> str:
        return f"JsonNumber({self.encoded_json!r})"

    def __str__(self) -> str:
        return self.encoded_json


def parse_int(text: str) -> int | JsonNumber:
    """``json.loads`` ``parse_int`` hook: an ``int``, or a JsonNumber for ``-0`` and integers
    longer than :data:`MAX_INT_DIGITS` (JSON integers are otherwise written as ``str(int)``)."""
    if len(text) > MAX_INT_DIGITS or text == "-0":
        return JsonNumber(text)
    try:
        return int(text)
    except ValueError:  # this process set a lower sys.set_int_max_str_digits
        return JsonNumber(text)


def parse_float(text: str) -> float | JsonNumber:
    """``json.loads`` ``parse_float`` hook: a ``float`` when its ``repr`` is the text itself
    (``0.5``, ``1.0``, ``-0.0``), else a JsonNumber (``1E2``, ``0.50``, ``1e400``, long
    decimals)."""
    value = float(text)
    return value if repr(value) == text else JsonNumber(text)


def reject_constant(name: str) -> NoReturn:
    """``json.loads`` ``parse_constant`` hook: NaN, Infinity and -Infinity are not JSON.

    Raises:
        ValueError: always.
    """
    raise ValueError(f"{name} is not valid JSON (RFC 8259 has no NaN or Infinity)")


def loads(data: bytes | str) -> Any:
    """Parse JSON strictly (no NaN/Infinity), keeping every number's text (module docstring).

    Raises:
        ValueError: not valid JSON (``json.JSONDecodeError``, ``UnicodeDecodeError``).
        RecursionError: nesting too deep to parse.
    """
    return json.loads(
        data, parse_int=parse_int, parse_float=parse_float, parse_constant=reject_constant
    )


class _HoldsRawJson(Exception):
    """The standard encoder met a RawJSON fragment: encode again with simplejson."""


def _raw_json_found(obj: Any) -> NoReturn:
    """``default`` for the standard encoder: stop at a RawJSON (simplejson takes over)."""
    if isinstance(obj, RawJSON):
        raise _HoldsRawJson
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] = (",", ":"),
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """JSON text of ``value``, with JsonNumber (and any RawJSON) written verbatim.

    The keyword arguments mean what they mean to ``json.dumps``; NaN and infinite floats are
    refused (``allow_nan=False``).

    Raises:
        ValueError: a NaN or infinite float.
        TypeError: a value JSON cannot hold (and ``default`` did not convert).
        RecursionError: nesting too deep to encode.
    """
    standard, verbatim = _encoders(ensure_ascii, indent, separators, sort_keys, default)
    try:
        return standard.encode(value)
    except _HoldsRawJson:
        return verbatim.encode(value)


@functools.lru_cache(maxsize=32)
def _encoders(
    ensure_ascii: bool,
    indent: int | None,
    separators: tuple[str, str],
    sort_keys: bool,
    default: Callable[[Any], Any] | None,
) -> tuple[json.JSONEncoder, simplejson.JSONEncoder]:
    """One pair of encoders per set of options (``json.dumps`` would build one per call;
    encoders keep no state between calls): the standard one, which raises _HoldsRawJson at the
    first RawJSON, and the simplejson one, which writes RawJSON verbatim and is otherwise the
    same."""
    if default is None:
        fast_default = _raw_json_found
    else:

        def fast_default(obj: Any) -> Any:
            return _raw_json_found(obj) if isinstance(obj, RawJSON) else default(obj)

    options: dict[str, Any] = {
        "ensure_ascii": ensure_ascii,
        "indent": indent,
        "separators": separators,
        "sort_keys": sort_keys,
        "allow_nan": False,
    }
    standard = json.JSONEncoder(**options, default=fast_default)
    verbatim = simplejson.JSONEncoder(
        **options,
        default=default,
        use_decimal=False,
        namedtuple_as_object=False,
        tuple_as_array=True,
        for_json=False,
    )
    return standard, verbatim


__all__ = [
    "MAX_INT_DIGITS",
    "JsonNumber",
    "dumps",
    "loads",
    "parse_float",
    "parse_int",
    "reject_constant",
]
