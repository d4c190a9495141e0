"""How a command that changes a thread here and then syncs it now ends (issue 16, items 2 and
3): ``archive``, ``unarchive``, ``delete``, ``fork``, ``share``, ``redact``.

The change is made on this machine first (local first), then sent. The command's line says
how the sending went, and its exit code (:mod:`loomsync.cli.exits`) says whether the
requested effect happened:

- sent (``synced``): exit code 0;
- not logged in, or the server unreachable: the change waits here, and the line says so
  (:data:`~loomsync.cli.messages.SAVED_OFFLINE`): exit code 0, a local-first success;
- the server refused the token (401): the change waits for a new login, and the line says so
  in the one wording (:func:`~loomsync.cli.messages.token_refused`): exit code 3;
- the server refused the change for good (403, 410, 413, 422...): it is kept here and as a
  failed sync entry, and the line says how to retry or drop it: exit code 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from loomsync.cli import messages
from loomsync.cli.exits import ExitCode, for_outcome, worst
from loomsync.terminal import TerminalConsole, printable

if TYPE_CHECKING:
    from loomsync.store.summary import SyncOutcome
    from loomsync.sync.syncing import SyncingThreadStore


@dataclass(frozen=True, slots=True)
class Synced:
    """How sending one thread went.

    Attributes:
        note: raw text that ends the command's line (``synced``, ``saved locally; …``).
        code: the command's exit code for it.
    """

    note: str
    code: ExitCode = ExitCode.OK


def sync_now(store: SyncingThreadStore, thread_id: str) -> Synced:
    """Push one thread's queue entries now (:meth:`SyncingThreadStore.sync_thread`) and say
    how it went (see the module docstring). Never raises for the network."""
    if store.client is None:
        return Synced(messages.SAVED_NOT_LOGGED_IN)
    outcome = store.sync_thread(thread_id)
    code = for_outcome(outcome)
    if outcome.status == "token_refused":
        refused = messages.token_refused(store.client.server_url)
        return Synced(f"saved locally, not sent: {refused}; it is sent after that", code)
    if code is ExitCode.FAILED:
        return Synced(messages.not_on_server(thread_id, outcome.detail), code)
    if outcome.status == "pending":
        return Synced(messages.SAVED_OFFLINE)
    return Synced("synced")


def finish(line: str, synced: Synced, *, console: TerminalConsole, errors: TerminalConsole) -> None:
    """Print ``{line}; {note}.`` (raw text, made printable) and exit with the code: on stdout
    when the effect happened (code 0), else as an ``error:`` line on stderr.

    Raises:
        typer.Exit: with ``synced.code`` when it is not 0.
    """
    said = printable(f"{line}; {synced.note}.")  # ids in it: never wrapped inside one
    if synced.code is ExitCode.OK:
        console.hint(said)
        return
    errors.hint(Text.assemble(("error:", "red"), " ", said))
    raise typer.Exit(synced.code)


def end_import(
    outcomes: Sequence[SyncOutcome],
    server_url: str | None,
    *,
    quiet: bool,
    errors: TerminalConsole,
) -> None:
    """How ``loomsync import`` ends after its sync: the import is done here, so threads left
    pending (offline) are a success (code 0); a refused token says to log in (unless
    ``quiet``: ``--json``) and exits 3; a refused upload exits 1.

    Raises:
        typer.Exit: with that code when it is not 0.
    """
    code = worst(for_outcome(outcome) for outcome in outcomes)
    if code is ExitCode.LOGIN and not quiet:
        line = messages.token_refused(server_url) + "; the imported threads are sent after that."
        errors.print(Text.assemble(("error:", "red"), " ", printable(line)))
    if code is not ExitCode.OK:
        raise typer.Exit(code)


__all__ = ["Synced", "end_import", "finish", "sync_now"]
