"""A non-2xx answer as the SDK's error (API.md section 7 problem JSON -> :mod:`loomsync.errors`).

The server's problem may be missing, malformed or hostile: every field is checked for its type,
the detail is cut to :data:`MAX_DETAIL_CHARS` shown characters (escape sequences kept whole),
and the message says the title and detail once, the status last.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from loomsync.core.document import codec
from loomsync.core.document.model import Thread
from loomsync.errors import (
    AuthError,
    ConflictError,
    GoneError,
    RefusedError,
    RemoteNotFoundError,
    ServerError,
    SyncError,
    TokenRefusedError,
)
from loomsync.terminal import clip

RETRYABLE_STATUSES = frozenset({408, 429})
MAX_DETAIL_CHARS = 300
MAX_TITLE_CHARS = 80
_PLAIN_WORDS = re.compile(r"[A-Za-z][A-Za-z -]*")


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after", "")
    return float(value) if value.isdigit() else None


def problem_message(status: int, title: object, detail: str) -> str:
    """One line for a server problem (API.md section 7): ``not found: No such thread (404)``.

    ``title`` is the problem's ``title`` (else the HTTP reason phrase; cut to
    :data:`MAX_TITLE_CHARS` shown characters), said once: lower-cased when it is plain words
    (``Not Found``), else only its first letter. With no ``detail``, or one that only repeats
    the title, the line is ``not found (404)``. A final full stop of the detail is dropped,
    since the status follows it; nothing else of either is changed.
    """
    what = clip(str(title or ""), MAX_TITLE_CHARS) or f"HTTP {status}"
    what = what.lower() if _PLAIN_WORDS.fullmatch(what) else what[:1].lower() + what[1:]
    said = detail.removesuffix(".")
    if not said.strip() or said.strip().lower() == what.lower():
        return f"{what} ({status})"
    return f"{what}: {said} ({status})"


def _current(document: object) -> Thread | None:
    """A 409's ``current`` thread, or None when it is absent or not a valid thread."""
    if not isinstance(document, dict):
        return None
    try:
        return codec.decode_thread(document)
    except ValueError:
        return None


def error_for(response: httpx.Response, thread_id: str | None, base: int | None) -> SyncError:
    """The :class:`SyncError` for a non-2xx response (problem JSON of API.md section 7)."""
    try:
        problem = codec.loads(response.content)  # a 409's thread keeps its numbers' text
    except (ValueError, RecursionError):
        problem = None
    problem = problem if isinstance(problem, dict) else {}
    status = response.status_code
    detail = clip(str(problem.get("detail") or response.reason_phrase or ""), MAX_DETAIL_CHARS)
    request = response.request
    context: dict[str, Any] = {
        "method": request.method,
        "url": str(request.url),
        "status": status,
        "code": code if isinstance(code := problem.get("code"), str) else None,
        "detail": detail,
        "request_id": response.headers.get("x-request-id"),
        "retry_after": _retry_after(response),
    }
    message = problem_message(status, problem.get("title") or response.reason_phrase, detail)
    if status == 401:
        return TokenRefusedError(message, **context)
    if status == 403:
        return AuthError(message, **context)
    if status == 404:
        return RemoteNotFoundError(thread_id or "", message, **context)
    if status == 409:
        version = problem.get("server_version")
        return ConflictError(
            message,
            local_version=base,
            server_version=version if type(version) is int else None,
            current=_current(problem.get("current")),
            **context,
        )
    if status == 410:
        return GoneError(thread_id or "", message, **context)
    if status in RETRYABLE_STATUSES or status >= 500:
        return ServerError(message, **context)
    return RefusedError(message, **context)


__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_TITLE_CHARS",
    "RETRYABLE_STATUSES",
    "error_for",
    "problem_message",
]
