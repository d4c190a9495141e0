"""The exit codes of the ``loomsync`` command: the one table (issue 16, item 2; docs/client.md
"Exit codes"), and the one place that picks a code for an error or a sync.

====  =============  ==============================================================
code  name           meaning
====  =============  ==============================================================
0     OK             done; also "saved here, sent when the server is reachable" (a
                     local-first tool did its job offline, and says so)
1     FAILED         the effect did not happen: the server refused it (403, 409,
                     410, 413, 422...), a sync entry failed, no such thread or file,
                     a file that cannot be read or written or is not of its kind
                     (``show FILE`` of an agent's session), credentials found (scan),
                     a question answered no, no service manager (``service``)
2     USAGE          a usage mistake: a missing argument, an unknown option or
                     import format, a value outside what the option takes (``--from``,
                     ``--to``, ``--up-to`` past the thread; an id that is not one),
                     options that do not go together (typer's usage errors)
3     LOGIN          not logged in, or the server refused the token (401: expired,
                     revoked, not valid): run ``loomsync login``
4     UNREACHABLE    the server could not be reached or is having trouble (network,
                     408, 429, 5xx) and the command needed it now; try again later
====  =============  ==============================================================

A command that did several things exits with the most pressing code: LOGIN before FAILED
before UNREACHABLE (a refused token stops everything; a failure needs a person; an outage
passes by itself).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import TYPE_CHECKING

from loomsync.errors import (
    BadArgumentError,
    NetworkError,
    NotLoggedInError,
    ServerError,
    TokenRefusedError,
)

if TYPE_CHECKING:  # types only: every command imports this module
    from loomsync.store.summary import SyncOutcome
    from loomsync.sync.counts import QueueCounts


class ExitCode(IntEnum):
    """The codes of the module docstring's table."""

    OK = 0
    FAILED = 1
    USAGE = 2
    LOGIN = 3
    UNREACHABLE = 4


_PRESSING = (ExitCode.LOGIN, ExitCode.FAILED, ExitCode.UNREACHABLE)


def worst(codes: Iterable[ExitCode]) -> ExitCode:
    """The most pressing of ``codes`` (LOGIN, then FAILED, then UNREACHABLE; OK when none)."""
    given = set(codes)
    return next((code for code in _PRESSING if code in given), ExitCode.OK)


def for_error(exc: BaseException) -> ExitCode:
    """The code for an error a command let through (:func:`loomsync.cli.main.main`):
    LOGIN for :class:`NotLoggedInError` and :class:`TokenRefusedError`, UNREACHABLE for
    :class:`NetworkError` and :class:`ServerError`, USAGE for :class:`BadArgumentError`
    (``show e47``, ``show ID --from 99``, ``list --cursor nope``: a usage mistake, as typer's),
    else FAILED."""
    if isinstance(exc, BadArgumentError):
        return ExitCode.USAGE
    if isinstance(exc, NotLoggedInError | TokenRefusedError):
        return ExitCode.LOGIN
    if isinstance(exc, NetworkError | ServerError):
        return ExitCode.UNREACHABLE
    return ExitCode.FAILED


def for_outcome(outcome: SyncOutcome) -> ExitCode:
    """The code for one thread's sync outcome: LOGIN for ``token_refused``, FAILED for
    ``failed`` and ``gone``, OK otherwise (``pending`` included: saved here, sent later)."""
    if outcome.status == "token_refused":
        return ExitCode.LOGIN
    if outcome.status in ("failed", "gone"):
        return ExitCode.FAILED
    return ExitCode.OK


def for_sync(outcomes: Iterable[SyncOutcome], counts: QueueCounts) -> ExitCode:
    """The code of ``loomsync sync`` (and of an import's sync): LOGIN when the server refused
    the token, FAILED while the queue holds a failed entry, UNREACHABLE while entries are
    still pending because the server could not be reached or had trouble (an outcome of the
    run says ``unreachable``), FAILED ("not done") while entries are pending for another
    reason with the server up (issue 27, item 10: never 4 with the server answering), else
    OK. A fork sent with its source is done: OK."""
    done = list(outcomes)
    codes = [for_outcome(outcome) for outcome in done]
    if counts.failed:
        codes.append(ExitCode.FAILED)
    if counts.pending:
        away = any(outcome.unreachable for outcome in done)
        codes.append(ExitCode.UNREACHABLE if away else ExitCode.FAILED)
    return worst(codes)


__all__ = ["ExitCode", "for_error", "for_outcome", "for_sync", "worst"]
