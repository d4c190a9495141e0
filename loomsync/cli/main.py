"""``loomsync``: the command line of the client (docs/client.md shows what each command prints).

The SDK does the work; this module parses arguments, calls it, and renders with one rich
Console. Errors of the SDK are caught in one place (:func:`main`): one red line, and the exit
code of :mod:`loomsync.cli.exits` (issue 16 item 2: 1 failed, 3 login, 4 unreachable).
The consoles are :class:`~loomsync.terminal.TerminalConsole`: markup is off (style with
``Text``), and text from threads, servers and files is made printable before it is shown.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.text import Text

from loomsync.cli import exits, messages, overrides, render, scopes, tokens, urls
from loomsync.cli.synced import Synced, end_import, finish, sync_now
from loomsync.config import clear_login, default_paths, load_config, save_login
from loomsync.core.document.model import Thread
from loomsync.core.version import __version__
from loomsync.errors import AuthError, InvalidInputError, NotLoggedInError
from loomsync.http.connect import syncing_store
from loomsync.store import shortids
from loomsync.terminal import TerminalConsole, printable

if TYPE_CHECKING:
    from loomsync.http.client import ThreadSyncClient
    from loomsync.sync.syncing import SyncingThreadStore

app = typer.Typer(
    name="loomsync",
    no_args_is_help=True,
    add_completion=True,  # --install-completion, --show-completion (issue 16, item 10)
    pretty_exceptions_enable=False,
    help="Keep, sync and search the conversations of AI coding agents.",
)
console = TerminalConsole(soft_wrap=True)
errors = TerminalConsole(stderr=True, soft_wrap=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]
ScopeOption = Annotated[scopes.Scope, typer.Option(help=scopes.SCOPE_HELP)]
MineOption = Annotated[bool, typer.Option("--mine", help="Only your own threads (the default).")]
ThreadArg = Annotated[
    str,
    typer.Argument(help="Thread id (T-…) or its first 4+ hex digits.", show_default=False),
]


def _version(value: bool) -> None:
    if value:
        console.print(f"loomsync {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """Keep, sync and search the conversations of AI coding agents."""


#: The store of one command, closed at the end of its ``with`` block.
_store = syncing_store


def _require_login(store: SyncingThreadStore) -> ThreadSyncClient:
    """The store's client; :class:`NotLoggedInError` (exit code 3) when there is none."""
    if store.client is None:
        raise NotLoggedInError(messages.NOT_LOGGED_IN)
    return store.client


@app.command()
def login(
    server: Annotated[
        str, typer.Option("--server", help="Server URL, e.g. http://127.0.0.1:8080.")
    ],
    token: Annotated[
        str, typer.Option("--token", help="Bearer token (loomsync-server token create).")
    ],
    verify: Annotated[
        bool, typer.Option("--verify/--no-verify", help="Check the token now.")
    ] = True,
) -> None:
    """Store the server URL and token (token file mode 0600)."""
    from loomsync.http.client import ThreadSyncClient
    from loomsync.sync.queue import QUEUE_FILE, PendingSyncQueue

    server, note = urls.server_address(server)
    if note:
        errors.print(printable(note))
    if verify:
        with ThreadSyncClient(server, token, retries=0, timeout=10) as client:
            try:
                client.list_threads(limit=1)
            except AuthError as exc:  # exit code 3: nothing is stored
                raise NotLoggedInError(  # nothing stored; the one wording of a 401
                    f"nothing saved: {messages.token_refused(server, exc.detail)}"
                ) from None
    paths = default_paths()
    save_login(paths, server, token)
    PendingSyncQueue(paths.sync_dir / QUEUE_FILE).forget_refusals()  # they waited for this
    claims = tokens.claims(token)
    who = f" as {claims['sub']}" if claims.get("sub") else ""
    org = f" (org {claims['org']})" if claims.get("org") else ""
    console.print(printable(f"Logged in to {server.rstrip('/')}{who}{org}."))
    console.print(printable(f"Token saved to {paths.token_file} (mode 0600)."))
    if shadowed := overrides.shadowing(server, token):  # newcomer finding 1
        _warn([messages.login_shadowed(shadowed)])


@app.command()
def logout() -> None:
    """Forget the token (the server URL is kept)."""
    paths = default_paths()
    server = load_config(paths).server_url
    if clear_login(paths):
        console.print(printable(f"Logged out of {server or 'the server'}."))
    else:
        console.print("Not logged in.")


def _warn(lines: Iterable[str]) -> None:
    """Each line (raw text) as a yellow ``warning:`` line on stderr, made printable."""
    for line in lines:
        errors.print(Text.assemble(("warning:", "yellow"), " ", printable(line)))


def _thread_id(store: SyncingThreadStore, ref: str) -> str:
    """The whole id a thread argument names: an id, or a short one (loomsync/store/shortids.py)."""
    return shortids.resolve(store.local, ref)


def _load(store: SyncingThreadStore, ref: str) -> Thread:
    path = Path(ref)
    if not ref.startswith("T-") and path.suffix in (".json", ".jsonl"):
        loaded = store.load_file(path)
        if loaded.id is None and not loaded.messages:  # finding 12: an agent's session file
            raise InvalidInputError(messages.not_a_thread_file(path))
        return loaded
    return store.load(_thread_id(store, ref))


def _edit_command(verb: str, ref: str, change: Any) -> None:
    """Change the thread here, sync it now, say how it went (exit code: loomsync.cli.synced)."""
    with _store() as store:
        thread_id = _thread_id(store, ref)
        change(store, thread_id)
        synced = sync_now(store, thread_id)
    finish(f"{verb} {thread_id}", synced, console=console, errors=errors)


@app.command()
def archive(thread: ThreadArg) -> None:
    """Hide a thread from default listings and searches."""
    _edit_command("Archived", thread, lambda s, t: s.archive(t))


@app.command()
def unarchive(thread: ThreadArg) -> None:
    """Bring an archived thread back."""
    _edit_command("Unarchived", thread, lambda s, t: s.unarchive(t))


@app.command()
def delete(
    thread: ThreadArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete a thread here and on the server."""
    with _store() as store:
        thread = _thread_id(store, thread)
        if not yes:
            typer.confirm(f"Delete {thread} here and on the server?", abort=True)
        exists_here = store.local.exists(thread)  # validates the id
        on_server = store.states.get(thread).base is not None or not exists_here
        store.delete(thread)
        synced = sync_now(store, thread) if on_server else Synced("it was only on this machine")
    finish(f"Deleted {thread}", synced, console=console, errors=errors)


@app.command()
def fork(
    thread: ThreadArg,
    up_to: Annotated[
        int | None, typer.Option("--up-to", min=0, help="Keep messages [0, N).")
    ] = None,
) -> None:
    """Copy a thread (or its first N messages) into a new thread."""
    with _store() as store:
        thread = _thread_id(store, thread)
        if up_to is not None and up_to > (count := len(store.load(thread).messages)):
            raise typer.BadParameter(
                messages.up_to_out_of_range(up_to, count), param_hint="'--up-to'"
            )
        new = store.fork(thread, up_to=up_to)
        synced = sync_now(store, str(new.id))
    count = len(new.messages)
    line = f"Forked {thread} into {new.id} ({count} message{'s' if count != 1 else ''})"
    finish(line, synced, console=console, errors=errors)


@app.command()
def resume(
    thread: ThreadArg,
    workspace: Annotated[Path, typer.Option(help="Where the session resumes.")] = Path("."),
    as_json: JsonOption = False,
) -> None:
    """Show what changed since a thread was last saved (branch, commits, uncommitted work)."""
    from loomsync.resume import Resumed, workspace_changes

    with _store() as store:
        loaded = store.load(_thread_id(store, thread))
    resumed = Resumed(loaded, workspace_changes(loaded, workspace))
    if as_json:
        render.print_json(console, resumed.as_dict())
    else:
        console.print(render.resume_summary(resumed))


@app.command()
def export(
    thread: ThreadArg,
    fmt: Annotated[
        Literal["json", "markdown"], typer.Option("--format", "-f", help="json or markdown.")
    ] = "markdown",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file.")
    ] = None,
) -> None:
    """Export a thread as JSON (exact document) or Markdown (a transcript)."""
    from loomsync.export import export as export_thread

    with _store() as store:
        loaded = store.load(_thread_id(store, thread))
        text = export_thread(loaded, fmt, store.local.redaction)  # printable (loomsync.export)
    if output is None:
        console.write_text(text)
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise messages.cannot("write", output, exc) from None
        errors.print(printable(f"Wrote {output} ({fmt}, {len(loaded.messages)} messages)."))


@app.command("import")
def import_command(
    fmt: Annotated[
        str | None,
        typer.Argument(
            metavar="[FORMAT|PATH]",
            help="auto (each file's own), an agent `loomsync agents` lists, or a PATH whose"
            " agent is recognised.",
            show_default=False,
        ),
    ] = None,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or folders (default: the format's usual folders)."),
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="Only sessions active on or after this date (UTC).")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report, write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    include_deleted: Annotated[
        bool,
        typer.Option(
            "--include-deleted", help="Import threads you deleted too (this machine only)."
        ),
    ] = False,
    every: Annotated[
        bool, typer.Option("--all", help="Every agent found in its usual folders.")
    ] = False,
) -> None:
    """Import sessions other agents wrote (Codex, Claude Code, …), then sync them.

    A file named here must be of FORMAT (else exit code 1, nothing imported); with ``auto``
    or a PATH alone each file is read by the agent that recognises it, and the choice is
    said; ``--all`` reads every agent found here. Agents and repositories excluded in
    config.toml's [import] are never read. A thread deleted here is skipped (one line says
    so) unless ``--include-deleted``.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from loomsync.cli.importing import broken_importers, chosen_files
    from loomsync.importers import FORMATS
    from loomsync.importers.exclude import Exclusions
    from loomsync.importers.run import AUTO, ImportSummary, import_owner, import_sessions

    exclusions = Exclusions.of(load_config(default_paths()).imports)
    _warn(broken_importers())
    picked = chosen_files(fmt, list(paths or []), every, exclusions)
    fmt, chosen = picked.mode, picked.files
    if fmt == AUTO and not as_json:
        for name, file in chosen:
            errors.print(printable(f"{file}: {FORMATS[name].kind} ({name})"))
    by_format: dict[str, list[Path]] = {}
    for name, file in chosen:
        by_format.setdefault(name, []).append(file)
    when = since.replace(tzinfo=UTC) if since and since.tzinfo is None else since
    summary = ImportSummary()
    summary.add(picked.left_out)
    with _store() as store:
        with Progress(
            TextColumn("Importing"),
            BarColumn(),
            MofNCompleteColumn(),
            console=errors,
            transient=True,
        ) as progress:
            task = progress.add_task("import", total=len(chosen))
            paths_ = default_paths()
            owner = import_owner(paths_, load_config(paths_), create=not dry_run)
            for name, files in by_format.items():
                summary.add(import_sessions(
                    store, name, files, existing=store.local, since=when, dry_run=dry_run,
                    progress=lambda _: progress.advance(task), redaction=store.local.redaction,
                    owner=owner, deletions=store.deletions, include_deleted=include_deleted,
                    exclusions=exclusions,
                ))  # fmt: skip
        logged_in = store.client is not None
        outcomes = store.retry_pending() if logged_in and not dry_run else []
        counts, url = store.counts(), store.client.server_url if store.client else None
    left = counts.pending
    if as_json:
        formats = {str(file): name for name, file in chosen} if fmt == AUTO else None
        extra = {"formats": formats} if formats is not None else {}
        render.print_json(console, {**summary.as_dict(), "pending": left, **extra})
    else:
        if not chosen and not (summary.excluded or summary.excluded_agents):
            where = ", ".join(map(str, picked.paths)) or "the usual folders"
            kind = "session files" if fmt == AUTO else f"{fmt} sessions"
            errors.print(printable(f"No {kind} found under {where}."))
        for line in summary.lines(dry_run=dry_run):
            console.print(line)
        if logged_in and (outcomes or left):
            render.print_lines(console, render.sync_summary(outcomes, counts))
    end_import(outcomes, url, quiet=as_json, errors=errors)


from loomsync.cli import (  # noqa: E402  (their commands)
    agents,
    blame,
    listing,
    mcpserver,
    open,
    search,
    secrets,
    service,
    showing,
    status,
    sync,
    usage,
    watch,
)


def main() -> None:
    """Entry point of the ``loomsync`` command: SDK errors become one red line and exit code 1.

    Usage errors, ``--help`` and exit codes are typer's (standalone mode); the words are
    :func:`loomsync.cli.messages.describe`'s. On the way out every
    object is frozen (``gc.freeze``): the interpreter's last collection over everything the
    command made took a quarter of a second of ``loomsync list``; files and the index are
    closed by then (each command's ``with`` blocks), so nothing is left for it to do.
    """
    try:
        _run()
    finally:
        gc.freeze()


def _run() -> None:
    try:
        app()
    except Exception as exc:  # never a traceback for a person at a terminal
        first, *more = messages.describe(exc)  # the one place errors get their words
        errors.print(Text.assemble(("error:", "red"), " ", printable(first)))
        for line in more:
            errors.print(printable(line))
        sys.exit(exits.for_error(exc))


__all__ = [
    "agents",
    "app",
    "blame",
    "listing",
    "main",
    "mcpserver",
    "open",
    "search",
    "secrets",
    "service",
    "showing",
    "status",
    "sync",
    "usage",
    "watch",
]
