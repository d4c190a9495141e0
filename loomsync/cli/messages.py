"""The one place that turns what went wrong into the CLI's message (issue 16, item 9): what
happened, in the user's words, and the next step; never HTTP internals (method, path, status
phrase) nor a reason said twice.

:func:`describe` is called by :func:`loomsync.cli.main.main` for every error a command lets
through: the SDK's tree (:mod:`loomsync.errors`) and ``OSError`` (a file the command could not
read or write). :func:`cannot` makes the error for a file a command was asked to read or
write, naming what it was doing. :func:`for_agent` words an error for a model calling a tool
of ``loomsync mcp`` (issue 17 item 3): the next step is a tool call, or what to ask the user.
"""

from __future__ import annotations

import errno
from pathlib import Path

from loomsync.errors import (
    AuthError,
    GoneError,
    LoomsyncError,
    NetworkError,
    RemoteNotFoundError,
    ServerError,
    SyncError,
    ThreadNotFoundError,
)
from loomsync.store.shortids import AmbiguousThreadIdError, NotAThreadIdError

#: Any command that needs the server, run while logged out.
NOT_LOGGED_IN = "not logged in: run `loomsync login --server URL --token TOKEN`"
#: ``list``/``search --scope visible`` while logged out (issue 16 item 6).
VISIBLE_NEEDS_LOGIN = (
    "--scope visible asks the server for the threads you may read (this machine holds only "
    "yours), but you are not logged in: run `loomsync login --server URL --token TOKEN`"
)
#: ``search --local --scope visible``.
VISIBLE_NOT_LOCAL = (
    "--scope visible asks the server (this machine holds only your threads): drop --local"
)
#: ``--mine`` with ``--scope visible``.
MINE_AND_VISIBLE = "--mine is --scope mine; it cannot go with --scope visible: choose one"

#: The last line of ``loomsync status`` (issue 16 item 5), one per state.
STATUS_NOT_LOGGED_IN = (
    "Not logged in: threads are kept on this machine only; run "
    "`loomsync login --server URL --token TOKEN`."
)
STATUS_TOKEN_EXPIRED = (
    "The token expired: log in again with `loomsync login --server URL --token TOKEN` "
    "(changes are kept here until then)."
)
STATUS_TOKEN_REFUSED = (
    "The server refused the token: log in again with `loomsync login --server URL --token "
    "TOKEN` (changes are kept here until then)."
)


def status_ready(failed: int) -> str:
    """The last line of ``loomsync status`` when it can sync; ``failed`` entries are named."""
    if not failed:
        return "Ready: changes sync to the server."
    return (
        f"Ready: changes sync to the server ({failed} failed: `loomsync sync --status` says why)."
    )


def status_unreachable(server: str) -> str:
    """The last line of ``loomsync status`` when ``server`` does not answer (raw text)."""
    return (
        f"Cannot reach {server}: is it running? Changes are kept here and sent by the next "
        "`loomsync sync`."
    )


_FILE_REASONS = {
    errno.ENOENT: "no such folder",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "no space left on the device",
}


def _file_reason(exc: OSError, verb: str) -> str:
    if exc.errno == errno.ENOENT and verb != "write":
        return "no such file"
    return _FILE_REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__


def cannot(verb: str, path: Path, exc: OSError) -> LoomsyncError:
    """``cannot write /nonexistent/x.md: no such folder (/nonexistent)`` as an error to raise."""
    reason = _file_reason(exc, verb)
    if verb == "write" and exc.errno == errno.ENOENT:
        reason += f" ({path.parent}): create it first, or choose another path"
    return LoomsyncError(f"cannot {verb} {path}: {reason}")


def _server(exc: SyncError) -> str:
    url = exc.url or ""
    cut = url.find("/api/")
    return url[:cut] if cut > 0 else url or "the server"


def describe(exc: BaseException) -> list[str]:
    """The lines to print for ``exc``: the first after ``error:``, the others (candidates of
    an ambiguous short id) below it. Raw text: the caller makes it printable."""
    if isinstance(exc, AmbiguousThreadIdError):
        return [str(exc), *exc.lines()]
    # method is set only on errors made from a response (loomsync.http.problems.error_for):
    # a command that already said it in its own words (``open``) is left as it is
    if isinstance(exc, GoneError) and exc.method is not None:
        what = f"thread {exc.thread_id}" if exc.thread_id else "that thread"
        return [f"{what} was deleted on the server (its id cannot be used again)."]
    if isinstance(exc, RemoteNotFoundError) and exc.method is not None:
        if exc.thread_id:
            return [f"no thread {exc.thread_id} on the server (or it is not shared with you)."]
        return [f"the server has nothing at {exc.url or 'that address'}: is it a loomsync server?"]
    if isinstance(exc, AuthError) and exc.method is not None:
        if exc.status == 403:
            return [f"the server does not let you do that ({exc.detail or 'forbidden'})."]
        return [
            f"{_server(exc)} refused your token ({exc.detail or 'expired or revoked?'}): log in "
            "again with "
            "`loomsync login --server URL --token TOKEN`."
        ]
    if isinstance(exc, NetworkError):
        reason = (exc.detail or "no answer").rstrip(".")
        return [
            f"cannot reach {_server(exc)} ({reason}): is it running? Changes are kept here "
            "and sent by the next `loomsync sync`."
        ]
    if isinstance(exc, ServerError) and exc.method is not None:
        return [f"{_server(exc)} is having trouble ({exc.detail or exc.status}): try again later."]
    if isinstance(exc, ThreadNotFoundError) and str(exc) == f"thread {exc.thread_id} not found":
        return [
            f"no thread {exc.thread_id} on this machine (`loomsync list` shows them; log in to "
            "reach the server's: `loomsync login --server URL --token TOKEN`)."
        ]
    if isinstance(exc, LoomsyncError):
        return [str(exc)]
    if isinstance(exc, OSError):
        name = exc.filename
        if name is not None:
            return [f"cannot use {name}: {_file_reason(exc, 'open')}"]
        return [f"a file could not be used: {exc.strerror or exc}"]
    return [f"unexpected {type(exc).__name__}: {exc}"]


def for_agent(exc: BaseException) -> str:
    """What a tool of ``loomsync mcp`` says when ``exc`` stops it (raw text, one paragraph):
    a thread that is not found, or an id that is not one, points to ``list_threads`` and
    ``search_threads``; the rest as :func:`describe` words it for a person."""
    find = "call list_threads or search_threads to find the thread's id, then read_thread with it"
    if isinstance(exc, NotAThreadIdError):
        return f"not a thread id: give the id (T-…) or at least its first 4 hex digits; {find}."
    if isinstance(exc, ThreadNotFoundError):
        return f"no thread {exc.thread_id} on this machine or on the server; {find}."
    return " ".join(describe(exc))


__all__ = [
    "MINE_AND_VISIBLE",
    "NOT_LOGGED_IN",
    "STATUS_NOT_LOGGED_IN",
    "STATUS_TOKEN_EXPIRED",
    "STATUS_TOKEN_REFUSED",
    "VISIBLE_NEEDS_LOGIN",
    "VISIBLE_NOT_LOCAL",
    "cannot",
    "describe",
    "for_agent",
    "status_ready",
    "status_unreachable",
]
