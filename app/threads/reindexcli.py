"""``loomsync-server reindex``: rebuild the search vectors an older analyzer made (issue 14;
docs/operations.md "Search vectors"). Registered on :mod:`app.cli`'s command group; ``serve``
starts it in the background when it is due (:func:`app.cli.start_reindex`)."""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer

from app.cli import _settings, cli, current_database
from app.config import Settings
from app.database import make_engine
from app.logs import configure_logging
from app.threads import reindex


async def _reindex(url: str, settings: Settings, jobs: int, batch: int) -> reindex.Outcome:
    engine = make_engine(url, settings)
    try:
        return await reindex.rebuild(engine, jobs=jobs, batch_rows=batch)
    finally:
        await engine.dispose()


@cli.command("reindex")
def reindex_command(
    jobs: Annotated[
        int, typer.Option(min=1, help="Processes analysing text (more: faster, more CPU).")
    ] = 1,
    batch: Annotated[
        int, typer.Option(min=1, max=10_000, help="Rows per batch (one short transaction).")
    ] = reindex.BATCH_ROWS,
    nice: Annotated[bool, typer.Option("--nice", help="Run at a lower CPU priority.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", help="No summary on stdout: the log lines say it.")
    ] = False,
) -> None:
    """Rebuild the search vectors of every thread and message made by an older analyzer
    (issue 14; docs/operations.md "Search vectors"), online: batches of short transactions,
    resumable, never overwriting a row written meanwhile. ``serve`` runs it in the background
    when it is due, with ``--quiet``: its log lines already give each table's counts, which
    its summary printed a second time in the server's output (issue 30 item 8). Exit status 1 when rows are left stale (locked or written by an older
    server throughout): run it again; 0 when another rebuild is running."""
    settings = _settings()
    configure_logging(settings)
    if nice:
        os.nice(10)
    with current_database(settings) as (settings, url):
        outcome = asyncio.run(_reindex(url, settings, jobs, batch))
    if not outcome.ran:
        typer.echo("Another rebuild is running; nothing done.")
        return
    for tally in [] if quiet else outcome.tallies:
        typer.echo(
            f"{tally.target}: {tally.rebuilt} rebuilt, {tally.skipped} left alone"
            f" (written meanwhile), {tally.left} still stale"
        )
    if not outcome.finished:
        raise typer.Exit(1)


__all__ = ["reindex_command"]
