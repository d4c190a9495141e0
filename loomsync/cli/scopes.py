"""``--scope mine|visible`` and ``--mine`` of ``loomsync list`` and ``loomsync search`` (issue 16
item 6; API.md section 6, "List parameters" and "Search parameters").

``mine`` (the default) is your own threads; ``visible`` is every thread you may read on the
server: yours, your organization's, public ones. Only the server knows the others' threads, so
``visible`` needs a login (:func:`require_login`) and a local listing never has it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from loomsync.cli import messages
from loomsync.errors import NotLoggedInError
from loomsync.store.summary import Scope

if TYPE_CHECKING:
    from loomsync.http.client import ThreadSyncClient
    from loomsync.sync.syncing import SyncingThreadStore

SCOPE_HELP = "mine: your own threads; visible: every thread you may read (asks the server)."


def chosen(scope: Scope, mine: bool) -> Scope:
    """The scope asked for; ``--mine`` is ``--scope mine``.

    Raises:
        typer.BadParameter: ``--mine`` with ``--scope visible`` (usage error, exit code 2).
    """
    if mine and scope != "mine":
        raise typer.BadParameter(messages.MINE_AND_VISIBLE, param_hint="'--mine'")
    return scope


def require_login(store: SyncingThreadStore, scope: Scope) -> ThreadSyncClient:
    """The store's client, for a request of ``scope``.

    Raises:
        NotLoggedInError: not logged in (for ``visible``: saying that only the server has
            the threads others shared), exit code 3 (:mod:`loomsync.cli.exits`).
    """
    if store.client is None:
        raise NotLoggedInError(
            messages.VISIBLE_NEEDS_LOGIN if scope == "visible" else messages.NOT_LOGGED_IN
        )
    return store.client


__all__ = ["SCOPE_HELP", "Scope", "chosen", "require_login"]
