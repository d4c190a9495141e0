"""The one place that turns what went wrong into the CLI's message (issue 16, item 9): what
happened, in the user's words, and the next step; never HTTP internals (method, path, status
phrase) nor a reason said twice.

:func:`describe` is called by :func:`loomsync.cli.main.main` for every error a command lets
through: the SDK's tree (:mod:`loomsync.errors`) and ``OSError`` (a file the command could not
read or write). :func:`cannot` makes the error for a file a command was asked to read or
write, naming what it was doing. :func:`token_refused` is the one wording of a 401 (issue 16,
item 3), whichever command met it; :data:`SAVED_OFFLINE` and :func:`not_on_server` end the
line of a command whose change is kept here (issue 16, item 2). :func:`for_agent` words an
error for a model calling a tool of ``loomsync mcp`` (issue 17 item 3): the next step is a
tool call, or what to ask the user. :func:`no_service_manager` says how to run ``loomsync
watch`` where ``loomsync service`` has no service manager (issue 17 item 2).
"""

from __future__ import annotations

import errno
import shlex
from collections.abc import Sequence
from pathlib import Path

from loomsync.cli.overrides import login_overrides
from loomsync.errors import (
    AuthError,
    GoneError,
    LoomsyncError,
    NetworkError,
    NoServiceManagerError,
    RemoteNotFoundError,
    ServerError,
    SyncError,
    ThreadNotFoundError,
    TokenRefusedError,
    WatchRunningError,
    token_refused_text,
)
from loomsync.store.shortids import AmbiguousThreadIdError, NotAThreadIdError

#: How a command's line ends when its change is kept here because the server cannot be
#: reached (exit code 0: the local-first tool did its job, and says what is left).
SAVED_OFFLINE = "saved locally; will sync when the server is reachable"
#: ... when not logged in (exit code 0: the thread is ``local`` until a login).
SAVED_NOT_LOGGED_IN = "saved locally (not logged in)"


def detail(text: str | None, default: str) -> str:
    """The server's ``text`` (a problem's ``detail``) to put inside a sentence, in
    parentheses: stripped, without its closing full stop, so ``(… links.).`` never shows
    (issue 16 review item 5); ``default`` when there is none. Raw text."""
    return (text or "").strip().rstrip(".").strip() or default


def token_refused(server: str | None = None, reason: str | None = None) -> str:
    """The one wording of a 401, for every command (issue 16 item 3): built by
    :func:`loomsync.errors.token_refused_text`, which the sync and the MCP server use too,
    except when the token comes from ``LOOMSYNC_TOKEN`` (a login cannot replace it: the
    variable must change, :func:`env_token_next_step`). Raw text."""
    if "LOOMSYNC_TOKEN" in login_overrides():
        why = detail(reason, "expired, revoked or not valid")
        return f"the server refused the token ({why}): {env_token_next_step()}"
    return token_refused_text(server, reason)


def env_token_next_step() -> str:
    """The next step when the token in use comes from ``LOOMSYNC_TOKEN`` (newcomer finding 1):
    a login cannot replace it, the variable must change. Raw text."""
    return (
        "it comes from the LOOMSYNC_TOKEN variable, which overrides the token file (a new "
        "`loomsync login` does not change it): set LOOMSYNC_TOKEN to a new token, or "
        "`unset LOOMSYNC_TOKEN` to use the saved one"
    )


def login_shadowed(names: list[str]) -> str:
    """``login``'s warning when ``names`` (``LOOMSYNC_TOKEN``, ``LOOMSYNC_SERVER_URL``) are set
    to something else than was just saved (newcomer finding 1): the commands of this shell
    keep using them. Raw text."""
    which = " and ".join(names)
    verb = "overrides" if len(names) == 1 else "override"
    return (
        f"{which} {verb} the saved login in this shell, so commands run here still use "
        f"{'it' if len(names) == 1 else 'them'}: `unset {' '.join(names)}` to use this login"
    )


def not_on_server(thread_id: str, reason: str) -> str:
    """How a command's line ends when the server refused its change for good (exit code 1):
    the change stays here and in the sync queue as a failed entry, and how to retry or drop
    it. Raw text."""
    return (
        f"done on this machine only: {detail(reason, 'refused')}. The change waits in the sync queue as failed: "
        f"`loomsync sync --retry-failed` tries it again, `loomsync sync --drop {thread_id}` "
        "drops it"
    )


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
CURSOR_NOT_LOCAL = "--cursor pages the server's hits; it cannot go with --local"

MINE_AND_VISIBLE = "--mine is --scope mine; it cannot go with --scope visible: choose one"

#: The last line of ``loomsync status`` (issue 16 item 5), one per state.
STATUS_NOT_LOGGED_IN = (
    "Not logged in: threads are kept on this machine only; run "
    "`loomsync login --server URL --token TOKEN`."
)
#: ``status``'s ``User:`` line for a token that is not a JWT at all (newcomer finding 14).
STATUS_NOT_A_TOKEN = "not a token: it holds no user or organization (the server will refuse it)"


def status_not_logged_in(server: str | None) -> str:
    """The last line of ``loomsync status`` when logged out; with the URL ``logout`` kept in
    the advice when there is one (newcomer finding 14). Raw text."""
    if not server:
        return STATUS_NOT_LOGGED_IN
    return (
        "Not logged in: threads are kept on this machine only; run "
        f"`loomsync login --server {server} --token TOKEN`."
    )


def token_file_loose(path: Path) -> str | None:
    """A warning when the token file ``path`` can be read or written by others than its owner
    (group or world bits set; newcomer finding 14), with the command that fixes it; None when
    it is private or absent. Raw text."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return None
    if not mode & 0o077:
        return None
    return (
        f"the token file {path} can be read by others (mode {mode:04o}): run "
        f"`chmod 600 {shlex.quote(str(path))}`"
    )


def status_token_expired(server: str) -> str:
    """The last line of ``loomsync status`` when the token's ``exp`` has passed (raw text)."""
    if "LOOMSYNC_TOKEN" in login_overrides():
        return f"The token expired: {env_token_next_step()} (changes are kept here until then)."
    return (
        f"The token expired: run `loomsync login --server {server} --token TOKEN` with a new "
        "token (changes are kept here until then)."
    )


def status_token_refused(server: str, reason: str | None) -> str:
    """The last line of ``loomsync status`` when the server refused the token (a 401): the
    one wording of :func:`token_refused`, as a sentence (raw text)."""
    said = token_refused(server, reason)
    return f"{said[0].upper()}{said[1:]} (changes are kept here until then)."


def status_ready(failed: int) -> str:
    """The last line of ``loomsync status`` when it can sync; ``failed`` entries are named."""
    if not failed:
        return "Ready: changes sync to the server."
    return (
        f"Ready: changes sync to the server ({failed} failed: `loomsync sync --status` says why)."
    )


def status_unreachable(server: str, queued: int = 0) -> str:
    """The last line of ``loomsync status`` when ``server`` does not answer; ``queued``: the
    changes waiting to sync (only then are changes "kept here"; newcomer finding 11). Raw
    text."""
    if not queued:
        return f"Cannot reach {server}: is it running?"
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


def more_rows(more: int | None, cursor: str, limit: int) -> str:
    """The note after a listing that stopped at ``--limit`` (issue 16 item 7): ``12 more:
    --limit 0 lists every one, --cursor C the next 50.`` (``more`` None: the server does not
    say how many)."""
    head = f"{more} more" if more is not None else "More on the server"
    return f"{head}: --limit 0 lists every one, --cursor {cursor} the next {limit}."


def not_a_thread_file(path: Path) -> str:
    """Why ``show FILE`` refused a JSON file that is no thread document (finding 12; exit 1)."""
    return (
        f"{path}: not a loomsync thread file; to bring an agent session in, run "
        f"`loomsync import auto {path}`"
    )


def unknown_import_format(name: str, formats: list[str]) -> str:
    """``loomsync import bogus …`` (finding 13: a usage error, exit code 2)."""
    return f"unknown format {name[:40]!r}; formats: auto, {', '.join(formats)}"


def up_to_out_of_range(up_to: int, count: int) -> str:
    """``fork --up-to N`` past the thread (finding 13: exit code 2, in the option's words)."""
    return f"--up-to must be between 0 and {count} (the thread has {count} messages), not {up_to}"


def only_one_of(given: list[str], choices: list[str]) -> str:
    """Options that do not go together (finding 13): ``--drop and --discard-failed do not go
    together: give only one of --status, --retry-failed, --drop, --discard-failed``."""
    return f"{' and '.join(given)} do not go together: give only one of {', '.join(choices)}"


def more_hits(cursor: str, limit: int) -> str:
    """The note after a server search that stopped at ``-n`` (finding 6): the server does not
    say how many more match, only where the next page starts."""
    return f"More on the server: --cursor {cursor} the next {limit}, or a larger -n (up to 100)."


def no_threads_in_workspace(workspace: str, *, server: bool) -> str:
    """What ``list --workspace`` says when no thread has that ``workspace_root`` (finding 7)."""
    where = " on the server" if server else ""
    return (
        f"No threads in workspace {workspace}{where} (the path each thread's agent worked in; "
        "`loomsync list` without --workspace lists them all)."
    )


def no_hits_in_workspace(workspace: str) -> str:
    """The line under ``search --workspace``'s empty headline (finding 7)."""
    return f"No threads in workspace {workspace} match; without --workspace, every workspace."


def others_kept_here(count: int) -> str:
    """The note (stderr) after ``loomsync list`` when this machine holds ``count`` threads of
    other people (read with ``show``), which are not yours and so not listed (newcomer finding
    3). Raw text."""
    threads = f"{count} thread{'s' if count != 1 else ''}"
    return (
        f"Not listed: {threads} of other people read here with `loomsync show`; "
        "`loomsync list --scope visible` lists every thread you may read."
    )


def dropped_not_sent(thread_ids: Sequence[str], *, queued: bool) -> str:
    """``sync --status``'s line for threads whose failed change was dropped and that were not
    saved since (newcomer finding 4): saved here only, nothing will send them. ``queued``:
    the queue holds other entries (the line follows its table). Raw text."""
    count = len(thread_ids)
    threads = f"{count} thread{'s' if count != 1 else ''}"
    head = "Also not sent" if queued else "Nothing queued, but not sent"
    return (
        f"{head}: {threads} whose failed change was dropped, saved here only (saving one "
        f"again queues it): {', '.join(thread_ids)}."
    )


def share_upload_refused(thread_id: str, reason: str | None) -> str:
    """Why ``share`` did not widen a thread whose upload the server refused for good (a 413:
    too large, say; newcomer finding 10): there is no copy on the server to share, and a
    ``loomsync sync`` would be refused the same way. Raw text."""
    why = (reason or "refused by the server").rstrip(".")
    return (
        f"the server refused its upload ({why}), so there is no copy there to share, and "
        "`loomsync sync` would be refused the same way: change what the server refused "
        f"(`loomsync sync --status` says why), or `loomsync sync --drop {thread_id}` to keep "
        "it on this machine only"
    )


def not_a_cursor(cursor: str) -> str:
    """Why ``list --cursor`` refused ``cursor`` (a bad argument value: exit code 1)."""
    return (
        f"{cursor[:60]!r} is not a cursor of this machine's list: give the one the last "
        "`loomsync list` printed (a cursor of `list --server` works with --server only)"
    )


def not_a_server_cursor(cursor: str, reason: str | None) -> str:
    """Why the server refused ``list --server --cursor`` (a bad argument value: exit code
    1)."""
    why = f" ({detail(reason, '')})" if detail(reason, "") else ""
    return (
        f"the server did not take {cursor[:60]!r} as a cursor{why}: give the one the last "
        "`loomsync list --server` printed (a cursor of this machine's list works without "
        "--server only)"
    )


def no_such_messages(first: int, last: int | None, count: int) -> str:
    """Why ``show --from FIRST --to LAST`` refused (a bad argument value: exit code 1): the thread holds messages
    0 to ``count - 1`` (message numbers are API.md's 0-based ``message_index``)."""
    asked = f"--from {first}" + (f" --to {last}" if last is not None else "")
    if count == 0:
        return f"{asked}: the thread has no messages"
    if last is not None and last < first:
        return f"{asked}: --to is before --from; give --from N --to M with N <= M"
    return (
        f"{asked}: the thread has {count} message{'s' if count != 1 else ''}, numbered 0 to "
        f"{count - 1} (the #N of `loomsync show`)"
    )


def _server(exc: SyncError) -> str:
    url = exc.url or ""
    cut = url.find("/api/")
    return url[:cut] if cut > 0 else url or "the server"


def watch_running(exc: WatchRunningError) -> str:
    """A second ``loomsync watch`` on one store (newcomer finding 2): which process runs it and
    the next step (stop it, or watch with another ``XDG_STATE_HOME``)."""
    who = f"PID {exc.pid}" if exc.pid is not None else "its PID could not be read"
    stop = f"`kill {exc.pid}`" if exc.pid is not None else "stopping it"
    return (
        f"loomsync watch is already running ({who}) on this store: it imports every session "
        f"already, so this one did not start. Stop it first ({stop}) to start another."
    )


def no_service_manager(exc: NoServiceManagerError) -> list[str]:
    """What ``loomsync service install`` says without a service manager (issue 17 item 2):
    nothing was installed, why, and three ways to run ``loomsync watch`` instead (nohup, tmux,
    a cron ``@reboot`` line carrying the variables a unit would, ``%`` escaped as crontab
    needs), each a line to paste. Raw text."""
    log = shlex.quote(str(exc.log))
    into = f">> {log} 2>&1"
    env = "".join(f"{name}={shlex.quote(value)} " for name, value in exc.environment.items())
    cron = f"@reboot {env}{exc.command} {into}".replace("%", "\\%")
    return [
        f"no service manager here ({exc.why}), so `loomsync service` cannot run "
        "`loomsync watch` for you (nothing was installed). Run it another way:",
        "  in the background, until you log out or reboot:",
        f"    mkdir -p {shlex.quote(str(exc.log.parent))} && nohup {exc.command} {into} &",
        "  in a tmux session you can come back to (tmux attach -t loomsync):",
        f"    tmux new-session -d -s loomsync {shlex.quote(exc.command)}",
        "  at every boot: add this line with `crontab -e`:",
        f"    {cron}",
    ]


def no_manager_here(why: str) -> str:
    """The note ``service install --dry-run`` adds without a service manager (issue 17
    item 2): the printed file is what would be written, but nothing could run it here."""
    return (
        f"No service manager is running here ({why}): `loomsync service install` would not "
        "install this; it prints how to run `loomsync watch` another way."
    )


def removed_anyway(name: str, path: object, failed: list[str]) -> str:
    """What ``service uninstall`` says when it removed the file but could not ask the
    service manager to stop and disable the service (issue 17 item 2). Raw text."""
    reasons = "; ".join(reason.rstrip(".") for reason in failed)
    return f"Removed {path}, but could not stop or disable {name}: {reasons}."


def describe(exc: BaseException) -> list[str]:
    """The lines to print for ``exc``: the first after ``error:``, the others (candidates of
    an ambiguous short id) below it. Raw text: the caller makes it printable."""
    if isinstance(exc, AmbiguousThreadIdError):
        return [str(exc), *exc.lines()]
    if isinstance(exc, NoServiceManagerError):
        return no_service_manager(exc)
    if isinstance(exc, WatchRunningError):
        return [watch_running(exc)]
    # method is set only on errors made from a response (loomsync.http.problems.error_for):
    # a command that already said it in its own words (``open``) is left as it is
    if isinstance(exc, GoneError) and exc.method is not None:
        what = f"thread {exc.thread_id}" if exc.thread_id else "that thread"
        return [f"{what} was deleted on the server (its id cannot be used again)."]
    if isinstance(exc, RemoteNotFoundError) and exc.method is not None:
        if exc.thread_id:
            return [f"no thread {exc.thread_id} on the server (or it is not shared with you)."]
        return [f"the server has nothing at {exc.url or 'that address'}: is it a loomsync server?"]
    if isinstance(exc, TokenRefusedError):
        return [token_refused(_server(exc) if exc.url else None, exc.detail) + "."]
    if isinstance(exc, AuthError) and exc.method is not None:
        return [f"the server does not let you do that ({detail(exc.detail, 'forbidden')})."]
    if isinstance(exc, NetworkError):
        reason = detail(exc.detail, "no answer")
        # a command that changed something says so itself (SAVED_OFFLINE): one that raised
        # this changed nothing, so nothing is "kept here" (newcomer finding 11)
        ask = "" if reason.endswith("?") else ": is it running?"  # it asked already
        return [f"cannot reach {_server(exc)} ({reason}){ask}"]
    if isinstance(exc, ServerError) and exc.method is not None:
        return [
            f"{_server(exc)} is having trouble ({detail(exc.detail, str(exc.status))}): try again later."
        ]
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
    "STATUS_NOT_A_TOKEN",
    "STATUS_NOT_LOGGED_IN",
    "VISIBLE_NEEDS_LOGIN",
    "VISIBLE_NOT_LOCAL",
    "cannot",
    "describe",
    "detail",
    "dropped_not_sent",
    "env_token_next_step",
    "for_agent",
    "login_shadowed",
    "more_rows",
    "no_service_manager",
    "no_such_messages",
    "not_a_cursor",
    "not_a_server_cursor",
    "not_on_server",
    "others_kept_here",
    "share_upload_refused",
    "status_not_logged_in",
    "status_ready",
    "status_token_expired",
    "status_token_refused",
    "status_unreachable",
    "token_file_loose",
    "token_refused",
]
