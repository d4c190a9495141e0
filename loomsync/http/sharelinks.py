"""Share links from the SDK (API.md section 1, issue 13 item 1): make, list and revoke the
links of a thread, and read a thread through one.

:class:`ShareLinkCalls` is mixed into :class:`loomsync.http.client.ThreadSyncClient`, so these are
its methods: ``client.create_share_link(thread_id, expires_in=7 * 86400)``, and so on.

A create is sent once, never retried: the server keeps only a hash of the link's secret, so it
cannot replay a lost answer (it ignores ``Idempotency-Key`` there), and a retry would make a
second link. After a failure, :meth:`ShareLinkCalls.list_share_links` shows whether a link was
made anyway (a live link whose URL nobody received opens nothing, and can be revoked).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal
from urllib.parse import quote, urlsplit

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.document.model import Thread
from loomsync.errors import InvalidInputError
from loomsync.http import responses
from loomsync.http.responses import SkippedEntry

log = logging.getLogger(__name__)

#: What a link's secret looks like (the server makes 43 URL-safe base64 characters).
SECRET = re.compile(r"[A-Za-z0-9_-]{16,512}")
#: A link id: a canonical lowercase UUID.
LINK_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
LinkState = Literal["live", "revoked", "expired"]


class ShareLink(BaseModel):
    """A share link as the server describes it.

    ``url`` (holding the secret) is known only in the answer to its create; a listed link has
    ``url`` None. ``state``: ``live`` opens the thread; ``revoked`` and ``expired`` answer 410.
    Times are aware UTC; ``expires_at`` None: never expires.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    thread_id: str
    url: str | None = None
    state: LinkState = "live"
    created_by: str | None = None
    created_at: datetime
    expires_at: datetime | None = None
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None
    use_count: int = 0

    @field_validator("id")
    @classmethod
    def _link_id(cls, value: str) -> str:
        if not LINK_ID.fullmatch(value):
            raise ValueError("not a link id")
        return value

    @field_validator("thread_id")
    @classmethod
    def _thread_id(cls, value: str) -> str:
        try:
            return str(ThreadId.parse(value))
        except InvalidThreadId:
            raise ValueError("not a thread id") from None

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and urlsplit(value).scheme not in ("http", "https"):
            raise ValueError("not an http(s) URL")
        return value


def secret_of(link: str) -> str:
    """The secret of a share link: the last segment of its ``…/s/<secret>`` URL, or the secret
    itself.

    Raises:
        InvalidInputError: it is neither.
    """
    text = link.strip()
    if "://" in text:
        path = urlsplit(text).path
        _, marker, text = path.rpartition("/s/")
        if not marker:
            raise InvalidInputError(f"not a share link (no /s/<secret> in it): {link!r}")
    if not SECRET.fullmatch(text):
        raise InvalidInputError(f"not a share link's secret: {text[:80]!r}")
    return text


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """``scheme://host:port`` of an absolute URL, lowercased, the default port filled in (RFC
    6454 section 4), so ``https://A.example/`` and ``https://a.example:443/s/x`` are one origin.
    A URL whose port is not a number has the origin ``invalid``."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    try:
        port = parts.port or _DEFAULT_PORTS.get(scheme)
    except ValueError:
        return "invalid"
    return f"{scheme}://{(parts.hostname or '').lower()}:{port}"


def parse_link(response: httpx.Response, raw: Any) -> ShareLink:
    """One link of an answer.

    Raises:
        InvalidResponseError: it is not a valid link.
    """
    try:
        return ShareLink.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "link"
        raise responses.invalid(response, f"{where}: {first['msg']}") from None


def parse_links(items: list[Any]) -> list[ShareLink]:
    """A listing's links; an unusable entry is left out (and logged), as in thread listings."""
    good: list[ShareLink] = []
    for item in items:
        try:
            good.append(ShareLink.model_validate(item))
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            name = item.get("id") if isinstance(item, dict) else None
            skipped = SkippedEntry(None if name is None else str(name)[:80], str(first["msg"]))
            log.warning("%s", skipped)
    return good


class ShareLinkCalls:
    """The share-link methods of :class:`loomsync.http.client.ThreadSyncClient`."""

    #: The transport: :meth:`loomsync.http.client.ThreadSyncClient.request`.
    request: Callable[..., httpx.Response]
    #: The server this client talks to (no trailing slash).
    server_url: str

    def create_share_link(self, thread_id: str, *, expires_in: int | None = None) -> ShareLink:
        """``POST /api/threads/{id}/share-links``: a new link that lets anyone holding its
        ``url`` read the thread, whatever its visibility, for ``expires_in`` seconds (None:
        until revoked, or the server's maximum). Sent once, never retried (module docstring).

        Raises:
            AuthError: not the thread's owner (nor an admin), or no token.
            RemoteNotFoundError, GoneError: no such thread on the server, or it was deleted.
            RefusedError: ``expires_in`` refused (under 1, or over the server's maximum).
        """
        body = {} if expires_in is None else {"expires_in": expires_in}
        path = f"/api/threads/{ThreadId.parse(thread_id)}/share-links"
        response = self.request("POST", path, body=body, thread_id=thread_id, retries=0)
        link = parse_link(response, responses.json_object(response, url=str))
        if link.thread_id != str(ThreadId.parse(thread_id)):
            raise responses.invalid(response, f"asked for {thread_id}, got {link.thread_id}")
        return link

    def list_share_links(self, thread_id: str, *, page_size: int = 200) -> list[ShareLink]:
        """``GET /api/threads/{id}/share-links``, every page: the thread's links, newest first,
        revoked and expired ones included (``url`` None: the server keeps no secret)."""
        path = f"/api/threads/{ThreadId.parse(thread_id)}/share-links"
        found: list[ShareLink] = []
        cursor: str | None = None
        while True:
            params = {"limit": page_size, "cursor": cursor}
            response = self.request("GET", path, params=params, thread_id=thread_id)
            raw = responses.json_object(response, links=list)
            found += parse_links(raw["links"])
            cursor = responses.next_cursor(response, raw)
            if cursor is None:
                return found

    def revoke_share_link(self, thread_id: str, link_id: str) -> None:
        """``DELETE /api/threads/{id}/share-links/{link_id}``: the link answers 410 from now on
        (revoking a revoked link succeeds again).

        Raises:
            InvalidInputError: ``link_id`` is not a link id (nothing is sent).
            RemoteNotFoundError: the thread has no such link.
        """
        if not LINK_ID.fullmatch(link_id):
            raise InvalidInputError(f"not a link id (a UUID): {link_id[:80]!r}")
        path = f"/api/threads/{ThreadId.parse(thread_id)}/share-links/{link_id}"
        self.request("DELETE", path, thread_id=thread_id)

    def get_shared_thread(self, link: str) -> Thread:
        """``GET /api/shared/{secret}`` on this client's server: the thread behind a share link
        (its URL or its secret), as the owner's ``get_thread`` would give it. Each call counts
        as a use of the link on the server.

        A link's URL must be of this client's server (same scheme, host and port): the secret
        of another server's link is never sent here (it would open nothing, and would hand
        that server's secret to this one). A server whose ``LOOMSYNC_PUBLIC_URL`` differs from
        the address this client uses makes links of another origin: pass their secret alone.

        Raises:
            InvalidInputError: ``link`` is not a share link, or is a link of another server
                (nothing is sent).
            RemoteNotFoundError: no such link.
            GoneError: the link was revoked or has expired, or the thread was deleted.
        """
        secret = secret_of(link)
        if "://" in link and origin(link) != origin(self.server_url):
            raise InvalidInputError(
                f"this share link is of {origin(link)}, not of this client's server "
                f"{origin(self.server_url)}: nothing sent (log in to that server to read it; "
                "if it is this server under another address, pass the secret alone)"
            )
        response = self.request("GET", f"/api/shared/{quote(secret, safe='')}")
        return responses.thread(response)


__all__ = ["ShareLink", "ShareLinkCalls", "origin", "parse_link", "parse_links", "secret_of"]
