"""``loomsync sync [--status] [--retry-failed] [--no-pull] [--drop ID | --discard-failed
[--yes]] [--json]`` (docs/client.md). Registered on the one typer app of
:mod:`loomsync.cli.main`.

Both forms first reconcile the queue with the store (issue 15, item 4,
:func:`loomsync.sync.requeue.requeue`): an unreadable sync queue file is set aside and rebuilt, and
a changed thread the queue has no entry for is queued; what was found is said before anything
else (``--json``: the ``requeue`` field).

The summary counts what the queue holds after the run (:meth:`SyncingThreadStore.counts`, the
count ``loomsync status`` prints too), so a failed entry of an earlier run is counted and
listed; the exit code is :func:`loomsync.cli.exits.for_sync`'s (issue 16 items 2 and 3: 3 when
the server refused the token, 1 while an entry failed, 4 while entries wait for a server that
could not be reached; issue 27 item 10: 1 while entries are left pending with the server up).
A fork made while the run went on, by it, the background sync of another ``loomsync`` process
or ``loomsync watch``, is reported ``forked`` with its id and sent in the same run
(:mod:`loomsync.sync.forks`).
``--drop`` and ``--discard-failed``: :mod:`loomsync.cli.drop`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from loomsync.cli import exits, messages, render
from loomsync.cli.main import JsonOption, _require_login, _store, app, console, errors
from loomsync.store import shortids as ids
from loomsync.store.summary import SyncOutcome
from loomsync.terminal import printable

if TYPE_CHECKING:
    from loomsync.sync.requeue import Requeued

#: The hint under a summary that lists failed entries.
FAILED_HINT = (
    "`loomsync sync --retry-failed` tries the failed entries again; `loomsync sync --drop ID` "
    "(or --discard-failed) drops them, the threads here stay as they are."
)


def _say(found: Requeued) -> None:
    """The reconcile's lines, in yellow on stdout (before the summary they explain)."""
    for line in found.lines():
        console.print(Text(printable(line), style="yellow"))


@app.command()
def sync(
    status: Annotated[
        bool, typer.Option("--status", help="List pending and failed entries.")
    ] = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Retry failed entries too.")
    ] = False,
    pull: Annotated[
        bool, typer.Option("--pull/--no-pull", help="Fetch newer server copies.")
    ] = True,
    drop: Annotated[
        str | None,
        typer.Option(
            "--drop",
            metavar="ID",
            help="Drop this thread's failed entries (the thread here stays as it is).",
        ),
    ] = None,
    discard_failed: Annotated[
        bool, typer.Option("--discard-failed", help="Drop every failed entry.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With --drop/--discard-failed: do not ask.")
    ] = False,
    as_json: JsonOption = False,
) -> None:
    """Send pending changes now (with a progress bar), then fetch newer copies.

    Exit code 0 when everything is on the server (forks included), 1 while an entry failed or
    is left pending with the server up, 3 when the server refused the token, 4 while entries
    wait for a server that could not be reached.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from loomsync.cli import drop as dropping
    from loomsync.sync import dropped

    choices = ["--status", "--retry-failed", "--drop", "--discard-failed"]
    given = [
        name
        for name, on in zip(
            choices, [status, retry_failed, drop is not None, discard_failed], strict=True
        )
        if on
    ]
    if len(given) > 1:
        raise typer.BadParameter(messages.only_one_of(given, choices))
    if yes and drop is None and not discard_failed:
        raise typer.BadParameter("--yes goes with --drop or --discard-failed")
    if as_json and (drop is not None or discard_failed):
        raise typer.BadParameter("--json does not go with --drop or --discard-failed")
    with _store() as store:
        found = store.rescan()
        if drop is not None or discard_failed:
            _say(found)
            dropping.drop(store, drop, yes=yes, console=console, errors=errors)
            return
        if status:
            entries = store.status()
            if as_json:
                listed = [e.model_dump(mode="python") for e in entries]
                render.print_json(console, listed)  # a list, as before: no requeue field here
            else:
                _say(found)
                short = None
                if console.is_terminal:
                    queued = (e.thread_id for e in entries)
                    short = ids.abbreviations(queued, ids.local_ids(store.local))
                not_sent = dropped.not_sent_threads(store.local, store.states)
                render.queue_status(console, entries, short, not_sent)
            return
        client = _require_login(store)
        total = len([e for e in store.status() if retry_failed or not e.failed])
        outcomes: list[SyncOutcome] = []
        with Progress(
            TextColumn("Syncing"), BarColumn(), MofNCompleteColumn(), console=errors, transient=True
        ) as progress:
            task = progress.add_task("sync", total=total)
            outcomes = store.retry_pending(
                include_failed=retry_failed, progress=lambda _: progress.advance(task)
            )
        stopped = any(o.unreachable or o.status == "token_refused" for o in outcomes)
        pulled = store.pull() if pull and not stopped else []
        counts = store.counts()
        failed = store.queue.failed()
        waiting = [e for e in store.status() if not e.failed]
    code = exits.for_sync(outcomes, counts)
    if as_json:
        done = [o.as_dict() for o in outcomes + pulled]
        render.print_json(
            console,
            {
                "outcomes": done,
                "pending": counts.pending,
                "failed": counts.failed,
                "waiting_for_login": counts.waiting_for_login,
                "exit_code": int(code),
                "requeue": found.as_dict(),
            },
        )
    else:
        _say(found)
        render.print_lines(console, render.sync_summary(outcomes + pulled, counts, failed, waiting))
        if failed:
            console.print(FAILED_HINT)
        if any(o.status == "token_refused" for o in outcomes):
            message = messages.token_refused(client.server_url) + "; the changes wait here."
            errors.print(Text.assemble(("error:", "red"), " ", printable(message)))
    if code is not exits.ExitCode.OK:
        raise typer.Exit(code)


__all__ = ["FAILED_HINT", "sync"]
