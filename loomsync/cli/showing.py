"""``loomsync show THREAD [--from N] [--to M] [--no-pager] [--full] [--json]`` (issue 16, item 7;
docs/client.md). Registered on the one typer app of :mod:`loomsync.cli.main`.

The transcript numbers each message ``#N``, N being API.md's 0-based ``message_index`` (the
``message N`` of a search hit, the ``[0, N)`` of ``fork --up-to``); ``--from N --to M`` shows
messages N to M, both included (either may be left out: from the first, to the last). A range
outside the thread exits with code 2 and says which numbers there are. On a terminal a
transcript taller than the screen goes through a pager (:mod:`loomsync.cli.pager`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from loomsync.cli import messages, pager, render
from loomsync.cli.main import JsonOption, _load, _store, app, console
from loomsync.core.document import codec
from loomsync.errors import BadArgumentError


def message_range(first: int | None, last: int | None, count: int) -> tuple[int, int | None]:
    """``(first, last)`` checked against a thread of ``count`` messages (None: the ends).

    Raises:
        BadArgumentError: ``first`` or ``last`` past the last message, or ``last`` before
            ``first``: a bad argument value, exit code 2 as the table of
            :mod:`loomsync.cli.exits` says (:func:`loomsync.cli.messages.no_such_messages`).
    """
    start = first or 0
    if first is None and last is None:
        return 0, None
    bad = start >= count or (last is not None and (last >= count or last < start))
    if bad:
        raise BadArgumentError(messages.no_such_messages(start, last, count))
    return start, last


@app.command()
def show(
    thread: Annotated[
        str, typer.Argument(help="Thread id (or its first 4+ hex digits), or a .json thread file.")
    ],
    as_json: JsonOption = False,
    full: Annotated[bool, typer.Option("--full", help="Show tool output in full.")] = False,
    first: Annotated[
        int | None,
        typer.Option("--from", min=0, help="From message #N (0-based, as shown).", metavar="N"),
    ] = None,
    last: Annotated[
        int | None,
        typer.Option("--to", min=0, help="To message #M, included.", metavar="M"),
    ] = None,
    use_pager: Annotated[
        bool, typer.Option("--pager/--no-pager", help="Page long output on a terminal.")
    ] = True,
) -> None:
    """Show a thread as a readable transcript (or its JSON document), credentials replaced."""
    with _store() as store:
        loaded = store.local.redaction.thread(_load(store, thread))  # files of older clients
    start, end = message_range(first, last, len(loaded.messages))
    if as_json:
        if first is not None or last is not None:
            stop = len(loaded.messages) if end is None else end + 1
            part = loaded.messages[start:stop]
            loaded = loaded.model_copy(
                update={"conversation": loaded.conversation.model_copy(update={"messages": part})}
            )
        console.write_json(codec.encode_thread(loaded))
    else:
        shown = render.transcript(loaded, full=full, first=start, last=end)
        pager.page(console, shown, enabled=use_pager)


__all__ = ["message_range", "show"]
