"""ThreadSyncClient: the HTTP calls of API.md section 6, with retries and the error tree.

- Every request carries ``User-Agent: loomsync/<version>``, ``X-Loomsync-Version`` and
  ``X-Loomsync-Platform`` (``linux-x86_64``, ...), API.md section 9.
- Retries (tenacity): exponential backoff with jitter, and ``Retry-After`` when the server sends
  it, only for network errors, 408, 429 and 5xx. A connection that could not be made at all
  (refused, no such host: :attr:`loomsync.errors.NetworkError.connected` False) is not retried:
  a stopped server answers at once, so ``search`` falls back to this machine's threads and a
  store's ``close()`` returns without waiting out the backoff (issue 30 item 8); the sync
  queue keeps the change and tries again later. Writes are safe to retry: PUT, PATCH and
  DELETE name their base version (If-Match), so one that did land answers 409 instead of
  applying twice; every POST carries an ``Idempotency-Key`` (:mod:`loomsync.http.idempotency`), the
  same on each retry, so the server answers a retry with the first answer.
- Errors map to :mod:`loomsync.errors` (:mod:`loomsync.http.problems`); a 409 carries the server's
  copy of the thread. 2xx bodies are read by :mod:`loomsync.http.responses`, trusting nothing.
- A thread with ``is_private = true`` is refused before any byte is sent.
- What a write sends is redacted first (:class:`loomsync.store.redaction.Redaction`, issue 12 item 1):
  ``put_thread``, ``append_messages`` and ``patch_thread`` replace every credential with its
  marker, whoever calls them (the sync engine, :class:`~loomsync.http.remote.RemoteThreadStore`, a
  script). :meth:`ThreadSyncClient.request` is the transport and sends what it is given.
"""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import tenacity

from loomsync.config import ClientConfig
from loomsync.core.document import codec
from loomsync.core.document.model import Message, Thread
from loomsync.core.version import __version__
from loomsync.errors import (
    ConfigError,
    NetworkError,
    PrivateThreadError,
    SyncError,
)
from loomsync.http import idempotency, responses
from loomsync.http.problems import error_for
from loomsync.http.reasons import transport_reason
from loomsync.http.responses import SkippedEntry
from loomsync.http.sharelinks import ShareLinkCalls
from loomsync.store.redaction import Redaction, default_redaction
from loomsync.store.summary import (
    ArchivedFilter,
    Scope,
    SearchHit,
    SearchResults,
    ThreadSummary,
)


def platform_tag() -> str:
    """``<os>-<machine>`` in lower case, e.g. ``linux-x86_64`` or ``darwin-arm64``."""
    return f"{platform.system().lower()}-{platform.machine().lower()}"


@dataclass(frozen=True, slots=True)
class AppendResult:
    """Answer to an append: the thread's new ``version`` and ``message_count``."""

    id: str
    version: int
    message_count: int


@dataclass(frozen=True, slots=True)
class ThreadPage:
    """One page of a listing; pass ``next_cursor`` back for the next (None: last page).
    ``skipped``: entries the client could not use (an id that is not a thread id, ...)."""

    threads: list[ThreadSummary]
    next_cursor: str | None
    skipped: list[SkippedEntry] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SearchPage:
    """One page of search hits, best first; ``skipped`` as in :class:`ThreadPage`."""

    hits: list[SearchHit]
    next_cursor: str | None
    skipped: list[SkippedEntry] = field(default_factory=list)

    def results(self, hits: list[SearchHit] | None = None) -> SearchResults:
        """This page as :class:`loomsync.store.summary.SearchResults` (``source="server"``), with
        ``hits`` in place of the page's own when given (merged with local ones, say)."""
        return SearchResults(
            hits=self.hits if hits is None else hits,
            source="server",
            next_cursor=self.next_cursor,
            skipped=[str(entry) for entry in self.skipped],
        )


def _is_retryable(error: BaseException) -> bool:
    """Worth another attempt within the request: retryable, and not a connection never made."""
    if isinstance(error, NetworkError) and not error.connected:
        return False
    return isinstance(error, SyncError) and error.retryable


class ThreadSyncClient(ShareLinkCalls):
    """A synchronous client of one loomsync server (httpx), safe to share between threads.

    Share links (make, list, revoke, read through one) are its methods too
    (:class:`loomsync.http.sharelinks.ShareLinkCalls`).

    Args:
        server_url: e.g. ``http://127.0.0.1:8080``.
        token: bearer JWT (None: anonymous: public threads read by id; listing and search
            answer 401, API.md section 1).
        timeout: seconds per request (connect at most 10 s).
        retries: extra attempts after a retryable failure (network, 408, 429, 5xx).
        backoff: first retry delay in seconds, doubling, plus up to ``backoff`` of jitter.
        backoff_max: longest delay in seconds.
        transport: an httpx transport (tests that simulate the network failing).
        sleep: the sleep function used between retries.
        redaction: what every write is redacted with (default: no allow-list).
    """

    def __init__(
        self,
        server_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        backoff_max: float = 8.0,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        redaction: Redaction | None = None,
    ) -> None:
        if not server_url.startswith(("http://", "https://")):
            raise ConfigError(f"server URL must start with http:// or https://: {server_url!r}")
        self.server_url = server_url.rstrip("/")
        self.redaction = redaction or default_redaction()
        headers = {
            "User-Agent": f"loomsync/{__version__}",
            "X-Loomsync-Version": __version__,
            "X-Loomsync-Platform": platform_tag(),
            "Accept": "application/json",
        }
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.server_url,
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            transport=transport,
        )
        self.retries = retries
        self._backoff = backoff
        self._backoff_max = backoff_max
        self._sleep = sleep

    @classmethod
    def from_config(cls, config: ClientConfig) -> ThreadSyncClient:
        """A client for the configured server and token.

        Raises:
            ConfigError: no server URL configured (run ``loomsync login``).
        """
        if not config.server_url:
            raise ConfigError("no server configured: run `loomsync login --server URL --token T`")
        token = config.token.get_secret_value() if config.token else None
        return cls(
            config.server_url,
            token,
            timeout=config.timeout,
            retries=config.retries,
            backoff=config.backoff,
            backoff_max=config.backoff_max,
            redaction=Redaction(config.redactor),
        )

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> ThreadSyncClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _wait(self, state: tenacity.RetryCallState) -> float:
        """Exponential backoff with jitter: ``backoff * 2**(n-1)`` plus up to ``backoff``, capped;
        at least the server's ``Retry-After`` (capped too)."""
        exponential: float = self._backoff * 2.0 ** min(state.attempt_number - 1, 30)
        delay: float = min(self._backoff_max, exponential + random.uniform(0, self._backoff))
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, SyncError) and error.retry_after is not None:
            delay = max(delay, min(error.retry_after, self._backoff_max))
        return delay

    def _send(
        self,
        method: str,
        path: str,
        content: bytes | None,
        headers: dict[str, str],
        params: dict[str, Any] | None,
        thread_id: str | None,
        base: int | None,
    ) -> httpx.Response:
        try:
            response = self._http.request(
                method, path, content=content, headers=headers, params=params
            )
        except httpx.TransportError as exc:
            reason = transport_reason(exc, self.server_url)  # words, not ConnectError/[Errno]
            raise NetworkError(
                f"cannot reach {self.server_url}: {reason}",
                method=method,
                url=f"{self.server_url}{path}",
                detail=reason,
                connected=not isinstance(exc, httpx.ConnectError),
            ) from None
        if response.is_success:
            return response
        raise error_for(response, thread_id, base)

    def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, Any] | None = None,
        if_match: int | None = None,
        thread_id: str | None = None,
        idempotency_key: str | None = None,
        retries: int | None = None,
    ) -> httpx.Response:
        """Send one request (retrying as described above); the 2xx response.

        A POST carries ``Idempotency-Key``: ``idempotency_key``, or a fresh random one.
        ``body`` may be ready JSON bytes. ``retries``: extra attempts for this request (default:
        the client's; 0 for a write the server cannot replay, such as a share link's create).

        Raises:
            SyncError: the matching subclass for the failure.
        """
        headers: dict[str, str] = {}
        content = None
        if body is not None:
            content = body if isinstance(body, bytes) else codec.dumps(body)
            headers["Content-Type"] = "application/json"
        if if_match is not None:
            headers["If-Match"] = f'"{if_match}"'
        if method == "POST":  # retried below: safe only because the retries carry its key
            key = idempotency_key or idempotency.new_key()
            headers[idempotency.HEADER] = idempotency.header_value(key)
        query = {k: v for k, v in (params or {}).items() if v is not None}
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt((self.retries if retries is None else retries) + 1),
            wait=self._wait,
            retry=tenacity.retry_if_exception(_is_retryable),
            reraise=True,
            sleep=self._sleep,
        )
        return retrying(self._send, method, path, content, headers, query, thread_id, if_match)

    # -- endpoints ----------------------------------------------------------------------

    def get_thread(self, thread_id: str) -> Thread:
        """``GET /api/threads/{id}``; ``version`` is the server's."""
        response = self.request("GET", f"/api/threads/{thread_id}", thread_id=thread_id)
        thread = responses.thread(response)
        if str(thread.id) != thread_id:  # saved under its own id, it would overwrite another
            raise responses.invalid(response, f"asked for {thread_id}, got {thread.id}")
        return thread

    def put_thread(self, thread: Thread, *, base_version: int) -> Thread:
        """``PUT /api/threads/{id}`` with ``If-Match: "<base_version>"`` (0 creates), the
        thread redacted; returns the server's copy (a server may redact more).

        Raises:
            PrivateThreadError: the thread is private (nothing is sent).
            ConflictError: the server is not at ``base_version``.
        """
        if thread.is_private:
            raise PrivateThreadError(str(thread.id))
        doc = codec.document(self.redaction.thread(thread))
        doc["version"] = base_version
        response = self.request(
            "PUT",
            f"/api/threads/{thread.id}",
            body=doc,
            if_match=base_version,
            thread_id=str(thread.id),
        )
        return responses.thread(response)

    def append_messages(
        self,
        thread_id: str,
        messages: Sequence[Message],
        *,
        base_version: int,
        fields: Mapping[str, Any] | None = None,
    ) -> AppendResult:
        """``POST /api/threads/{id}/messages``: append after ``base_version`` (If-Match).

        ``fields`` may hold ``agent_state``, ``last_activity_at`` and the git fields; messages
        and fields are redacted. The
        ``Idempotency-Key`` is derived from the thread, base version and body
        (:func:`loomsync.http.idempotency.append_key`), so the same append resent after a restart
        gets the first answer too.
        """
        content = codec.dumps(
            {
                **self.redaction.value(dict(fields or {})),
                "messages": [
                    m.model_dump(mode="python", exclude_unset=True)
                    for m in self.redaction.messages(messages)
                ],
            }
        )
        data = self.request(
            "POST",
            f"/api/threads/{thread_id}/messages",
            body=content,
            if_match=base_version,
            thread_id=thread_id,
            idempotency_key=idempotency.append_key(thread_id, base_version, content),
        )
        raw = responses.json_object(data, id=str, version=int, message_count=int)
        return AppendResult(raw["id"], raw["version"], raw["message_count"])

    def patch_thread(
        self, thread_id: str, patch: Mapping[str, Any], *, base_version: int | None = None
    ) -> Thread:
        """``PATCH /api/threads/{id}``: merge patch of metadata, visibility, sharing, archived
        (redacted: a title or tag can hold a credential too)."""
        response = self.request(
            "PATCH",
            f"/api/threads/{thread_id}",
            body=self.redaction.value(dict(patch)),
            if_match=base_version,
            thread_id=thread_id,
        )
        return responses.thread(response)

    def fork_thread(
        self, thread_id: str, *, up_to: int | None = None, idempotency_key: str | None = None
    ) -> Thread:
        """``POST /api/threads/{id}/fork``: a new private thread with messages ``[0, up_to)``.

        ``idempotency_key`` names this fork (default: a fresh random key), sent with each retry:
        pass the same key again to get the same fork back rather than another."""
        body = {} if up_to is None else {"up_to": up_to}
        path = f"/api/threads/{thread_id}/fork"
        response = self.request(
            "POST", path, body=body, thread_id=thread_id, idempotency_key=idempotency_key
        )
        return responses.thread(response)

    def delete_thread(self, thread_id: str) -> None:
        """``DELETE /api/threads/{id}`` (soft delete)."""
        self.request("DELETE", f"/api/threads/{thread_id}", thread_id=thread_id)

    def list_threads(
        self,
        *,
        limit: int = 50,
        cursor: str | None = None,
        workspace: str | None = None,
        scope: Scope = "mine",
        archived: ArchivedFilter = "false",
    ) -> ThreadPage:
        """``GET /api/threads``: one page of summaries, newest activity first."""
        params = {"limit": limit, "cursor": cursor, "workspace": workspace, "scope": scope}
        response = self.request("GET", "/api/threads", params={**params, "archived": archived})
        raw = responses.json_object(response, threads=list)
        rows, skipped = responses.summaries(raw["threads"])
        return ThreadPage(rows, responses.next_cursor(response, raw), skipped)

    def iter_threads(
        self,
        *,
        page_size: int = 200,
        workspace: str | None = None,
        scope: Scope = "mine",
        archived: ArchivedFilter = "false",
        on_skipped: Callable[[SkippedEntry], None] | None = None,
    ) -> Iterator[ThreadSummary]:
        """Every summary, page by page (``page_size`` 1-200); each entry the client cannot use
        goes to ``on_skipped`` (default: left out silently)."""
        cursor: str | None = None
        while True:
            page = self.list_threads(
                limit=page_size, cursor=cursor, workspace=workspace, scope=scope, archived=archived
            )
            if on_skipped is not None:
                for entry in page.skipped:
                    on_skipped(entry)
            yield from page.threads
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        cursor: str | None = None,
        syntax: Literal["plain", "web"] = "plain",
        workspace: str | None = None,
        scope: Scope = "mine",
        archived: ArchivedFilter = "false",
    ) -> SearchPage:
        """``GET /api/threads/search``: ranked hits with snippets, ``origin="server"``."""
        params = {"q": query, "limit": limit, "cursor": cursor, "syntax": syntax}
        params.update(workspace=workspace, scope=scope, archived=archived)
        response = self.request("GET", "/api/threads/search", params=params)
        raw = responses.json_object(response, hits=list)
        hits, skipped = responses.hits(raw["hits"])
        hits = [hit.model_copy(update={"origin": "server"}) for hit in hits]
        return SearchPage(hits, responses.next_cursor(response, raw), skipped)

    def health(self) -> bool:
        """True if ``GET /health`` answers 200 (one attempt, no retries)."""
        try:
            return self._http.get("/health").status_code == 200
        except httpx.HTTPError:
            return False


__all__ = [
    "AppendResult",
    "Scope",
    "SearchPage",
    "ThreadPage",
    "ThreadSyncClient",
    "error_for",
    "platform_tag",
]
