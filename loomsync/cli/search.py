"""``loomsync search QUERY``: what it asks and prints (issue 14; docs/client.md). Registered on
the one typer app of :mod:`loomsync.cli.main`.

``--syntax plain`` (the default) ranks threads by the words, none required; ``--syntax web``
is strict: ``"quoted phrases"``, ``-word`` (left out), ``or`` (API.md section 6). A query
starting with ``-`` goes after ``--`` (``loomsync search -- -python``), or it is read as an
option. A query of only common words or punctuation (``the and of``) says that there is
nothing to search for, rather than finding nothing silently. In an online search the hits of
threads only this machine holds are marked (``origin`` ``local`` in ``--json``).

``--scope visible`` (issue 16 item 6) searches every thread you may read on the server and
shows each hit's owner; it needs a login (``--local`` cannot have it). ``--workspace`` keeps
the threads of one ``workspace_root``, on the server and in the local search alike (the path
normalised as threads record it: :mod:`loomsync.cli.workspaces`).

When the server cannot be reached, this machine's threads answer and it says so (exit code 0:
local first). When the server refuses the token (401, issue 16 item 3) they answer too, but
it says the token was refused and to run ``loomsync login``, and exits with code 3.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from loomsync.cli import exits, messages, render, scopes, workspaces
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
from loomsync.store import shortids as ids
from loomsync.store import shown
from loomsync.store.summary import SearchResults, Syntax, unencodable_warnings
from loomsync.terminal import printable


def headline(results: SearchResults, query: str) -> str:
    """``12 threads found: 11 on the server, 1 only on this machine for 'q'`` (raw text);
    ``2 threads found on the server for 'q', and more there`` when the server has another
    page (said once: issue 16 item 9, no "on the server" twice); ``2 threads found on this
    machine for 'q', and more: a larger -n shows them`` when this machine has more (issue 30
    item 8)."""
    count = len(results.hits)
    found = f"{count} thread{'s' if count != 1 else ''} found"
    more = results.next_cursor is not None  # finding 6: the page is not all of them
    if results.source != "server":
        here = ", and more: a larger -n shows them" if results.more_here else ""
        return f"{found} on this machine for {query!r}{here}" + (
            " (more on the server)" if more else ""
        )
    only_here = sum(1 for hit in results.hits if hit.origin == "local")
    if not only_here:
        return f"{found} on the server for {query!r}" + (", and more there" if more else "")
    return (
        f"{found}: {count - only_here} on the server, {only_here} only on this machine for"
        f" {query!r}" + (", and more on the server" if more else "")
    )


@app.command()
def search(
    query: Annotated[
        str, typer.Argument(help="Words to find (one starting with '-': put '--' before it).")
    ],
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100)] = 20,
    local: Annotated[
        bool, typer.Option("--local", help="Search this machine's files only.")
    ] = False,
    syntax: Annotated[
        Syntax,
        typer.Option("--syntax", help='plain: ranked words; web: strict, "phrases", -word, or.'),
    ] = "plain",
    workspace: Annotated[
        str | None,
        typer.Option(help="Only threads of this workspace root (a path; '.' is this folder)."),
    ] = None,
    cursor: Annotated[
        str | None,
        typer.Option("--cursor", help="The next page of the server's hits (the note says it)."),
    ] = None,
    scope: ScopeOption = "mine",
    mine: MineOption = False,
    as_json: JsonOption = False,
) -> None:
    """Search your threads on the server (this machine's files when it cannot be reached;
    --scope visible: every thread you may read, with its owner)."""
    from loomsync.core.textsearch.commits import NOTHING_TO_SEARCH, searchable
    from loomsync.sync.onlinesearch import local_search

    scope = scopes.chosen(scope, mine)
    workspace = workspaces.normalised(workspace)
    if local and scope == "visible":
        raise typer.BadParameter(messages.VISIBLE_NOT_LOCAL, param_hint="'--scope'")
    if local and cursor is not None:
        raise typer.BadParameter(messages.CURSOR_NOT_LOCAL, param_hint="'--cursor'")
    if not searchable(query, syntax):
        errors.print(Text(NOTHING_TO_SEARCH, style="yellow"))
        if as_json:
            render.print_json(console, SearchResults().model_dump(mode="json"))
        return
    with _store() as store:
        if local:
            results = local_search(
                store.local, query, limit=limit, syntax=syntax, workspace=workspace
            )
        else:
            if scope == "visible":
                scopes.require_login(store, scope)
            results = store.search(
                query, limit=limit, syntax=syntax, workspace=workspace, scope=scope, cursor=cursor
            )
        results = shown.results(store.local.redaction, results)  # a server may hold them raw
        server_url = store.client.server_url if store.client is not None else None
        short = _short_ids(results, ids.local_ids(store.local)) if console.is_terminal else None
    _warn(unencodable_warnings(hit.thread for hit in results.hits))  # issue 27 item 4
    if as_json:
        render.print_json(console, results.model_dump(mode="json"))
        if results.token_refused:
            raise typer.Exit(exits.ExitCode.LOGIN)
        return
    _warn(results.skipped)
    if results.token_refused:
        refused = messages.token_refused(server_url)
        line = f"{refused}; searched this machine's threads instead."
        errors.print(Text.assemble(("error:", "red"), " ", printable(line)))
    elif results.fallback_reason:
        reason = printable(results.fallback_reason)
        errors.print(Text(f"{reason}; searched this machine's threads instead.", style="yellow"))
    console.print(printable(headline(results, query)))
    if not results.hits and workspace is not None:
        console.print(printable(messages.no_hits_in_workspace(workspace)))
    if results.hits:
        online = results.source == "server"
        console.print(
            render.search_hits(
                results.hits,
                mark_local=online,
                owners=scope == "visible",
                width=console.width if console.is_terminal else None,
                short=short,
            )
        )
    if results.next_cursor is not None and results.source == "server":
        errors.hint(Text(printable(messages.more_hits(results.next_cursor, limit))))
    if results.token_refused:
        raise typer.Exit(exits.ExitCode.LOGIN)


def _short_ids(results: SearchResults, local: list[str]) -> dict[str, str]:
    """The short ids of the hits this machine holds (a server-only thread keeps its whole
    id: only a local one resolves from a prefix), as ``list`` shows them."""
    here = set(local)
    return ids.abbreviations((h.thread.id for h in results.hits if h.thread.id in here), local)


__all__ = ["headline", "search"]
