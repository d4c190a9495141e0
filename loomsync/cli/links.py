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
    errors.print(
        printable(
            f"Anyone with this link reads {thread_id}, whatever its visibility, {until}. "
            f"Revoke it: loomsync share {thread_id} --revoke {link.id}"
        )
    )


def _uses(link: ShareLink) -> str:
    if not link.use_count:
        return "never used"
    times = "once" if link.use_count == 1 else f"{link.use_count} times"
    return f"used {times}, last {render.when(link.last_used_at)}"


def link_line(link: ShareLink) -> str:
    """``<id>  live  expires 2026-12-08 14:53  used 3 times, last 2026-12-01 15:00  created
    2026-12-01 14:53 by alice`` (printable: the creator's id comes from the server)."""
    if link.state == "revoked":
        ends = f"revoked {render.when(link.revoked_at)}"
    elif link.expires_at is None:
        ends = "never expires"
    else:
        verb = "expired" if link.state == "expired" else "expires"
        ends = f"{verb} {render.when(link.expires_at)}"
    made = f"created {render.when(link.created_at)} by {link.created_by or '?'}"
    return printable(f"{link.id}  {link.state:<7}  {ends}  {_uses(link)}  {made}")


def show(
    client: ThreadSyncClient, thread_id: str, *, as_json: bool, console: TerminalConsole
) -> None:
    """Print the thread's links, newest first (one line each, or ``--json``)."""
    links = client.list_share_links(thread_id)
    if as_json:
        render.print_json(console, {"thread_id": thread_id, "links": list(map(_link_dict, links))})
        return
    if not links:
        console.print(printable(f"{thread_id} has no share links."))
        return
    live = sum(link.state == "live" for link in links)
    console.print(printable(f"{len(links)} share link(s) of {thread_id}, {live} live:"))
    for link in links:
        console.print(link_line(link))


def revoke(
    client: ThreadSyncClient, thread_id: str, link_id: str, *, console: TerminalConsole
) -> None:
    """Revoke one link and say so."""
    client.revoke_share_link(thread_id, link_id)
    console.print(
        printable(f"Revoked share link {link_id} of {thread_id}; it answers 410 from now on.")
    )


__all__ = ["create", "link_line", "parse_expires", "refuse_private", "revoke", "show"]
