"""``loomsync share ID`` with no option: how the thread is shared now (issue 30 item 8: it was
a usage error). Called by ``share`` (loomsync/cli/secrets.py).

stdout: ``T-…: visible to only you (private), not shared with support.`` (this machine's copy,
as the server was last told it), then the thread's share links as ``share ID --links`` lists
them. The links live on the server: not logged in, unreachable, not sent yet, or a private
session (which never leaves this machine), a note on stderr says why none are listed, and the exit code is
still 0 (the visibility was shown; local first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from loomsync.errors import NetworkError, RemoteNotFoundError, ServerError
from loomsync.terminal import TerminalConsole, printable

if TYPE_CHECKING:  # types only: `share` imports this module with the CLI
    from loomsync.core.document.model import Thread
    from loomsync.sync.syncing import SyncingThreadStore

#: Who reads a thread of each visibility (the words of ``share --visibility``'s line).
WHO = {"private": "only you", "organization": "your organization", "public": "everyone"}


def sharing_line(thread: Thread) -> str:
    """``T-…: visible to everyone (public), shared with support`` (raw text)."""
    support = "shared with support" if thread.is_shared_with_support else "not shared with support"
    return f"{thread.id}: visible to {WHO[thread.visibility]} ({thread.visibility}), {support}"


def show(
    store: SyncingThreadStore,
    thread_id: str,
    *,
    console: TerminalConsole,
    errors: TerminalConsole,
) -> None:
    """Print the thread's visibility, then its share links (or on stderr why they are not
    listed). Raises what :meth:`SyncingThreadStore.load` and the link listing raise, but for
    an unreachable server (a note instead)."""
    from loomsync.cli import links as linkscli

    thread = store.load(thread_id)
    console.print(printable(f"{sharing_line(thread)}."), soft_wrap=True)
    if thread.is_private:
        errors.print("A private session: it never leaves this machine and has no share links.")
        return
    if store.client is None:
        errors.print("Share links are kept on the server: log in to list them.")
        return
    try:
        linkscli.show(store.client, thread_id, as_json=False, console=console, errors=errors)
    except RemoteNotFoundError:  # saved here, not sent yet (or deleted there)
        errors.print("Not on the server yet: it has no share links (`loomsync sync` sends it).")
    except (NetworkError, ServerError) as exc:
        errors.print(printable(f"Share links not listed: {exc}"), style="yellow")


__all__ = ["WHO", "sharing_line", "show"]
