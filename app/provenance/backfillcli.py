"""``loomsync-server provenance-backfill``: index the files of threads stored without them
(issue 32; docs/operations.md "Provenance index"). Migration 0008_provenance runs it once;
``--again`` walks every thread from the start, for threads an older server wrote during a
rolling upgrade. Registered on :mod:`app.cli`'s command group."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from app.cli import _settings, cli, current_database
from app.database import run_autocommit
from app.logs import configure_logging
from app.provenance.backfill import backfill_sync


@cli.command("provenance-backfill")
def provenance_backfill(
    again: Annotated[
        bool, typer.Option("--again", help="Walk every thread again from the start.")
    ] = False,
) -> None:
    """Index the files each stored thread's tool calls touched, in batches of short
    transactions (resumable; threads written meanwhile index themselves)."""
    settings = _settings()
    configure_logging(settings)
    with current_database(settings) as (settings, url):
        threads, files = asyncio.run(
            run_autocommit(url, settings, lambda sync: backfill_sync(sync, again=again))
        )
    typer.echo(f"{threads} threads read, {files} file touches indexed")


__all__ = ["provenance_backfill"]
