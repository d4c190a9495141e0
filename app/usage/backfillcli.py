"""``loomsync-server usage-backfill``: count the usage of threads stored without it (issue 33;
docs/operations.md "Usage"). Migration 0009_usage runs it once; ``--again`` walks every thread
from the start (threads with rows already are skipped), for threads an older server wrote
during a rolling upgrade. Registered on :mod:`app.cli`'s command group."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from app.cli import _settings, cli, current_database
from app.database import run_autocommit
from app.logs import configure_logging
from app.usage.backfill import backfill_sync


@cli.command("usage-backfill")
def usage_backfill(
    again: Annotated[
        bool, typer.Option("--again", help="Walk every thread again from the start.")
    ] = False,
) -> None:
    """Count the token usage of each stored thread that has none counted yet, in batches of
    short transactions (resumable; threads written meanwhile count themselves)."""
    settings = _settings()
    configure_logging(settings)
    with current_database(settings) as (settings, url):
        threads = asyncio.run(
            run_autocommit(url, settings, lambda sync: backfill_sync(sync, again=again))
        )
    typer.echo(f"{threads} threads read")


__all__ = ["usage_backfill"]
