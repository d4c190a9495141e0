"""The findings of ``loomsync scan`` (and of a widening ``share`` refused for them) as a table
(issue 16 item 1, the class: review leftover b), through :func:`loomsync.cli.render.print_table`:
at a terminal one line per finding fitted to its width (:func:`finding_columns`: the thread's
short id and the kind whole), piped a header and one
tab-separated line per finding, nothing cut. The preview is
:attr:`loomsync.core.secrets.Located.preview` (the kind's public prefix and the length), never
the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from loomsync.cli import render
from loomsync.cli.tables import Column
from loomsync.store import shortids
from loomsync.terminal import TerminalConsole

if TYPE_CHECKING:
    from loomsync.core.secrets import Located
    from loomsync.store.local import LocalThreadStore

#: One finding: the thread's whole id and where in it a credential is.
Finding = tuple[str, "Located"]


def where(found: Located) -> str:
    """``message 3``, or ``metadata`` outside the messages."""
    return "metadata" if found.message_index is None else f"message {found.message_index}"


def json_path(found: Located) -> str:
    """The JSON path of the string holding it: ``conversation.messages.3.content``."""
    return ".".join(str(part) for part in found.path)


def finding_columns(short: dict[str, str] | None = None) -> list[Column[Finding]]:
    """THREAD (``short``: the id shown at a terminal; piped, whole), WHERE, PATH, KIND,
    PREVIEW (masked). At a terminal the thread and the kind stay whole; narrower than the
    whole table, PATH is cut with ``…``, then left out, then WHERE (at 40 columns), and the
    preview is cut last."""
    shown = short or {}
    return [
        Column[Finding]("THREAD", lambda f: f[0], terminal=lambda f: shown.get(f[0], f[0])),
        Column("WHERE", lambda f: where(f[1]), drop=1),
        Column("PATH", lambda f: json_path(f[1]), shrink=True, min_width=12, drop=2),
        Column("KIND", lambda f: f[1].kind, style="red"),
        Column("PREVIEW", lambda f: f[1].preview, shrink=True, min_width=15),
    ]


def print_findings(
    console: TerminalConsole, findings: Sequence[Finding], local: LocalThreadStore
) -> None:
    """The findings as a table on ``console``: short thread ids at a terminal (this
    machine's threads, :func:`loomsync.store.shortids.abbreviations`), whole ids piped."""
    short = None
    if console.is_terminal:
        short = shortids.abbreviations((tid for tid, _ in findings), shortids.local_ids(local))
    render.print_table(console, finding_columns(short), findings)


__all__ = ["Finding", "finding_columns", "json_path", "print_findings", "where"]
