"""Wait, a bounded time, for a database that is still starting (``loomsync-server migrate
--wait``).

Under Docker Compose (or Kubernetes) ``migrate`` may start while PostgreSQL is not yet accepting
TCP connections: the container's name does not resolve yet, the port is refused, or the server
answers "the database system is starting up" (SQLSTATE 57P03). The official image even runs a
socket-only first initialisation before its real start (docker-library/postgres#880). Those are
retried with a growing pause until a deadline; anything else (a wrong password, a database that
does not exist, a bad URL) fails at once, since waiting would not fix it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from app.config import Settings
from app.database import make_engine
from app.errors import _is_database_outage

#: The first pause between two attempts, in seconds; it doubles up to :data:`MAX_PAUSE`.
FIRST_PAUSE = 0.5
MAX_PAUSE = 5.0


class DatabaseNotReady(Exception):
    """The database did not accept a connection within the wait; ``str()`` says for how long
    and the last error (never the URL's password)."""


def is_transient(exc: BaseException) -> bool:
    """True for the errors of a database that is not up yet: ``OSError`` (refused, unreachable,
    a name that does not resolve yet, a connect timeout) and SQLAlchemy's wrapping of a
    connection failure or of SQLSTATE class 08 / 57P03 "cannot connect now"."""
    if isinstance(exc, OSError):
        return True
    return isinstance(exc, DBAPIError) and _is_database_outage(exc)


def _describe(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return f"{type(orig or exc).__name__}: {orig or exc}".strip()


async def wait_for_database(
    url: str,
    settings: Settings,
    seconds: float,
    report: Callable[[str], None],
) -> float:
    """Connect to ``url`` and run ``SELECT 1``, retrying transient failures (:func:`is_transient`)
    for up to ``seconds`` seconds with pauses of 0.5 s doubling to 5 s. ``report`` gets one line
    per failed attempt. Returns the seconds waited (0.0 when the first attempt worked).

    Raises:
        DatabaseNotReady: still failing when the wait is over (``seconds`` 0: one attempt).
        sqlalchemy.exc.DBAPIError: a failure that waiting does not fix (authentication, a
            missing database), at once.
    """
    start = time.monotonic()
    deadline = start + seconds
    pause = FIRST_PAUSE
    while True:
        engine = make_engine(url, settings)
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
            return time.monotonic() - start
        except Exception as exc:
            if not is_transient(exc):
                raise
            left = deadline - time.monotonic()
            if left <= 0:
                raise DatabaseNotReady(
                    f"the database did not accept a connection within {seconds:g} s"
                    f" (last error: {_describe(exc)})"
                ) from None
            pause = min(pause, left)
            report(f"the database is not ready ({_describe(exc)}); retrying in {pause:.1f} s")
        finally:
            await engine.dispose()
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_PAUSE)
