"""``loomsync status [--json]``: who am I, and is it working? (issue 16 item 5; docs/client.md).
Registered on the one typer app of :mod:`loomsync.cli.main`.

It says the server URL and whether it answers (and its version), the user and organization
**from the token** (read, not verified: only the server can verify it, and its answer is
shown too), when the token expires, the sync queue's pending and failed counts (the same
reconcile and count as ``loomsync sync``: :mod:`loomsync.sync.counts`)
and the local store's folder, size and thread count.

Exit codes (:mod:`loomsync.cli.exits`' table; a script's ``loomsync status && …`` means
"ready to sync"; every case still prints the whole report):

- 0 (:data:`READY`): logged in, the server answers and accepts the token;
- 3 (:data:`NEEDS_LOGIN`): not logged in, the token expired, or the server refused it: the
  next step is ``loomsync login``;
- 4 (:data:`UNREACHABLE`): logged in with an unexpired token, but the server cannot be reached
  (changes are kept here and sent later).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer
from rich.filesize import decimal
from rich.text import Text

from loomsync.cli import messages, render
from loomsync.cli.exits import ExitCode
from loomsync.cli.main import JsonOption, _store, app, console, errors
from loomsync.cli.sync import _say
from loomsync.cli.tokens import TokenFacts
from loomsync.config import default_paths, load_config
from loomsync.terminal import printable

if TYPE_CHECKING:  # the HTTP client loads when the command runs (tests/client/test_startup.py)
    from loomsync.http.probe import ServerCheck
    from loomsync.sync.counts import QueueCounts

READY = ExitCode.OK
NEEDS_LOGIN = ExitCode.LOGIN
UNREACHABLE = ExitCode.UNREACHABLE
#: Seconds each request of the check may take (it is not retried).
CHECK_TIMEOUT = 5.0

State = Literal["ready", "not_logged_in", "token_expired", "token_refused", "unreachable"]
_EXIT: dict[State, ExitCode] = {
    "ready": READY,
    "not_logged_in": NEEDS_LOGIN,
    "token_expired": NEEDS_LOGIN,
    "token_refused": NEEDS_LOGIN,
    "unreachable": UNREACHABLE,
}


def relative(moment: datetime, now: datetime) -> str:
    """``in 29 days``, ``3 days ago``, ``in 5 hours``, ``2 minutes ago``, ``now``: the
    distance from ``now`` in its largest whole unit (days, hours, minutes, seconds)."""
    seconds = int((moment - now).total_seconds())
    size = abs(seconds)
    for unit, length in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if size >= length:
            count = size // length
            amount = f"{count} {unit}{'s' if count != 1 else ''}"
            return f"in {amount}" if seconds > 0 else f"{amount} ago"
    return "now"


@dataclass(frozen=True)
class StoreFacts:
    """The local store: its folder, the bytes of every file in it (threads and their indexes),
    and how many threads it holds (archived and private ones included)."""

    path: Path
    size: int
    threads: int


def folder_size(folder: Path) -> int:
    """Bytes of the regular files under ``folder`` (0 when it does not exist yet); a file
    removed while counting is skipped."""
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            continue
    return total


@dataclass(frozen=True)
class Status:
    """What ``loomsync status`` found (see the module docstring for :attr:`state`)."""

    server_url: str | None
    token: TokenFacts | None
    server: ServerCheck | None
    queue: QueueCounts
    store: StoreFacts
    now: datetime

    @property
    def state(self) -> State:
        """The verdict, the first that holds: not logged in, token expired (by its ``exp``),
        server unreachable, token refused (401), ready."""
        if self.token is None or self.server_url is None:
            return "not_logged_in"
        if self.token.expired(self.now):
            return "token_expired"
        if self.server is None or not self.server.reachable:
            return "unreachable"
        if self.server.token == "refused":
            return "token_refused"
        return "ready"

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` form: ``{state, exit_code, server: {url, reachable, version,
        detail}, token: null | {user, org, expires_at, issued_at, expired, verified: false,
        accepted}, queue: {pending, failed, waiting_for_login}, store: {path, bytes, threads}}`` (times RFC 3339
        UTC; ``reachable``/``accepted`` null when not asked)."""
        server = self.server
        token = self.token
        return {
            "state": self.state,
            "exit_code": _EXIT[self.state],
            "server": {
                "url": self.server_url,
                "reachable": server.reachable if server else None,
                "version": server.version if server else None,
                "detail": server.detail if server else None,
            },
            "token": None
            if token is None
            else {
                "user": token.user,
                "org": token.org,
                "expires_at": _iso(token.expires_at),
                "issued_at": _iso(token.issued_at),
                "expired": token.expired(self.now),
                "verified": False,
                "accepted": None
                if server is None or server.token == "unchecked"
                else server.token == "accepted",
            },
            "queue": self.queue.as_dict(),
            "store": {
                "path": str(self.store.path),
                "bytes": self.store.size,
                "threads": self.store.threads,
            },
        }


def _iso(moment: datetime | None) -> str | None:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None


def _server_line(found: Status) -> Text:
    if found.server_url is None:
        return Text("none configured")
    line = Text(printable(found.server_url))
    server = found.server
    if server is None:
        return line
    if not server.reachable:
        reason = printable(server.detail or "no answer")
        return line.append(f": not reachable ({reason})", style="red")
    line.append(": reachable", style="green")
    line.append(f", version {printable(server.version)}" if server.version else ", version unknown")
    return line


def _user_line(token: TokenFacts) -> Text:
    if not token.readable:
        return Text(messages.STATUS_NOT_A_TOKEN, style="red")
    user = printable(token.user or "(no user in the token)")
    org = f", organization {printable(token.org)}" if token.org else ", no organization"
    return Text(f"{user}{org} (from the token)")


def _token_line(found: Status) -> Text:
    token = found.token
    assert token is not None
    if not token.readable:
        line = Text("not a token: no expiry to read")
    elif token.expires_at is None:
        line = Text("never expires (no exp claim)")
    elif token.expired(found.now):
        when = render.when(token.expires_at)
        line = Text(f"expired {when} UTC ({relative(token.expires_at, found.now)})", style="red")
    else:
        when = render.when(token.expires_at)
        line = Text(f"expires {when} UTC ({relative(token.expires_at, found.now)})")
    server = found.server
    if server is not None and server.token == "accepted":
        line.append("; the server accepts it", style="green")
    elif server is not None and server.token == "refused":
        reason = printable(server.detail or "unauthorized")
        line.append(f"; the server refused it ({reason})", style="red")
    return line


def _verdict(found: Status) -> Text:
    state = found.state
    if state == "ready":
        return Text(messages.status_ready(found.queue.failed), style="green")
    if state == "not_logged_in":
        return Text(messages.status_not_logged_in(found.server_url), style="yellow")
    server = found.server_url or "URL"
    if state == "token_expired":
        return Text(messages.status_token_expired(server), style="red")
    if state == "token_refused":
        detail = found.server.detail if found.server else None
        return Text(messages.status_token_refused(server, detail), style="red")
    return Text(messages.status_unreachable(server, found.queue.total), style="yellow")


def _labelled(label: str, value: Text) -> Text:
    return Text.assemble((f"{label + ':':<8}", "bold"), value)


def report(found: Status) -> list[Text]:
    """The report, one line each (piped, a line stays one line: ``grep '^Queue:'``): server,
    user, token, queue, store, then the verdict."""
    lines = [_labelled("Server", _server_line(found))]
    if found.token is not None:
        lines += [
            _labelled("User", _user_line(found.token)),
            _labelled("Token", _token_line(found)),
        ]
    else:
        lines.append(_labelled("User", Text("not logged in")))
    counts = found.queue
    waiting = counts.waiting_for_login
    login = f" ({waiting} waiting for a new login)" if waiting else ""
    queue = f"{counts.pending} pending{login}, {counts.failed} failed"
    hint = " (`loomsync sync --status` lists them)" if counts.total else ""
    lines.append(_labelled("Queue", Text(queue + hint, style="red" if counts.failed else "")))
    store = found.store
    count = f"{store.threads} thread{'s' if store.threads != 1 else ''}"
    # the exact bytes are in --json: the line fits 80 columns with a usual HOME (issue 16)
    size = f"{decimal(store.size)} on disk"
    lines.append(_labelled("Store", Text(f"{printable(str(store.path))}: {count}, {size}")))
    return [*lines, _verdict(found)]


@app.command()
def status(as_json: JsonOption = False) -> None:
    """Who you are, whether the server answers, what waits to sync, and the local store
    (exit code 0 ready, 3 log in again, 4 server unreachable)."""
    from loomsync.http.probe import check

    paths = default_paths()
    config = load_config(paths)
    token = config.token.get_secret_value() if config.token else None
    with _store() as store:
        found_requeue = store.rescan()  # as `sync --status` does: the counts are the same
        counts = store.counts()
        threads = len(store.local.list(archived="any"))
        root = store.local.root
    server = None
    if config.server_url:
        server = check(config.server_url, token, timeout=min(config.timeout, CHECK_TIMEOUT))
    found = Status(
        config.server_url,
        TokenFacts.of(token) if token else None,
        server,
        counts,
        StoreFacts(root, folder_size(root), threads),
        datetime.now(UTC),
    )
    if (loose := messages.token_file_loose(paths.token_file)) is not None:
        errors.print(Text.assemble(("warning:", "yellow"), " ", printable(loose)))
    if as_json:
        render.print_json(console, found.as_dict() | {"requeue": found_requeue.as_dict()})
    else:
        _say(found_requeue)
        render.print_lines(console, report(found))
    raise typer.Exit(_EXIT[found.state])


__all__ = [
    "NEEDS_LOGIN",
    "READY",
    "UNREACHABLE",
    "Status",
    "StoreFacts",
    "folder_size",
    "relative",
    "report",
    "status",
]
