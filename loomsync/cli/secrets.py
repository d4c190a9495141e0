"""``loomsync scan``, ``loomsync redact`` and ``loomsync share`` (issue 12, items 3 and 5;
share links, issue 13 item 1: loomsync/cli/links.py).

Registered on the one typer app of :mod:`loomsync.cli.main` (imported at its end). What they print
goes through the CLI's :class:`~loomsync.terminal.TerminalConsole` and
:func:`~loomsync.terminal.printable`; a finding is shown as its kind, thread, message index,
JSON path and masked preview (:attr:`loomsync.core.secrets.Located.preview`), never the value.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from loomsync.cli import exits, messages, render
from loomsync.cli.findings import print_findings
from loomsync.cli.main import (
    JsonOption,
    ThreadArg,
    _require_login,
    _store,
    _thread_id,
    app,
    console,
    errors,
)
from loomsync.cli.sharestate import sharing_line
from loomsync.cli.synced import finish, sync_now
from loomsync.core.document.model import Thread, Visibility
from loomsync.errors import ThreadNotFoundError
from loomsync.terminal import printable

if TYPE_CHECKING:  # types only; the share-link code (httpx) is imported by `share --link`
    from loomsync.core.secrets import Located
    from loomsync.sync.syncing import SyncingThreadStore

ThreadsArg = Annotated[
    list[str] | None,
    typer.Argument(
        help="Thread ids (T-… or their first 4+ hex digits); default: every thread here.",
        show_default=False,
    ),
]


def finding_dict(thread_id: str, found: Located) -> dict[str, Any]:
    """One finding as JSON: ``thread_id``, ``kind``, ``message_index``, ``path``, ``preview``."""
    return {
        "thread_id": thread_id,
        "kind": found.kind,
        "message_index": found.message_index,
        "path": list(found.path),
        "preview": found.preview,
    }


def _counts(found: Iterable[Located]) -> str:
    counts = Counter(item.kind for item in found)
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))


def _local_ids(store: SyncingThreadStore, ids: list[str] | None) -> list[str]:
    if ids:
        return [_thread_id(store, ref) for ref in ids]
    return [str(thread.id) for thread in store.local.iter_threads()]


@app.command()
def scan(threads: ThreadsArg = None, as_json: JsonOption = False) -> None:
    """Report credentials left in this machine's threads (all by default), never the values.

    Exit code 1 when anything is found, 0 when clean. `loomsync redact` replaces them.
    """
    report: list[tuple[str, list[Located]]] = []
    with _store() as store:
        for thread_id in _local_ids(store, threads):
            thread = store.local.load(thread_id)
            report.append((thread_id, store.local.redaction.scan(thread)))
    total = sum(len(found) for _, found in report)
    if as_json:
        findings = [finding_dict(tid, item) for tid, found in report for item in found]
        render.print_json(console, {"threads_scanned": len(report), "findings": findings})
    elif total:
        rows = [(thread_id, item) for thread_id, found in report for item in found]
        print_findings(console, rows, store.local)
        dirty = [tid for tid, found in report if found]
        # piped, stdout holds only the table (as ``share --links``)
        (console if console.is_terminal else errors).print(
            f"{total} credential(s) in {len(dirty)} of {len(report)} thread(s); "
            "`loomsync redact` replaces them.",
            soft_wrap=not console.is_terminal,
        )
    else:
        console.print(f"No credentials found in {len(report)} thread(s).")
    if total:
        raise typer.Exit(exits.ExitCode.FAILED)


@app.command()
def redact(threads: ThreadsArg = None) -> None:
    """Replace credentials in this machine's threads (all by default) and on the server.

    Each rewritten copy is queued and, when logged in, synced now: the server's copy is
    replaced in full. Prints what was replaced per thread.
    """
    lines: list[tuple[str, exits.ExitCode]] = []
    with _store() as store:
        for thread_id in _local_ids(store, threads):
            found = store.redact(thread_id)
            if not found:
                lines.append((f"{thread_id}: nothing to redact.", exits.ExitCode.OK))
                continue
            synced = sync_now(store, thread_id)
            line = f"{thread_id}: replaced {len(found)} ({_counts(found)}); {synced.note}."
            lines.append((line, synced.code))
        store.list(archived="any")  # the summary index: redacted summaries now
    for line, code in lines:
        if code is exits.ExitCode.OK:
            console.print(printable(line))
        else:
            errors.print(Text.assemble(("error:", "red"), " ", printable(line)))
    code = exits.worst(code for _, code in lines)
    if code is not exits.ExitCode.OK:
        raise typer.Exit(code)


def _scan_before_sharing(store: SyncingThreadStore, thread_id: str) -> list[Located]:
    """What ``share`` refuses on: credentials in the local copy, as it is on disk (or in the
    server's copy when this machine has none)."""
    try:
        thread: Thread = store.local.load(thread_id)
    except ThreadNotFoundError:
        if store.client is None:
            raise
        thread = store.client.get_thread(thread_id)
    return store.local.redaction.scan(thread)


def _upload_before_sharing(store: SyncingThreadStore, thread_id: str) -> str | None:
    """Push a pending save of the thread (the redacted copy) before widening who may read it
    (issue 12, item 5). None when no save is pending or it landed (synced, up to date); else
    why not and what to run."""
    if not store.queue.has(thread_id, "save"):
        return None
    retry = f"run `loomsync sync`, then `loomsync share {thread_id} …` again"
    if store.client is None:
        return (
            f"its redacted copy is not on the server yet and you are not logged in; log in, {retry}"
        )
    outcome = store.sync_thread(thread_id)
    if not store.queue.has(thread_id, "save"):
        return None
    if outcome.status == "token_refused":
        refused = messages.token_refused(store.client.server_url)
        return f"its redacted copy is not on the server yet: {refused}, then share again"
    detail = f" ({outcome.detail})" if outcome.detail else ""
    if outcome.status == "pending":
        return f"its redacted copy is not on the server yet: the server is unreachable{detail}; {retry}"
    return messages.share_upload_refused(thread_id, outcome.detail)


def _refusal_code(store: SyncingThreadStore, thread_id: str) -> exits.ExitCode:
    """The exit code when the redacted copy could not land (loomsync.cli.exits): LOGIN (not
    logged in, or the token refused), UNREACHABLE (still pending: the server away), else
    FAILED (the upload refused)."""
    entry = next((e for e in store.queue.entries() if e.thread_id == thread_id), None)
    if store.client is None or (entry is not None and entry.waiting_for_login):
        return exits.ExitCode.LOGIN
    if entry is not None and not entry.failed:
        return exits.ExitCode.UNREACHABLE
    return exits.ExitCode.FAILED


def _refuse_widening(store: SyncingThreadStore, thread: str) -> None:
    """Stop (exit code 1) before anyone more may read ``thread``: while a credential remains in
    it, or while its pending upload (the redacted copy) cannot reach the server now."""
    found = _scan_before_sharing(store, thread)
    if found:
        print_findings(errors, [(thread, item) for item in found], store.local)
        message = (
            f"{thread} still holds {len(found)} credential(s) ({_counts(found)}); "
            f"not shared. Run `loomsync redact {thread}` first."
        )
        errors.print(Text.assemble(("error:", "red"), " ", printable(message)))
        raise typer.Exit(exits.ExitCode.FAILED)
    refusal = _upload_before_sharing(store, thread)
    if refusal:
        message = f"{thread}: {refusal}; not shared."
        errors.print(Text.assemble(("error:", "red"), " ", printable(message)))
        raise typer.Exit(_refusal_code(store, thread))


def _share_links(
    thread: str,
    *,
    link: bool,
    expires: str | None,
    revoke: str | None,
    links: bool,
    as_json: bool,
) -> None:
    """``share --link / --links / --revoke``: the thread's share links (loomsync/cli/links.py)."""
    from loomsync.cli import links as linkscli
    from loomsync.http.sharelinks import LINK_ID

    choices = ["--link", "--links", "--revoke LINK_ID"]
    given = [
        name for name, on in zip(choices, [link, links, revoke is not None], strict=True) if on
    ]
    if len(given) > 1:  # the same words as sync's (newcomer finding 13)
        raise typer.BadParameter(messages.only_one_of([g.split()[0] for g in given], choices))
    if expires is not None and not link:
        raise typer.BadParameter("--expires goes with --link")
    if as_json and revoke is not None:
        raise typer.BadParameter("--json goes with --link or --links")
    if revoke is not None and not LINK_ID.fullmatch(revoke):
        raise typer.BadParameter(
            f"not a link id (a UUID, as --links shows): {revoke[:80]!r}", param_hint="'--revoke'"
        )
    lifetime = None if expires is None else linkscli.parse_expires(expires)
    with _store() as store:
        thread = _thread_id(store, thread)
        linkscli.refuse_private(store, thread)
        client = _require_login(store)
        if link:  # anyone holding the link reads the thread: the widening rules apply
            _refuse_widening(store, thread)
            linkscli.create(
                client, thread, lifetime, as_json=as_json, console=console, errors=errors
            )
        elif links:
            linkscli.show(client, thread, as_json=as_json, console=console, errors=errors)
        else:
            assert revoke is not None
            linkscli.revoke(client, thread, revoke, console=console)


@app.command()
def share(
    thread: ThreadArg,
    visibility: Annotated[
        Visibility | None, typer.Option(help="private | organization | public.")
    ] = None,
    support: Annotated[
        bool | None, typer.Option("--support/--no-support", help="Let the support role read it.")
    ] = None,
    link: Annotated[bool, typer.Option("--link", help="Make a share link; print its URL.")] = False,
    expires: Annotated[
        str | None,
        typer.Option(help="With --link: its lifetime (7d, 12h, 90m, 2w); default: until revoked."),
    ] = None,
    revoke: Annotated[
        str | None, typer.Option(help="Revoke the share link with this id.", metavar="LINK_ID")
    ] = None,
    links: Annotated[bool, typer.Option("--links", help="List the thread's share links.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Change who may read a thread on the server, or manage its share links; with neither,
    show how it is shared now (visibility, support, share links).

    Widening (organization, public, --support) first scans the thread and refuses, exit code 1,
    if a credential remains (run `loomsync redact ID` first), or if its pending upload (the
    redacted copy) cannot reach the server now (run `loomsync sync`, then share again).
    --link makes a URL that lets anyone holding it read the thread, whatever its visibility,
    until it expires or is revoked (--revoke LINK_ID; --links lists them): the same checks run
    first.
    """
    managing_links = link or links or revoke is not None or expires is not None
    if managing_links:
        if visibility is not None or support is not None:
            raise typer.BadParameter(
                "--visibility/--support and --link/--links/--revoke are separate commands"
            )
        _share_links(
            thread, link=link, expires=expires, revoke=revoke, links=links, as_json=as_json
        )
        return
    if as_json:
        raise typer.BadParameter("--json goes with --link or --links")
    if visibility is None and support is None:  # issue 30 item 8: how it is shared now
        from loomsync.cli import sharestate

        with _store() as store:
            sharestate.show(store, _thread_id(store, thread), console=console, errors=errors)
        return
    widening = visibility in ("organization", "public") or support is True
    with _store() as store:
        thread = _thread_id(store, thread)
        if widening:
            _refuse_widening(store, thread)
        shared = store.share(thread, visibility=visibility, shared_with_support=support)
        synced = sync_now(store, thread)
    finish(sharing_line(shared), synced, console=console, errors=errors)


__all__ = ["finding_dict", "redact", "scan", "share"]
