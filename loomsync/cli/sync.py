"""``loomsync sync [--status] [--retry-failed] [--no-pull] [--json]`` (docs/client.md).
Registered on the one typer app of :mod:`loomsync.cli.main`.

Both forms first reconcile the queue with the store (issue 15, item 4,
:func:`loomsync.sync.requeue.requeue`): an unreadable ``pending.json`` is set aside and rebuilt, and
a changed thread the queue has no entry for is queued; what was found is said before anything
else (``--json``: the ``requeue`` field).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from loomsync.cli import render
from loomsync.cli.main import JsonOption, _require_login, _store, app, console, errors
from loomsync.store import shortids as ids
from loomsync.store.summary import SyncOutcome
from loomsync.terminal import printable

if TYPE_CHECKING:
    from loomsync.sync.requeue import Requeued


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
    as_json: JsonOption = False,
) -> None:
    """Send pending changes now (with a progress bar), then fetch newer copies."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with _store() as store:
        found = store.rescan()
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
                render.queue_status(console, entries, short)
            return
        _require_login(store)
        total = len([e for e in store.status() if retry_failed or not e.failed])
        outcomes: list[SyncOutcome] = []
        with Progress(
            TextColumn("Syncing"), BarColumn(), MofNCompleteColumn(), console=errors, transient=True
        ) as progress:
            task = progress.add_task("sync", total=total)
            outcomes = store.retry_pending(
                include_failed=retry_failed, progress=lambda _: progress.advance(task)
            )
        unreachable = next((o for o in outcomes if o.status == "pending"), None)
        pulled = store.pull() if pull and unreachable is None else []
        left = store.pending_count()
    if as_json:
        done = [o.as_dict() for o in outcomes + pulled]
        render.print_json(console, {"outcomes": done, "pending": left, "requeue": found.as_dict()})
    else:
        _say(found)
        render.print_lines(console, render.sync_summary(outcomes + pulled, left))
    if any(o.status in ("failed", "pending") for o in outcomes):
        raise typer.Exit(1)


__all__ = ["sync"]
