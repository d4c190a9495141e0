"""``timestamptz`` values between PostgreSQL and Python, for every server connection.

asyncpg's own codec writes the two ends of Python's range, ``0001-01-01T00:00:00Z`` and
``9999-12-31T23:59:59.999999Z`` (``datetime.min``/``max`` in UTC), as PostgreSQL ``-infinity``
and ``infinity``, but reads those back as *naive* ``datetime.min``/``max``: a timezone-less value
that no longer compares with the aware ones, so a keyset cursor made from it was refused and
every thread after it was out of reach (issue 11, item 2).

This codec keeps asyncpg's stored form (``±infinity`` stand for exactly those two instants, so
rows written before it read the same and sort the same: no migration) and reads every value
back as an aware UTC ``datetime``. Keyset comparisons stay exact: nothing Python can write lies
beyond those two instants, so ``-infinity < every stored value < infinity`` is the order of the
instants they stand for, and a cursor holding one is encoded to the same ``±infinity``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

#: PostgreSQL's binary ``timestamptz``: int64 microseconds since 2000-01-01 UTC, with the two
#: extreme int64 values meaning ``infinity`` and ``-infinity``.
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
PG_INFINITY = 2**63 - 1
PG_NEGATIVE_INFINITY = -(2**63)
_MICROSECOND = timedelta(microseconds=1)
UTC_MIN = datetime.min.replace(tzinfo=UTC)
UTC_MAX = datetime.max.replace(tzinfo=UTC)
_MIN_MICROS = (UTC_MIN - PG_EPOCH) // _MICROSECOND
_MAX_MICROS = (UTC_MAX - PG_EPOCH) // _MICROSECOND


def encode_timestamptz(value: datetime) -> tuple[int]:
    """asyncpg ``tuple`` encoder: ``value`` as ``(microseconds since 2000-01-01 UTC,)``.

    A naive ``value`` is taken to be UTC (API.md section 2's rule for input without an offset).
    The first and last instants Python can hold are written as ``-infinity`` / ``infinity``, as
    asyncpg always wrote them.

    Raises:
        TypeError: ``value`` is not a ``datetime`` (asyncpg reports it as a ``DataError``).
    """
    if not isinstance(value, datetime):
        raise TypeError(f"a timestamptz parameter must be a datetime, not {type(value).__name__}")
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    micros = (aware - PG_EPOCH) // _MICROSECOND
    if micros <= _MIN_MICROS:
        return (PG_NEGATIVE_INFINITY,)
    if micros >= _MAX_MICROS:
        return (PG_INFINITY,)
    return (micros,)


def decode_timestamptz(value: tuple[int]) -> datetime:
    """asyncpg ``tuple`` decoder: an aware UTC ``datetime``, ``±infinity`` as the last and first
    instants Python holds. A finite value beyond them (only plain SQL can store one) is read as
    the nearest of the two instead of failing the whole read."""
    (micros,) = value
    if micros <= _MIN_MICROS:
        return UTC_MIN
    if micros >= _MAX_MICROS:
        return UTC_MAX
    return PG_EPOCH + micros * _MICROSECOND


async def register(connection: Any) -> None:
    """Install the codec on one asyncpg connection (no round trip: ``timestamptz`` is built in)."""
    await connection.set_type_codec(
        "timestamptz",
        schema="pg_catalog",
        encoder=encode_timestamptz,
        decoder=decode_timestamptz,
        format="tuple",
    )


def on_connect(dbapi_connection: Any, _record: Any) -> None:
    """SQLAlchemy ``connect`` event hook: :func:`register` on each new pooled connection."""
    dbapi_connection.run_async(register)
