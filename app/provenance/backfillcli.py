"""``loomsync-server provenance-backfill``: index the files of threads stored without them
(issue 32; docs/operations.md "Provenance index"). Migration 0008_provenance runs it once;
``--again`` walks every thread from the start, for threads an older server wrote during a
rolling upgrade. Registered on :mod:`app.cli`'s command group."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from app.cli import _settings, cli, current_database
from app.config import Settings
from app.database import make_engine
from app.logs import configure_logging
from app.provenance.backfill import backfill_sync


async def _backfill(url: str, settings: Settings, again: bool) -> tuple[int, int]:
    engine = make_engine(url, settings)
    try:
        async with engine.connect() as conn:
            auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
            return await auto.run_sync(lambda sync: backfill_sync(sync, again=again))
    finally:
        await engine.dispose()


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
        threads, files = asyncio.run(_backfill(url, settings, again))
    typer.echo(f"{threads} threads read, {files} file touches indexed")


__all__ = ["provenance_backfill"]
