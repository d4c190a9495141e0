"""``loomsync open [ID]``: sign the browser in and open the thread lists, or one thread
(issue 13, item 3). Registered on the one typer app of :mod:`loomsync.cli.main`.

It asks the server for a one-time sign-in link (:func:`loomsync.http.weblogin.login_link`, with the
token ``loomsync login`` stored), prints it, and opens it with :mod:`webbrowser` unless
``--print`` is given (or no browser can be started: then the printed link is the way).
"""

from __future__ import annotations

import webbrowser
from typing import TYPE_CHECKING, Annotated

import typer

from loomsync.cli import messages
from loomsync.cli.main import app, console, errors
from loomsync.config import default_paths, load_config
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import format_utc_minute
from loomsync.errors import BadArgumentError, GoneError, NotLoggedInError, RemoteNotFoundError
from loomsync.store import shortids
from loomsync.terminal import printable

if TYPE_CHECKING:  # the HTTP client is imported by the command that uses it
    from loomsync.http.client import ThreadSyncClient


def must_exist(client: ThreadSyncClient, thread_id: str) -> None:
    """``HEAD /api/threads/{id}`` with the client's token (no body crosses the wire): stop
    before a sign-in link is made for a page that would only say 404 or 410.

    Raises:
        RemoteNotFoundError: no such thread on the server, or not one this token may read.
        GoneError: the thread was deleted.
    """
    try:
        client.request("HEAD", f"/api/threads/{thread_id}", thread_id=thread_id)
    except GoneError as exc:
        message = f"{thread_id} was deleted on the server: no page to open"
        raise GoneError(thread_id, message, status=exc.status, url=exc.url) from None
    except RemoteNotFoundError as exc:
        message = (
            f"{thread_id} is not on the server {client.server_url}, or is not yours to read: "
            "no page to open"
        )
        raise RemoteNotFoundError(thread_id, message, status=exc.status, url=exc.url) from None


@app.command("open")
def open_command(
    thread: Annotated[
        str | None,
        typer.Argument(
            help="Thread id (T-… or its first 4+ hex digits); default: the thread lists.",
            show_default=False,
            metavar="ID",
        ),
    ] = None,
    print_only: Annotated[
        bool, typer.Option("--print", help="Only print the sign-in link; open no browser.")
    ] = False,
) -> None:
    """Open the server's pages in a browser, signed in as you (a one-time link, no token pasted)."""
    from loomsync.http.client import ThreadSyncClient
    from loomsync.http.weblogin import login_link
    from loomsync.store.local import LocalThreadStore

    paths = default_paths()
    config = load_config(paths)
    if not config.logged_in:
        raise NotLoggedInError(messages.NOT_LOGGED_IN)
    with ThreadSyncClient.from_config(config) as client:
        try:
            if thread is not None:
                thread = shortids.resolve(LocalThreadStore(paths.threads_dir), thread)
                must_exist(client, str(ThreadId.parse(thread)))
            link = login_link(client, thread)
        except InvalidThreadId as exc:  # a bad value, as `show 5`: exit code 2
            raise BadArgumentError(f"{thread!r} is not a thread id: {exc}") from None
    console.print(printable(link.url), soft_wrap=True)
    until = format_utc_minute(link.expires_at)
    errors.print(printable(f"The link works once, until {until} UTC."))
    if print_only:
        return
    if not webbrowser.open(link.url):
        errors.print("No browser could be started here: open the link above yourself.")
