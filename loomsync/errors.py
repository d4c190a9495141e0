"""The client's error tree. Every error the SDK raises on purpose is a :class:`LoomsyncError`.

::

    LoomsyncError
    ├── ConfigError                 bad or missing client configuration
    │   └── NotLoggedInError        no server or no token configured
    ├── ThreadNotFoundError         no such thread (locally, or 404 from the server)
    ├── InvalidThreadFileError      a thread file that does not parse (local, or a given path)
    │   └── CorruptThreadError      a stored thread file, moved aside ("quarantined")
    ├── UnsupportedOperationError   e.g. reading a file path through a remote store
    ├── PrivateThreadError          a private thread was about to be sent to a server
    ├── StoreLockedError            a file lock could not be taken in time
    ├── InvalidInputError           a bad argument (not a thread id, a bad metadata patch, ...)
    ├── ServiceError                systemctl or launchctl refused (``loomsync service``)
    │   └── NoServiceManagerError   neither a systemd user manager nor launchd here
    └── SyncError                   anything the server or the network said no to
        ├── NetworkError            no answer (connection refused, timeout, TLS, ...)
        ├── AuthError               401 or 403
        │   └── TokenRefusedError   401: the token expired, was revoked or is not valid
        ├── RemoteNotFoundError     404 (also a ThreadNotFoundError)
        ├── ConflictError           409, with the server's copy
        ├── GoneError               410, deleted on the server (also a ThreadNotFoundError)
        ├── RefusedError            400, 413, 422 and other 4xx: refused for good
        ├── ServerError             408, 429, 5xx still failing after the retries
        └── InvalidResponseError    a 2xx whose body is not what API.md says (broken server)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loomsync.core.document.model import Thread


class LoomsyncError(Exception):
    """Base of every error the SDK raises on purpose; ``str(error)`` is one readable line."""


class ConfigError(LoomsyncError):
    """Client configuration is missing or invalid (e.g. not logged in, bad config.toml)."""


class NotLoggedInError(ConfigError):
    """The command needs the server, and no server URL or token is configured (issue 16
    item 2: the CLI exits with :data:`loomsync.cli.exits.ExitCode.LOGIN`)."""


class ThreadNotFoundError(LoomsyncError):
    """No thread with this id in the store.

    Attributes:
        thread_id: the id that was asked for.
    """

    def __init__(self, thread_id: str, message: str | None = None) -> None:
        super().__init__(message or f"thread {thread_id} not found")
        self.thread_id = thread_id


class InvalidThreadFileError(LoomsyncError):
    """A file that should hold a thread document does not parse or validate.

    Attributes:
        path: the file.
        reason: what is wrong with it (one line).
    """

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} is not a valid thread file: {reason}")
        self.path = path
        self.reason = reason


class CorruptThreadError(InvalidThreadFileError):
    """A stored thread file did not parse; it was moved aside and never uploaded.

    Attributes:
        thread_id: the thread whose file was bad.
        quarantined_to: where the bad file now is (None if moving it failed).
    """

    def __init__(
        self, thread_id: str, path: Path, reason: str, quarantined_to: Path | None
    ) -> None:
        super().__init__(path, reason)
        self.thread_id = thread_id
        self.quarantined_to = quarantined_to
        where = f"moved to {quarantined_to}" if quarantined_to else "left in place"
        self.args = (f"thread file {path.name} is corrupt ({reason}); {where}",)


class UnsupportedOperationError(LoomsyncError):
    """The store cannot do this (e.g. a remote store asked to read a local file path)."""


class PrivateThreadError(LoomsyncError):
    """A thread with ``is_private = true`` was about to leave the machine; nothing was sent."""

    def __init__(self, thread_id: str | None) -> None:
        super().__init__(f"thread {thread_id} is private: it never leaves this machine")
        self.thread_id = thread_id


class StoreLockedError(LoomsyncError):
    """A file lock (thread file, queue) could not be taken within the timeout (seconds)."""


class InvalidInputError(LoomsyncError, ValueError):
    """An argument is invalid: not a thread id, a metadata patch that is not valid, ..."""


class SyncError(LoomsyncError):
    """The server or the network refused a request.

    Attributes:
        method: HTTP method of the request (``"PUT"``, ...), or None.
        url: the request URL, or None.
        status: HTTP status, or None when no response arrived.
        code: the problem ``code`` of API.md section 7 (``"version_conflict"``, ...), or None.
        detail: the server's explanation (problem ``detail``) or the network error text.
        request_id: the server's ``X-Request-ID``, when it sent one.
        retry_after: seconds the server asked to wait (``Retry-After``), or None.
    """

    def __init__(
        self,
        message: str,
        *,
        method: str | None = None,
        url: str | None = None,
        status: int | None = None,
        code: str | None = None,
        detail: str | None = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        # Not super(): for RemoteNotFoundError and GoneError that is ThreadNotFoundError, which
        # would wrap the message as "thread <message> not found".
        LoomsyncError.__init__(self, message)
        self.method = method
        self.url = url
        self.status = status
        self.code = code
        self.detail = detail
        self.request_id = request_id
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        """True when trying again later may succeed (network errors, 408, 429, 5xx)."""
        return False


class NetworkError(SyncError):
    """No response: the server could not be reached, or the connection broke or timed out.

    Attributes:
        connected: False when no connection was made at all (refused, no such host, no
            route, a TLS handshake refused): nothing reached the server, and trying again
            within the same request would meet the same wall, so
            :class:`loomsync.http.client.ThreadSyncClient` does not (issue 30 item 8: a
            stopped server answered ``search`` after 5 s of retries instead of at once).
            Still :attr:`retryable`: the sync queue tries again later.
    """

    def __init__(self, message: str, *, connected: bool = True, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.connected = connected

    @property
    def retryable(self) -> bool:
        """Always True: the network may come back."""
        return True


class AuthError(SyncError):
    """401 (missing, bad or expired token: :class:`TokenRefusedError`) or 403 (readable but
    not writable, or not yours to change)."""


class TokenRefusedError(AuthError):
    """401: the server refused the token (expired, revoked, signed with another key, not a
    token at all). Issue 16 item 3: never "offline". The sync keeps the entry pending for a
    new login (:meth:`loomsync.sync.queue.PendingSyncQueue.wait_for_login`), neither retried
    in a loop nor marked failed; the CLI says to run ``loomsync login`` and exits with code 3.
    """


def token_refused_text(server: str | None = None, reason: str | None = None) -> str:
    """The one wording of a 401 (issue 16 item 3) for every layer: the CLI's lines
    (:func:`loomsync.cli.messages.token_refused`), a sync entry's last error and an online
    search's fallback note, which ``loomsync mcp`` hands an agent. It names the next step,
    e.g. ``the server refused the token (Signature has expired): run `loomsync login --server
    http://… --token TOKEN` with a new token``. ``server``: its address, for the command to
    paste (``URL`` when unknown); ``reason``: the server's detail, without its full stop
    (default ``expired, revoked or not valid``). Raw text."""
    why = (reason or "").strip().rstrip(".").strip() or "expired, revoked or not valid"
    return (
        f"the server refused the token ({why}): run "
        f"`loomsync login --server {server or 'URL'} --token TOKEN` with a new token"
    )


class RemoteNotFoundError(SyncError, ThreadNotFoundError):
    """404 from the server: no such thread, or not readable by this user."""

    def __init__(self, thread_id: str, message: str, **context: Any) -> None:
        SyncError.__init__(self, message, **context)
        self.thread_id = thread_id


class ConflictError(SyncError):
    """409: the thread changed on the server since the version this write was based on.

    Attributes:
        local_version: the base version the client sent (If-Match), or None.
        server_version: the version the server holds, or None if it holds none.
        current: the server's full copy (API.md section 5), or None.
    """

    def __init__(
        self,
        message: str,
        *,
        local_version: int | None,
        server_version: int | None,
        current: Thread | None,
        **context: Any,
    ) -> None:
        super().__init__(message, **context)
        self.local_version = local_version
        self.server_version = server_version
        self.current = current


class GoneError(SyncError, ThreadNotFoundError):
    """410: the thread was deleted on the server; its id cannot be reused.

    Also a ThreadNotFoundError: reading a deleted thread finds nothing.
    """

    def __init__(self, thread_id: str, message: str, **context: Any) -> None:
        SyncError.__init__(self, message, **context)
        self.thread_id = thread_id


class RefusedError(SyncError):
    """A 4xx the server will give again for the same request (400, 413, 422, ...)."""


class ServerError(SyncError):
    """408, 429 or 5xx, still failing after the retries; try again later."""

    @property
    def retryable(self) -> bool:
        """Always True: the server may recover."""
        return True


class InvalidResponseError(SyncError):
    """The server answered 2xx with a body the client cannot use: not JSON, not an object,
    a key of API.md section 6 missing or of the wrong type, a thread that does not validate.

    ``status`` is the response's; ``detail`` says what is wrong (one line). Not retried: the
    same server gives the same answer.
    """


class ServiceError(LoomsyncError):
    """The service manager (``systemctl --user``, ``launchctl``) could not be run or refused
    a step of ``loomsync service`` (issue 17 item 2); ``str(error)`` names the command and
    its answer."""


class NoServiceManagerError(ServiceError):
    """This machine has no service manager ``loomsync service`` can use (no systemd user
    manager, not macOS): nothing was installed (issue 17 item 2).

    Attributes:
        command: the ``loomsync watch`` command line to run some other way (absolute path).
        log: a log file to send its output to.
        why: what was looked for and not found (one line).
        environment: the variables a service would get (the XDG folders set now,
            ``PYTHONUNBUFFERED``), for a cron line to carry (empty: none given).
    """

    def __init__(
        self, command: str, log: Path, why: str, environment: dict[str, str] | None = None
    ) -> None:
        self.command = command
        self.log = log
        self.why = why
        self.environment = dict(environment or {})
        super().__init__(f"no service manager to run `loomsync watch` ({why})")


class WatchRunningError(LoomsyncError):
    """Another ``loomsync watch`` runs on this store (newcomer finding 2 on issue 17 item 1):
    this one refuses to start (exit code 1).

    Attributes:
        pid: the running watch's process id (None when it could not be read).
        state_dir: the store's state folder, whose ``watch/watch.lock`` is held.
    """

    def __init__(self, pid: int | None, state_dir: Path) -> None:
        self.pid = pid
        self.state_dir = state_dir
        who = f"PID {pid}" if pid is not None else "PID unknown"
        super().__init__(f"loomsync watch is already running ({who}) on this store")


class QueueUnreadableError(LoomsyncError):
    """The sync queue file (``queue.sqlite3``, or an earlier client's ``pending.json``) could not
    be used (not a database, a folder in its place, no permission...) and could not be moved aside either, so the queue cannot be rebuilt (issue 15, item 4)."""


#: Candidates an :class:`AmbiguousThreadIdError` lists.
MAX_LISTED = 10


class BadArgumentError(InvalidInputError):
    """A command-line value the command cannot take: a message number past the thread, a
    cursor that is not one (exit code 2, a usage mistake: :mod:`loomsync.cli.exits`)."""


class NotAThreadIdError(BadArgumentError):
    """Neither a thread id nor a prefix of one (a usage mistake, exit code 2)."""


class AmbiguousThreadIdError(InvalidInputError):
    """A short id that starts more than one thread's id on this machine.

    Attributes:
        prefix: what was given.
        candidates: ``(id, title)`` of the matching threads, newest first.
    """

    def __init__(self, prefix: str, candidates: list[tuple[str, str]]) -> None:
        self.prefix = prefix
        self.candidates = candidates
        super().__init__(
            f"{prefix} is the start of {len(candidates)} threads' ids: give more of the id"
        )

    def lines(self) -> list[str]:
        """One line per candidate (at most :data:`MAX_LISTED`): ``T-…  title`` (raw text: the
        CLI makes it printable)."""
        shown = [f"  {tid}  {title}" for tid, title in self.candidates[:MAX_LISTED]]
        if len(self.candidates) > MAX_LISTED:
            shown.append(f"  … and {len(self.candidates) - MAX_LISTED} more")
        return shown


__all__ = [
    "MAX_LISTED",
    "AmbiguousThreadIdError",
    "AuthError",
    "BadArgumentError",
    "ConfigError",
    "ConflictError",
    "CorruptThreadError",
    "GoneError",
    "InvalidInputError",
    "InvalidResponseError",
    "InvalidThreadFileError",
    "LoomsyncError",
    "NetworkError",
    "NotAThreadIdError",
    "NotLoggedInError",
    "PrivateThreadError",
    "QueueUnreadableError",
    "RefusedError",
    "RemoteNotFoundError",
    "ServerError",
    "StoreLockedError",
    "SyncError",
    "ThreadNotFoundError",
    "TokenRefusedError",
    "UnsupportedOperationError",
    "WatchRunningError",
    "token_refused_text",
]
