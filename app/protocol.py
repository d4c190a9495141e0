"""uvicorn's httptools HTTP/1.1 protocol with a bounded request head (``serve`` runs it).

httptools has no limit of its own: a request head (request line and header fields) of 10-64 MB
was read in full, and its buffers left hundreds of MB of RSS behind. Here:

- a head over ``LOOMSYNC_MAX_HEADER_BYTES`` (default 32 KiB, counted from the request line's
  first byte to the blank line that ends the fields) is answered **431** problem JSON (RFC 6585
  section 5) as soon as the limit is passed: the parser is never fed more than the limit, so
  memory stays flat whatever the client sends. What the client sends after that is read and
  dropped for at most :data:`LINGER_SECONDS` (so that it sees the answer rather than a reset),
  then the connection is closed;
- a head not received within ``LOOMSYNC_HEADER_TIMEOUT`` seconds (default 10) of the connection
  opening or of its first byte is answered **408** and the connection closed (a client that
  dribbles its headers, or opens connections and sends nothing, holds no connection for long);
- a request httptools cannot parse (a method it does not know, a bad header line) is answered
  400 problem JSON instead of uvicorn's plain text.

These answers are given before the app sees the request: they carry the API's security headers
and a fresh ``X-Request-ID``, and are logged (logger ``app.protocol``), but are not in the
Prometheus metrics. The cost is about 1 us a request over stock httptools (h11, which bounds
heads too, costs 5 times the protocol's CPU): bench/RESULTS.md, "Request heads". Pipelined requests are served in order before a refusal;
the part of a head that arrives in the same read as the end of the request before it is not
counted, so such a head may reach twice the limit (memory stays bounded all the same).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from functools import cache
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from app.config import Settings
from app.errors import problem
from app.headers import API_HEADERS

log = logging.getLogger(__name__)

#: uvicorn's ``http=`` for this protocol (``--http`` on uvicorn's command line).
HTTP_PROTOCOL = "app.protocol:BoundedHttpToolsProtocol"
#: How long a refused client's remaining bytes are read and dropped before the connection closes.
LINGER_SECONDS = 2.0


@cache
def head_limits() -> tuple[int, float]:
    """(``LOOMSYNC_MAX_HEADER_BYTES``, ``LOOMSYNC_HEADER_TIMEOUT``), read once per process."""
    settings = Settings()
    return settings.max_header_bytes, settings.header_timeout


def answer_bytes(
    status: int,
    detail: str,
    *,
    code: str | None = None,
    title: str | None = None,
    default_headers: list[tuple[bytes, bytes]] | None = None,
) -> tuple[bytes, str]:
    """A whole ``Connection: close`` problem-JSON answer as written to the socket, and the
    request id it carries; ``default_headers`` (uvicorn's ``date`` and ``server``) come first."""
    response = problem(status, detail, code=code, title=title)
    request_id = uuid.uuid4().hex
    headers = [
        *(default_headers or ()),
        *response.raw_headers,
        *API_HEADERS,
        (b"x-request-id", request_id.encode()),
        (b"connection", b"close"),
    ]
    lines = [STATUS_LINE[status], *(name + b": " + value + b"\r\n" for name, value in headers)]
    return b"".join([*lines, b"\r\n", response.body]), request_id


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` with the head limit and head timeout above.

    State per connection: ``in_head`` (True from the connection's start, and again after each
    request's end, until the next request's fields are complete), ``head_bytes`` (bytes of the
    current head fed to the parser), and a timer while a head is awaited.
    """

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.max_head_bytes, self.head_timeout = head_limits()
        self.in_head = True
        self.head_bytes = 0
        self.head_timer: asyncio.TimerHandle | None = None
        self.refusal: bytes | None = None  # an answer waiting for the response in progress
        self.refused = False

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the head timer: the first request's head must arrive in time too."""
        super().connection_made(transport)
        self._start_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the head timer."""
        self._stop_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        """Feed ``data`` to the parser, never more than the head limit while a head is read;
        start the head timer when a head is left incomplete (most arrive in one read, and
        cost no timer)."""
        if self.refused:
            return  # lingering: read and dropped
        if not self.in_head:
            super().data_received(data)
            return
        room = self.max_head_bytes - self.head_bytes
        if len(data) > room:
            self._feed_up_to_the_limit(data, room)
            return
        self.head_bytes += len(data)
        super().data_received(data)
        # head_bytes is 0 again when the request ended in this read: no head is pending then
        if self.in_head and self.head_bytes and self.head_timer is None:
            if not self.transport.is_closing():
                self._start_head_timer()

    def _feed_up_to_the_limit(self, data: bytes, room: int) -> None:
        """Feed the ``room`` bytes of ``data`` the limit allows; refuse the request when its
        head is still incomplete after them, else go on with the rest.

        When a request ended inside those bytes (``head_bytes`` is 0 again), the head after it
        began there too: it is not refused, and the rest of ``data`` counts from 0 (a head
        after pipelined requests may so pass the limit by the part in this read)."""
        self.head_bytes += room
        super().data_received(data[:room])
        if self.transport.is_closing():
            return
        if self.in_head and self.head_bytes:
            self._refuse(
                431,
                f"The request line and header fields are over the limit of {self.max_head_bytes}"
                " bytes (LOOMSYNC_MAX_HEADER_BYTES).",
                code="headers_too_large",
                title="Request header fields too large",
            )
            return
        self.data_received(data[room:])

    # httptools callbacks

    def on_headers_complete(self) -> None:
        """The head is complete: stop its timer, then let uvicorn start the request."""
        self.in_head = False
        self._stop_head_timer()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        """The request is complete: what follows is the next request's head."""
        super().on_message_complete()
        self.in_head = True
        self.head_bytes = 0

    def send_400_response(self, msg: str) -> None:
        """A request httptools cannot parse: 400 problem JSON (uvicorn answers plain text)."""
        self._refuse(400, f"{msg} Its request line or a header field is not HTTP/1.1.")

    # the head limit and timer

    def _refuse(self, status: int, detail: str, **kwargs: str) -> None:
        """Answer ``status`` once any response in progress is done, then linger and close."""
        self.refused = True
        self._stop_head_timer()
        self.refusal, request_id = answer_bytes(
            status, detail, default_headers=self.server_state.default_headers, **kwargs
        )
        log.warning(
            "request head from %s refused with %s (request id %s): %s",
            self._peer(),
            status,
            request_id,
            detail,
        )
        if self.cycle is None or self.cycle.response_complete:
            self._send_refusal()
        else:  # pipelining: answer after the last request before this head is answered
            self.cycle.on_response = self._after_response

    def _after_response(self) -> None:
        self.on_response_complete()
        if self.refusal is not None and not self.transport.is_closing():
            self._send_refusal()

    def _send_refusal(self) -> None:
        assert self.refusal is not None
        self.transport.write(self.refusal)
        self.refusal = None
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.flow.resume_reading()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)

    def _start_head_timer(self) -> None:
        self.head_timer = self.loop.call_later(self.head_timeout, self._head_timed_out)

    def _stop_head_timer(self) -> None:
        if self.head_timer is not None:
            self.head_timer.cancel()
            self.head_timer = None

    def _head_timed_out(self) -> None:
        self.head_timer = None
        if not self.in_head or self.refused or self.transport.is_closing():
            return
        if self.head_bytes == 0:
            self.transport.close()  # a connection that never sent a byte: nothing to answer
            return
        self._refuse(
            408,
            f"The request head did not arrive within {self.head_timeout:g} seconds"
            " (LOOMSYNC_HEADER_TIMEOUT).",
            code="request_timeout",
            title="Request timeout",
        )

    def _peer(self) -> str:
        return f"{self.client[0]}:{self.client[1]}" if self.client else "?"
