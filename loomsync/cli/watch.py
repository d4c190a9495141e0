"""``loomsync watch``: import every session as the agents write it (issue 17 item 1;
:mod:`loomsync.watch`). Registered on the one typer app of :mod:`loomsync.cli.main`; the
service of issue 17 item 2 runs it with no arguments.

It runs until interrupted (Ctrl-C, SIGTERM from systemd or launchd: exit code 0) and logs to
stderr, one line per event, without colour or timestamps (the journal adds its own):
``imported …``, ``sync …``, ``ignored …``, ``watching …``. ``--verbose`` adds the sync
machinery's own lines; ``--quiet`` keeps warnings and errors only.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
from typing import Annotated

import typer

from loomsync.cli.main import app


class _Lines(logging.Formatter):
    """``message`` for info, ``warning: message`` above it: one line each (the text is made
    printable by the code that logs it)."""

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line."""
        text = super().format(record).replace("\n", "\\n")
        return text if record.levelno <= logging.INFO else f"{record.levelname.lower()}: {text}"


def _configure(verbose: bool, quiet: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Lines("%(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    level = logging.WARNING if quiet else logging.INFO
    logging.getLogger("loomsync.watch").setLevel(level)
    if verbose:
        logging.getLogger("loomsync").setLevel(logging.DEBUG if not quiet else logging.WARNING)
    for noisy in ("httpx", "httpcore", "watchfiles"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@app.command("watch")
def watch_command(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Also log the sync's own steps.")
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Log warnings and errors only.")
    ] = False,
) -> None:
    """Import sessions as agents write them (Codex, Claude Code, Gemini CLI, …) and sync them.

    Watches the folders in config.toml's [watch] (default: the usual folders of Codex, Claude
    Code, Gemini CLI and of every other live agent found here) until interrupted; logs one
    line per import and sync on stderr.
    """
    from loomsync.watch import watch  # the watcher costs every other command nothing

    _configure(verbose, quiet)
    stop = threading.Event()

    def stopping(signum: int, _frame: object) -> None:
        logging.getLogger("loomsync.watch").info("stopping (%s)", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    watch(stop=stop)


__all__ = ["watch_command"]
