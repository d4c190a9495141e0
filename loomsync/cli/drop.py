"""``loomsync sync --drop ID`` and ``loomsync sync --discard-failed [--yes]`` (issue 16 item 2;
docs/client.md): remove failed sync entries after saying, per entry, exactly what is lost.

Only the change the server refused is dropped; the thread on this machine stays as it is
(a failed ``delete``: the thread is already gone here, and the server keeps its copy). At a
terminal the command asks first unless ``--yes``; with stdin not a terminal (a script) it
drops nothing without ``--yes`` and exits 1, since nothing could ask.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from loomsync.cli.exits import ExitCode
from loomsync.errors import ThreadNotFoundError
from loomsync.store import shortids
from loomsync.terminal import TerminalConsole, printable

if TYPE_CHECKING:
    from loomsync.sync.queue import PendingEntry
    from loomsync.sync.syncing import SyncingThreadStore


def lost(entry: PendingEntry, on_server: bool) -> str:
    """What dropping ``entry`` loses, in words (raw text)."""
    if entry.op == "delete":
        return "the server keeps its copy of the thread (it stays deleted on this machine)"
    if entry.op == "patch":
        changed = ", ".join(sorted(entry.payload or {})) or "the change"
        return (
            f"the server does not get this change ({changed}); the thread on this machine keeps "
            "it, and stays as it is"
        )
    if on_server:
        return (
            "the server does not get this machine's changes to the thread since its last sync; "
            "the thread on this machine stays as it is"
        )
    return "the thread is not uploaded: it stays on this machine only, as it is"


def describe(store: SyncingThreadStore, entry: PendingEntry) -> str:
    """``T-… (save): refused by the server (413): …. Dropping it: <what is lost>.`` (raw)."""
    on_server = store.states.get(entry.thread_id).base is not None
    why = (entry.last_error or "refused by the server").rstrip(".")
    return f"{entry.thread_id} ({entry.op}) failed: {why}. Dropping it: {lost(entry, on_server)}."


def chosen(store: SyncingThreadStore, ref: str | None) -> list[PendingEntry]:
    """The failed entries ``--drop ref`` names (a whole id or a short one, among the failed
    entries' threads: a thread deleted here is matched too), or every failed entry.

    Raises:
        ThreadNotFoundError: ``ref`` names no thread with a failed entry.
        AmbiguousThreadIdError, NotAThreadIdError: as :func:`loomsync.store.shortids.resolve`.
    """
    failed = store.queue.failed()
    if ref is None:
        return failed
    try:
        thread_id = shortids.resolve_among([e.thread_id for e in failed], ref, store.local)
    except ThreadNotFoundError:
        raise ThreadNotFoundError(
            ref,
            f"no failed sync entry's thread id starts with {ref.strip()} (`loomsync sync "
            "--status` lists them); nothing dropped",
        ) from None
    mine = [e for e in failed if e.thread_id == thread_id]
    if not mine:
        raise ThreadNotFoundError(
            thread_id,
            f"{thread_id} has no failed sync entry to drop (`loomsync sync --status` lists "
            "them); nothing dropped",
        )
    return mine


def drop(
    store: SyncingThreadStore,
    ref: str | None,
    *,
    yes: bool,
    console: TerminalConsole,
    errors: TerminalConsole,
) -> None:
    """Say what each failed entry loses, ask (or take ``--yes``), drop them, say so.

    Raises:
        typer.Exit: 1 when nothing was dropped because nobody confirmed.
    """
    entries = chosen(store, ref)
    if not entries:
        console.print("No failed sync entries: nothing to drop.")
        return
    for entry in entries:
        console.print(printable(describe(store, entry)))
    count = f"{len(entries)} failed sync entr{'y' if len(entries) == 1 else 'ies'}"
    if not yes:
        if not sys.stdin.isatty():
            message = f"nothing dropped: add --yes to drop the {count} (stdin is not a terminal)"
            errors.print(Text.assemble(("error:", "red"), " ", message))
            raise typer.Exit(ExitCode.FAILED)
        if not typer.confirm(f"Drop the {count}?", default=False):
            errors.print("Nothing dropped.")
            raise typer.Exit(ExitCode.FAILED)
    removed = store.drop_failed(entries[0].thread_id if ref is not None else None)
    shown = f"{len(removed)} failed sync entr{'y' if len(removed) == 1 else 'ies'}"
    console.print(
        f"Dropped {shown}; the threads on this machine are unchanged (saving one again queues "
        "it again)."
    )


__all__ = ["chosen", "describe", "drop", "lost"]
