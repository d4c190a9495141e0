"""How the CLI shows things: rich tables and transcripts.

Thread text is never read as markup, and every field shown passes through
:func:`loomsync.terminal.printable`: one-line fields (titles, cells, tags, errors) become one
line, message bodies keep their newlines; either way nothing in them can act on the terminal.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.rule import Rule
from rich.text import Text

from loomsync.cli.tables import Column, cut, fitted, tsv
from loomsync.core.document import codec, jsontext
from loomsync.core.document.model import Message, Thread, format_utc_minute
from loomsync.store.summary import SearchHit, SyncOutcome, ThreadSummary
from loomsync.terminal import TerminalConsole, clip, printable

if TYPE_CHECKING:  # types only: `loomsync list` need not import the exporter or git
    from loomsync.resume import Resumed
    from loomsync.sync.counts import QueueCounts
    from loomsync.sync.queue import PendingEntry

R = TypeVar("R")
TOOL_OUTPUT_LINES = 20  # lines of tool output shown unless --full
ARGUMENT_CHARS = 200  # characters of tool-call arguments shown unless --full
_BOLD = re.compile(r"<b>(.*?)</b>", re.S)
_LINE_BREAK = re.compile(r"\r\n|[\n\r\t\u2028\u2029]")


def when(value: datetime | None) -> str:
    """``2026-01-02 16:39`` (UTC, to the minute), or ``-``.

    See :func:`loomsync.core.document.model.format_utc_minute` (four-digit year: ``strftime`` writes year 1
    as ``1``).
    """
    return format_utc_minute(value) if value else "-"


def thread_columns(
    sync: dict[str, str] | None = None,
    short: dict[str, str] | None = None,
    *,
    owners: bool = False,
) -> list[Column[ThreadSummary]]:
    """The columns of ``loomsync list``: ID, TITLE, MSGS, LAST ACTIVITY (UTC), BRANCH, then
    SYNC (``sync``: a state per id) or VISIBILITY (the server's listing). ``short``: the id
    shown at a terminal (:func:`loomsync.store.shortids.abbreviations`); piped, the whole id.
    ``owners`` (``--scope visible``, issue 16 item 6): an OWNER column after the ID, the
    server's ``owner_id`` (the owner's login name, the ``sub`` of their token; API.md's
    ThreadSummary has no display name), at least 10 cells, cut with ``…`` past them. At a
    terminal too narrow for every column, BRANCH, then MSGS, then LAST ACTIVITY are left out
    (a ``--server`` listing's whole ids at 80 columns), so the state stays whole.

    One :class:`~loomsync.cli.tables.Column` per column: adding one is one line here."""
    shown = short or {}

    def state(row: ThreadSummary) -> str:
        return sync.get(row.id, "-") if sync is not None else row.visibility

    owner = Column[ThreadSummary]("OWNER", lambda r: r.owner_id or "-", shrink=True, min_width=10)
    return [
        Column("ID", lambda r: r.id, terminal=lambda r: shown.get(r.id, r.id), style="cyan"),
        *([owner] if owners else []),
        Column("TITLE", lambda r: r.title or "(untitled)", shrink=True, min_width=10, weight=3),
        Column("MSGS", lambda r: str(r.message_count), justify="right", drop=1),
        # the whole ids of a server listing leave no room at 80 columns: left out after MSGS
        # (only when needed: a local list's short ids keep it)
        Column("LAST ACTIVITY", lambda r: when(r.last_activity_at), drop=1),
        Column("BRANCH", lambda r: r.git_branch or "-", shrink=True, min_width=6, drop=2),
        Column(
            "SYNC" if sync is not None else "VISIBILITY",
            state,
            style=lambda r: _STATE_STYLE.get(state(r), ""),
        ),
    ]


_STATE_STYLE = {"failed": "red", "pending": "yellow"}


def print_table(console: TerminalConsole, columns: Sequence[Column[R]], rows: Sequence[R]) -> None:
    """The one way a table is printed (issue 16 item 1, :mod:`loomsync.cli.tables`): at a
    terminal, fitted to its width (never wrapped, long cells cut with ``…``); piped, a header
    line and one tab-separated line per row, nothing cut, no colour."""
    if console.is_terminal:
        console.print(fitted(columns, rows, console.width), soft_wrap=True)
    else:
        console.write_text(tsv(columns, rows))


def sync_states(
    rows: Sequence[ThreadSummary],
    entries: Sequence[PendingEntry],
    synced: Callable[[str], bool],
    *,
    logged_in: bool = True,
    dropped: Callable[[str], bool] = lambda _: False,
) -> dict[str, str]:
    """Per thread: ``private``, ``failed``, ``pending``, ``not sent`` (its failed change was
    dropped, ``loomsync sync --drop``, and it was not saved since, as ``dropped(id)`` says:
    this copy is here only, whatever the server holds; newcomer finding 4), ``synced`` (the
    server has it, as ``synced(id)`` says) or ``local`` (never sent: not logged in, and the
    server never had it, even while its save waits in the queue for a login)."""
    states: dict[str, str] = {}
    for row in rows:
        mine = [e for e in entries if e.thread_id == row.id]
        if row.is_private:
            states[row.id] = "private"
        elif any(e.failed for e in mine):
            states[row.id] = "failed"
        elif mine:
            states[row.id] = "pending" if logged_in or synced(row.id) else "local"
        elif dropped(row.id):
            states[row.id] = "not sent"
        else:
            states[row.id] = "synced" if synced(row.id) else "local"
    return states


def _snippet_part(escaped: str) -> str:
    """One HTML-escaped piece of a snippet as one printable line (a newline is a space)."""
    return printable(_LINE_BREAK.sub(" ", html.unescape(escaped)))


def snippet_text(snippet: str) -> Text:
    """A server or local snippet (``<b>`` marks matches, the rest HTML-escaped) as one line of
    rich Text. Made printable after unescaping, so ``&#27;`` cannot smuggle an ESC in."""
    text = Text()
    position = 0
    for match in _BOLD.finditer(snippet):
        text.append(_snippet_part(snippet[position : match.start()]))
        text.append(_snippet_part(match.group(1)), style="bold yellow")
        position = match.end()
    text.append(_snippet_part(snippet[position:]))
    return text


def search_hits(
    hits: Sequence[SearchHit],
    *,
    mark_local: bool = False,
    owners: bool = False,
    width: int | None = None,
    short: dict[str, str] | None = None,
) -> Group:
    """Each hit: id, (with ``owners``: ``by OWNER``, the thread's ``owner_id``, or ``by you``
    for a thread only this machine holds), title, score (with ``mark_local``, ``only on this
    machine`` after a hit whose ``origin`` is ``local``); then its snippet, indented.

    ``width``: a terminal's width (None: piped, nothing cut). At a terminal each line fits it
    (issue 16 item 1, "fix the class"): the id is the short one of ``short``
    (:func:`loomsync.store.shortids.abbreviations`, this machine's threads) or whole, the
    title is cut with ``…`` to the room the other parts leave, the snippet line ends in ``…``
    past the width."""
    parts: list[RenderableType] = []
    for hit in hits:
        ident = (short or {}).get(hit.thread.id, hit.thread.id) if width else hit.thread.id
        by = "  by " + printable(hit.thread.owner_id or "you") if owners else ""
        score = f"  score {hit.score:.2f}"
        local = "  only on this machine" if mark_local and hit.origin == "local" else ""
        title = hit.thread.title or "(untitled)"
        if width:
            room = width - cell_len(ident + by + score + local) - 2
            shown_title = cut(title, max(room, 1))
        else:
            shown_title = printable(title)
        head = Text(no_wrap=bool(width), overflow="ellipsis" if width else None)
        head.append(ident, style="cyan")
        head.append(by, style="magenta")
        head.append("  " + shown_title, style="bold")
        head.append(score, style="dim")
        head.append(local, style="yellow")
        parts.append(head)
        if hit.snippet:
            where = f"message {hit.message_index}: " if hit.message_index is not None else ""
            line = Text("    " + where, style="dim")
            line.append_text(snippet_text(hit.snippet))
            if width:
                line.no_wrap, line.overflow = True, "ellipsis"
                line.truncate(width, overflow="ellipsis")
            parts.append(line)
    return Group(*parts)


def _arguments(arguments: object, full: bool) -> str:
    text = (
        arguments
        if isinstance(arguments, str)
        else jsontext.dumps(arguments, separators=(", ", ": "))
    )
    return text if full else clip(text, ARGUMENT_CHARS)


def _message(index: int, message: Message, full: bool) -> list[RenderableType]:
    label = f"#{index} " + printable(
        message.role + (f" ({message.tool_name})" if message.tool_name else "")
    )
    style = {"user": "green", "assistant": "blue", "tool": "magenta"}.get(message.role, "white")
    parts: list[RenderableType] = [
        Rule(Text(label, style=f"bold {style}"), align="left", style=style)
    ]
    content = printable(message.content, multiline=True)
    if message.role == "tool" and not full:
        lines = content.splitlines()
        if len(lines) > TOOL_OUTPUT_LINES:
            hidden = len(lines) - TOOL_OUTPUT_LINES
            content = "\n".join(lines[:TOOL_OUTPUT_LINES]) + f"\n… {hidden} more lines (--full)"
    if content:
        parts.append(Text(content))
    for call in message.tool_calls or []:
        line = Text("→ ", style="dim")
        line.append(printable(call.tool_name or "?"), style="bold")
        line.append(" " + printable(_arguments(call.arguments_json, full)), style="dim")
        parts.append(line)
    return parts


def transcript(
    thread: Thread, *, full: bool = False, first: int = 0, last: int | None = None
) -> Group:
    """The thread as a readable transcript: title, facts, then each message under a rule
    labelled ``#N role``, N being API.md's 0-based ``message_index`` (search's ``message N``).

    ``first``/``last``: only messages ``first`` to ``last`` (both included; None: to the end),
    said in a ``Messages: 3-5 of 12`` fact in place of the count; the caller checks the range
    (:func:`loomsync.cli.messages.no_such_messages`)."""
    parts: list[RenderableType] = [
        Text(printable(thread.metadata.title or "(untitled)"), style="bold")
    ]
    from loomsync.export import header_facts

    count = len(thread.messages)
    end = count - 1 if last is None else last
    facts = list(header_facts(thread))
    if first or end != count - 1:  # one Messages line: the range replaces the count (finding 12)
        facts = [fact for fact in facts if fact[0] != "Messages"]
        facts.append(("Messages", f"{first}-{end} of {count}"))
    for label, value in facts:
        line = Text(f"{label}: ", style="dim")
        line.append(printable(value))
        parts.append(line)
    for index in range(first, end + 1):
        parts.extend(_message(index, thread.messages[index], full))
    return Group(*parts)


def queue_columns(short: dict[str, str] | None = None) -> list[Column[PendingEntry]]:
    """The columns of ``loomsync sync --status``: THREAD, OP, STATE, RETRIES, SINCE (UTC), LAST
    ERROR (cut with ``…`` at a terminal, never left out). Below 80 columns SINCE, then RETRIES
    are left out, so THREAD, OP and STATE stay whole. ``short``: the thread id shown at a
    terminal."""
    return [
        Column(
            "THREAD",
            lambda e: e.thread_id,
            terminal=(lambda e: (short or {}).get(e.thread_id, e.thread_id)),
            style="cyan",
        ),
        Column("OP", lambda e: e.op),
        Column(
            "STATE",
            lambda e: "failed" if e.failed else "pending",
            style=lambda e: _STATE_STYLE["failed" if e.failed else "pending"],
        ),
        Column("RETRIES", lambda e: str(e.retry_count), justify="right", drop=1),
        Column("SINCE", lambda e: when(e.failed_at if e.failed else e.enqueued_at), drop=2),
        Column("LAST ERROR", lambda e: e.last_error or "-", shrink=True, min_width=10),
    ]


def queue_status(
    console: TerminalConsole,
    entries: Sequence[PendingEntry],
    short: dict[str, str] | None = None,
    not_sent: Sequence[str] = (),
) -> None:
    """``loomsync sync --status``: ``N pending, M failed.`` (the counts of
    :func:`loomsync.sync.counts.queue_counts`; ``(K waiting for a new login)`` when the server
    refused the token) and the queue table (:func:`print_table`); then the threads of
    ``not_sent`` (:func:`loomsync.sync.dropped.not_sent_threads`: a dropped change, saved here
    only; newcomer finding 4). "every change is on the server" only when both are empty."""
    from loomsync.cli import messages
    from loomsync.sync.counts import queue_counts

    if not entries:
        if not_sent:
            console.print(Text(printable(messages.dropped_not_sent(not_sent, queued=False))))
        else:
            console.print(Text("Nothing to sync: every change is on the server."))
        return
    counts = queue_counts(entries)
    waiting = (
        f" ({counts.waiting_for_login} waiting for a new login)" if counts.waiting_for_login else ""
    )
    console.print(Text(f"{counts.pending} pending{waiting}, {counts.failed} failed."))
    print_table(console, queue_columns(short), entries)
    if not_sent:
        console.print(Text(printable(messages.dropped_not_sent(not_sent, queued=True))))


#: The most waiting entries ``loomsync sync`` names one per line (then ``… and K more``).
WAITING_SHOWN = 10


def sync_summary(
    outcomes: Sequence[SyncOutcome],
    counts: QueueCounts,
    failed: Sequence[PendingEntry] = (),
    waiting: Sequence[PendingEntry] = (),
) -> list[RenderableType]:
    """``loomsync sync``: what this run did (sent, pulled, forked), what the queue holds after
    it (``failed`` and ``still pending``: :class:`~loomsync.sync.counts.QueueCounts`, so a
    failed entry from an earlier run is counted too: issue 16 item 2), one line per notable
    outcome, one per entry of ``failed`` this run did not already report, and one per entry
    of ``waiting`` (the queue's pending entries) it did not report either: a run stops at the
    first that cannot be sent, so the others are named too (newcomer finding 8), at most
    :data:`WAITING_SHOWN` of them, then ``… and K more``."""
    count: dict[str, int] = {}
    for outcome in outcomes:
        count[outcome.status] = count.get(outcome.status, 0) + 1
    sent = count.get("synced", 0) + count.get("up_to_date", 0) + count.get("merged", 0)
    forked = len([o for o in outcomes if o.fork_id is not None])  # sent or not (issue 27)
    head = Text(
        f"Sent {sent}, pulled {count.get('pulled', 0)}, failed {counts.failed}, "
        f"forked {forked}; {counts.pending} still pending."
    )
    stopped = any(o.unreachable or o.status == "token_refused" for o in outcomes)
    notable = ("forked", "merged", "gone", "failed", "pending", "skipped", "token_refused")
    lines: list[RenderableType] = [head]
    lines += [outcome_line(o) for o in outcomes if o.status in notable]
    said = {(o.thread_id, o.op) for o in outcomes if o.status in ("failed", "gone")}
    for entry in failed:
        if (entry.thread_id, entry.op) not in said:
            op = "" if entry.op == "save" else f" ({entry.op})"
            line = Text(entry.thread_id + " ", style="cyan")
            line.append("failed" + op, style="bold red")
            line.append(": " + printable(entry.last_error or "refused by the server"))
            lines.append(line)
    reported = {o.thread_id for o in outcomes if o.status in notable}
    reported |= {o.fork_id for o in outcomes if o.fork_id is not None}  # said with its source
    left = [e for e in waiting if not e.failed and e.thread_id not in reported]
    shown = WAITING_SHOWN - len([o for o in outcomes if o.status in ("pending", "token_refused")])
    shown = max(shown, 1) if left else 0
    for entry in left[:shown]:
        line = Text(entry.thread_id + " ", style="cyan")
        if entry.waiting_for_login:
            line.append("waiting for a new login", style="bold red")
        else:
            op = "" if entry.op == "save" else f" ({entry.op})"
            line.append("pending" + op, style="bold yellow")
            if stopped:
                line.append(": not tried, the run stopped at the first that could not be sent")
            else:  # queued while the run went on (another process), or its sync was busy
                line.append(": not sent by this run; `loomsync sync` again sends it")
        lines.append(line)
    if len(left) > shown:
        lines.append(Text(f"… and {len(left) - shown} more (`loomsync sync --status` lists them)."))
    return lines


def print_lines(console: Console, parts: Sequence[RenderableType]) -> None:
    """Print renderables one after the other."""
    for part in parts:
        console.print(part)


def outcome_line(outcome: SyncOutcome) -> Text:
    """One line for a notable sync outcome (forked, merged, gone, failed, pending, skipped)."""
    style = {
        "forked": "yellow",
        "merged": "green",
        "gone": "yellow",
        "failed": "red",
        "pending": "yellow",
        "skipped": "yellow",
        "token_refused": "red",
    }.get(outcome.status, "green")
    line = Text(printable(outcome.thread_id) + " ", style="cyan")  # a skipped one is raw
    said = "waiting for a new login" if outcome.status == "token_refused" else outcome.status
    line.append(said, style=f"bold {style}")
    if outcome.detail:
        line.append(": " + printable(outcome.detail))
    return line


def resume_summary(resumed: Resumed) -> Text:
    """The "Resuming thread …" summary."""
    lines = [printable(line) for line in resumed.summary_lines()]
    text = Text(lines[0], style="bold")
    for line in lines[1:]:
        text.append("\n" + line)
    return text


def print_json(console: TerminalConsole, value: object) -> None:
    """Write JSON to the console's file as is (no markup, no wrapping; see
    :func:`loomsync.terminal.json_text` for the characters written as escapes)."""
    console.write_json(codec.dumps(value, pretty=True))


__all__ = [
    "outcome_line",
    "print_json",
    "print_lines",
    "print_table",
    "queue_columns",
    "queue_status",
    "resume_summary",
    "search_hits",
    "snippet_text",
    "sync_states",
    "sync_summary",
    "thread_columns",
    "transcript",
    "when",
]
