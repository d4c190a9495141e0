"""What ``loomsync share ID --link / --links / --revoke LINK_ID`` do and print (issue 13 item 1;
docs/client.md shows each). ``share`` (loomsync/cli/secrets.py) parses the options, refuses a
link to a thread that still holds credentials, and calls these.

stdout carries what a script wants (the URL, the listing, ``--json``); notes go to stderr.
"""

from __future__ import annotations

import re
from typing import Any

import typer

from loomsync.cli import render
from loomsync.cli.tables import Column
from loomsync.errors import ThreadNotFoundError
from loomsync.http.client import ThreadSyncClient
from loomsync.http.sharelinks import ShareLink
from loomsync.sync.syncing import SyncingThreadStore
from loomsync.terminal import TerminalConsole, printable

_DURATION = re.compile(r"(\d{1,100})([a-z]*)", re.ASCII | re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
#: The longest life the server gives a link (10 years).
MAX_EXPIRES_SECONDS = 3650 * 86400


_RANGE = (
    "a link lives from 1 second to 10 years (the maximum: 3650d, 521w or 315360000 seconds); "
    "leave --expires out for a link that lives until it is revoked"
)


def parse_expires(value: str) -> int:
    """``7d``, ``12h``, ``90m``, ``45s``, ``2w``, or a plain number of seconds (``3600``) →
    seconds, 1 second to 10 years (docs/client.md).

    Raises:
        typer.BadParameter: anything else; the message says which units there are, and the
            maximum when the lifetime is too long (``1y`` and ``1000000d`` included).
    """
    match = _DURATION.fullmatch(value.strip())
    if match is None:
        raise typer.BadParameter(
            "give a whole number of seconds, or one with a unit: s, m, h, d or w (e.g. 7d)",
            param_hint="'--expires'",
        )
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit == "y":
        raise typer.BadParameter(
            f"there is no year unit (y): give days (1y is 365d); {_RANGE}",
            param_hint="'--expires'",
        )
    if unit not in _UNITS:
        raise typer.BadParameter(
            f"unknown unit {unit[:20]!r}: use s, m, h, d or w, or none for seconds (e.g. 7d)",
            param_hint="'--expires'",
        )
    seconds = number * _UNITS[unit]
    if not 1 <= seconds <= MAX_EXPIRES_SECONDS:
        raise typer.BadParameter(_RANGE, param_hint="'--expires'")
    return seconds


def refuse_private(store: SyncingThreadStore, thread_id: str) -> None:
    """Stop (exit code 1, nothing sent) when this machine holds ``thread_id`` as a private
    session: no request may name it (API.md section 9, privacy invariant)."""
    try:
        local = store.local.load(thread_id)
    except ThreadNotFoundError:
        return
    if local.is_private:
        raise typer.BadParameter(
            f"{thread_id} is a private session: it never leaves this machine, so it has no "
            "share links",
            param_hint="ID",
        )


def _link_dict(link: ShareLink) -> dict[str, Any]:
    """The link as JSON: only the fields the server sent (a create's 201 has no state,
    created_by or use_count; the model's defaults for them are not facts to print)."""
    return link.model_dump(mode="json", include=set(link.model_fields_set))


def create(
    client: ThreadSyncClient,
    thread_id: str,
    expires_in: int | None,
    *,
    as_json: bool,
    console: TerminalConsole,
    errors: TerminalConsole,
) -> None:
    """Make a link living ``expires_in`` seconds (None: until revoked); print its URL on stdout
    (or the link as JSON) and what it opens on stderr."""
    link = client.create_share_link(thread_id, expires_in=expires_in)
    if as_json:
        render.print_json(console, _link_dict(link))
        return
    console.print(printable(link.url or ""))
    until = f"until {render.when(link.expires_at)} UTC" if link.expires_at else "until revoked"
    errors.hint(  # wrapped between words at a terminal: both ids stay whole to copy
        printable(
            f"Anyone with this link reads {thread_id}, whatever its visibility, {until}. "
            f"Revoke it: loomsync share {thread_id} --revoke {link.id}"
        )
    )


def _until(link: ShareLink) -> str:
    if link.state == "revoked":
        return render.when(link.revoked_at)
    return render.when(link.expires_at) if link.expires_at is not None else "never"


def link_columns() -> list[Column[ShareLink]]:
    """The columns of ``share ID --links`` (issue 16 item 1, the class: review item 2), as
    :func:`loomsync.cli.render.print_table` lays them out: ID (whole: ``--revoke`` takes it),
    STATE (``live``, ``expired``, ``revoked``), UNTIL (UTC: when it expires, expired or was
    revoked; ``never``), USES, LAST USED, CREATED, BY (the creator's id, from the server). At
    80 columns CREATED, then LAST USED are left out, and BY is cut with ``…``; narrower, BY,
    then UNTIL, then USES go too, so ID and STATE stay whole."""
    return [
        Column[ShareLink]("ID", lambda k: k.id, style="cyan"),
        Column("STATE", lambda k: k.state),
        Column("UNTIL", _until, drop=2),
        Column("USES", lambda k: str(k.use_count or 0), justify="right", drop=1),
        Column("LAST USED", lambda k: render.when(k.last_used_at), drop=4),
        Column("CREATED", lambda k: render.when(k.created_at), drop=5),
        Column("BY", lambda k: k.created_by or "-", shrink=True, min_width=6, drop=3),
    ]


def show(
    client: ThreadSyncClient,
    thread_id: str,
    *,
    as_json: bool,
    console: TerminalConsole,
    errors: TerminalConsole,
) -> None:
    """Print the thread's links, newest first, as a table (one line each: fitted at a
    terminal, tab-separated when piped), or ``--json``. The count line goes to stdout at a
    terminal, to ``errors`` (stderr) when piped, so a pipe holds only the rows."""
    links = client.list_share_links(thread_id)
    if as_json:
        render.print_json(console, {"thread_id": thread_id, "links": list(map(_link_dict, links))})
        return
    if not links:
        console.print(printable(f"{thread_id} has no share links."))
        return
    live = sum(link.state == "live" for link in links)
    said = printable(f"{len(links)} share link(s) of {thread_id}, {live} live:")
    (console if console.is_terminal else errors).print(said, soft_wrap=True)
    render.print_table(console, link_columns(), links)


def revoke(
    client: ThreadSyncClient, thread_id: str, link_id: str, *, console: TerminalConsole
) -> None:
    """Revoke one link and say so."""
    client.revoke_share_link(thread_id, link_id)
    console.print(
        printable(f"Revoked share link {link_id} of {thread_id}; it answers 410 from now on.")
    )


__all__ = ["create", "link_columns", "parse_expires", "refuse_private", "revoke", "show"]
