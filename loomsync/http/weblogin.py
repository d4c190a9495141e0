"""Browser sign-in from the client (issue 13, item 3): a one-time link that opens a browser
session as the client's own token holder, so nobody pastes a JWT into a page.

:func:`login_link` asks the server for a code (``POST /api/login-codes``, bearer token) and
returns the ``/login?code=…`` URL, optionally landing on one thread (``/t/{id}``). The code
works once, for a short time (the server's ``LOOMSYNC_LOGIN_CODE_TTL``, 2 minutes by default),
and the session it opens ends when the token does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import to_utc
from loomsync.http import responses
from loomsync.http.client import ThreadSyncClient


@dataclass(frozen=True, slots=True)
class LoginLink:
    """A sign-in link: ``url`` (absolute, holds the one-time code), when the code stops working
    (``expires_at``) and when the session it opens ends (``session_expires_at``)."""

    url: str
    expires_at: datetime
    session_expires_at: datetime


def login_link(client: ThreadSyncClient, thread_id: str | None = None) -> LoginLink:
    """A one-time sign-in link for ``client``'s token; the browser lands on ``thread_id``'s
    page when given (else on ``/``, the thread lists).

    Raises:
        InvalidThreadId: ``thread_id`` is not ``T-`` + a lowercase UUID (nothing is sent).
        AuthError: the server refused the token (401).
        SyncError: any other failure (:meth:`ThreadSyncClient.request`).
        InvalidResponseError: the answer is not a login code.
    """
    body = {"next": f"/t/{ThreadId.parse(thread_id)}"} if thread_id is not None else {}
    response = client.request("POST", "/api/login-codes", body=body)
    raw = responses.json_object(response, url=str, expires_at=str, session_expires_at=str)
    url: str = raw["url"]
    if not url.startswith(("http://", "https://")):
        raise responses.invalid(response, "'url' is not an http(s) URL")
    try:
        expires_at = to_utc(datetime.fromisoformat(raw["expires_at"]))
        session_expires_at = to_utc(datetime.fromisoformat(raw["session_expires_at"]))
    except ValueError:
        raise responses.invalid(response, "a timestamp is not RFC 3339") from None
    return LoginLink(url=url, expires_at=expires_at, session_expires_at=session_expires_at)
