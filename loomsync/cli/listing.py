"""``loomsync list``: threads, newest activity first, a page at a time (issue 16 items 1 and 7;
docs/client.md). Registered on the one typer app of :mod:`loomsync.cli.main`.

Paging: ``--limit N`` rows (50 by default; ``--limit 0``: every one). When rows are left, a note
on **stderr** (so that a pipe holds only rows) says how many and how to get them: ``12 more:
--limit 0 lists every one, --cursor C the next 50``. ``--cursor`` continues after the last row
shown: for ``--server`` it is the server's opaque ``next_cursor`` (API.md section 6); for this
machine's list it is a keyset cursor of :func:`local_cursor` (the last row's place in the
order), so a page never repeats or skips a thread while others are written.

``--scope visible`` (issue 16 item 6; API.md section 6, "List parameters") lists every thread
the user may read on the server, with an OWNER column; it implies ``--server``
(:mod:`loomsync.cli.scopes`).

``--all`` keeps its meaning of every release so far, "include archived threads"; "every row"
is ``--limit 0`` (scripts that pass ``--all`` keep working).
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from loomsync.cli import messages, render, scopes, tokens, workspaces
from loomsync.cli.main import (
    JsonOption,
    MineOption,
    ScopeOption,
    _store,
    _warn,
    app,
    console,
    errors,
)
from loomsync.config import load_config
from loomsync.core.document.ids import PREFIX
from loomsync.errors import BadArgumentError, RefusedError
from loomsync.store import shortids as ids
from loomsync.store import shown
from loomsync.store.summaries import SortKey, sort_key
from loomsync.store.summary import ArchivedFilter, Scope, ThreadSummary, unencodable_warnings
from loomsync.sync import dropped
from loomsync.terminal import printable

if TYPE_CHECKING:  # `loomsync list` (not --server) imports no HTTP client (test_startup.py)
    from loomsync.http.client import ThreadSyncClient

#: The most rows the server gives in one page (API.md section 6).
SERVER_PAGE = 200
_LOCAL = "l1."
_CURSOR = re.compile(r"l1\.(-?[0-9a-f]{1,20})\.([0-9a-f]{32})")


def local_cursor(row: ThreadSummary) -> str:
    """The cursor of the page after ``row``: ``l1.``, its activity (µs since the epoch) in hex,
    ``.``, and the 32 hex digits of its id (its :func:`~loomsync.store.summaries.sort_key`)."""
    micros, thread_id = sort_key(row)
    return f"{_LOCAL}{micros:x}.{thread_id[len(PREFIX) :].replace('-', '')}"


def parse_local_cursor(cursor: str) -> SortKey:
    """The key a :func:`local_cursor` holds.

    Raises:
        BadArgumentError: not one (a bad argument value: exit code 2; a ``--server``
            cursor says so).
    """
    match = _CURSOR.fullmatch(cursor.strip().lower())
    if match is None:
        raise BadArgumentError(messages.not_a_cursor(cursor))
    micros, digits = match.groups()
    return int(micros, 16), f"{PREFIX}{uuid.UUID(digits)}"


def _server_rows(
    client: ThreadSyncClient,
    limit: int,
    cursor: str | None,
    workspace: str | None,
    which: ArchivedFilter,
    scope: Scope,
) -> tuple[list[ThreadSummary], str | None]:
    """Up to ``limit`` rows (0: all) of ``scope`` from the server, page by page; and the cursor
    after them."""
    rows: list[ThreadSummary] = []
    while True:
        size = SERVER_PAGE if not limit else min(SERVER_PAGE, limit - len(rows))
        try:
            page = client.list_threads(
                limit=size, cursor=cursor, workspace=workspace, archived=which, scope=scope
            )
        except RefusedError as exc:
            if cursor is None or exc.status != 400 or rows:
                raise
            raise BadArgumentError(messages.not_a_server_cursor(cursor, exc.detail)) from None
        _warn(str(entry) for entry in page.skipped)
        rows += page.threads
        cursor = page.next_cursor
        if cursor is None or (limit and len(rows) >= limit):
            return rows, cursor


@app.command("list")
def list_threads(
    server: Annotated[
        bool, typer.Option("--server", help="List the server's copies instead.")
    ] = False,
    all_: Annotated[bool, typer.Option("--all", help="Include archived threads.")] = False,
    archived: Annotated[bool, typer.Option("--archived", help="Only archived threads.")] = False,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=0, help="At most this many (0: every one).")
    ] = 50,
    cursor: Annotated[
        str | None,
        typer.Option("--cursor", help="Continue after the last row shown (the note says it)."),
    ] = None,
    workspace: Annotated[
        str | None,
        typer.Option(help="Only threads of this workspace root (a path; '.' is this folder)."),
    ] = None,
    scope: ScopeOption = "mine",
    mine: MineOption = False,
    as_json: JsonOption = False,
) -> None:
    """List threads, newest activity first, with their sync state (a page at a time;
    --scope visible: the server's threads you may read, with their owner)."""
    if archived and all_:  # finding 13: --all adds archived ones, --archived only them
        raise typer.BadParameter(
            messages.only_one_of(["--archived", "--all"], ["--archived", "--all"])
        )
    which: ArchivedFilter = "true" if archived else "any" if all_ else "false"
    workspace = workspaces.normalised(workspace)
    scope = scopes.chosen(scope, mine)
    server = server or scope == "visible"  # only the server knows the others' threads
    after = parse_local_cursor(cursor) if cursor is not None and not server else None
    short: dict[str, str] | None = None
    others = 0  # threads of other people kept here (pulled by `show`), left out of mine
    with _store() as store:
        if server:
            client = scopes.require_login(store, scope)
            raw, next_cursor = _server_rows(client, limit, cursor, workspace, which, scope)
            rows, sync = shown.summaries(store.local.redaction, raw), None  # maybe raw
            more = None
        else:  # the summary index holds summaries redacted: no detector to load here
            local = store.local
            me = tokens.current_user(load_config())  # others' threads `show` pulled: not mine
            rows = local.list(
                limit=limit or None, workspace=workspace, archived=which, after=after, owner=me
            )
            last = sort_key(rows[-1]) if rows else None
            more = (
                local.count(workspace=workspace, archived=which, after=last, owner=me)
                if last
                else 0
            )
            if me is not None and cursor is None:
                every = local.count(workspace=workspace, archived=which)
                others = every - local.count(workspace=workspace, archived=which, owner=me)
            next_cursor = local_cursor(rows[-1]) if rows and more else None
            entries = store.status()
            sync = render.sync_states(
                rows,
                entries,
                lambda i: store.states.get(i).base is not None,
                logged_in=store.client is not None,
                dropped=lambda i: dropped.not_sent(local, store.states, i),
            )
            if console.is_terminal:
                short = ids.abbreviations((row.id for row in rows), ids.local_ids(local))
            _warn(str(problem) for problem in local.problems)
    _warn(unencodable_warnings(rows))  # issue 27 item 4: listed, and named
    if as_json:
        out = [r.model_dump(mode="json") | ({"sync": sync[r.id]} if sync else {}) for r in rows]
        render.print_json(console, out)
    elif not rows and workspace is not None and not cursor:
        console.print(printable(messages.no_threads_in_workspace(workspace, server=server)))
    elif not rows:
        console.print(
            "No more threads." if cursor else "No threads." if server else "No threads yet."
        )
    else:
        columns = render.thread_columns(sync, short, owners=scope == "visible")
        render.print_table(console, columns, rows)
    if next_cursor is not None:
        errors.hint(Text(printable(messages.more_rows(more, next_cursor, limit))))
    if others:
        errors.print(Text(messages.others_kept_here(others)))


__all__ = ["list_threads", "local_cursor", "parse_local_cursor"]
