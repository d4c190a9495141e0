"""Pure ASGI middleware: request ids, the 500 boundary (and clients that disconnect), the
request and body time limits and the request body limit (API.md sections 7 and 8)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.utils import ClientDisconnected

from app.errors import PROBLEM_JSON, RequestTimeout, Unavailable, UnsupportedMediaType, problem
from app.logs import logged_target, request_id_var

log = logging.getLogger(__name__)

_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class ResponseTracker:
    """Wraps an ASGI ``send``; ``started`` tells whether the response has begun, after which
    an error can no longer be answered with a problem response of its own."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.started = False

    async def __call__(self, message: Message) -> None:
        """Forward ``message``, noting the start of the response."""
        if message["type"] == "http.response.start":
            self.started = True
        await self.send(message)


class RequestIdMiddleware:
    """Honour a safe incoming ``X-Request-ID`` or make one; expose it as
    ``scope["state"]["request_id"]`` and to logging (:data:`app.logs.request_id_var`), and
    return it on every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = dict(scope["headers"]).get(b"x-request-id", b"").decode("latin-1")
        request_id = incoming if _SAFE_REQUEST_ID.match(incoming) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        token = request_id_var.set(request_id)
        try:
            await self.app(scope, receive, send_with_id)
        finally:
            request_id_var.reset(token)


#: The status logged and counted for a request whose client closed the connection before the
#: response began (nginx's "client closed request"); never sent, as no one is there to read it.
CLIENT_CLOSED_REQUEST = 499
_CLIENT_CLOSED = "client_closed_request"
#: What reading the body or writing the answer raises once the client is gone: Starlette's
#: ``Request.body()``/``stream()`` on an ``http.disconnect`` message, uvicorn's
#: ``ClientDisconnected`` (an ``OSError``). Any other error counts as a disconnect too when the
#: app had been told ``http.disconnect`` before its response began (anyio's stream errors, say).
DISCONNECTS = (ClientDisconnect, ClientDisconnected)


def client_closed(scope: Scope) -> bool:
    """True when the client of this HTTP ``scope`` went away before its response began (set by
    :class:`ErrorBoundaryMiddleware`): :data:`CLIENT_CLOSED_REQUEST` is what is recorded."""
    return bool(scope.get("state", {}).get(_CLIENT_CLOSED))


class ErrorBoundaryMiddleware:
    """Turn an exception that no handler took into a logged 500 problem JSON carrying the
    request id, inside the other middleware (so the answer still gets ``X-Request-ID``, the
    security headers and a metric). A 500 is always a bug (API.md section 7).

    A client that closes the connection before the response began (mid-body, say) is not a
    bug: the request is marked :func:`client_closed` (status 499 in the access log and the
    metrics), one warning line without a traceback is logged, and nothing is sent.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracking_send = ResponseTracker(send)
        told_disconnect = False

        async def noting_receive() -> Message:
            nonlocal told_disconnect
            message = await receive()
            if message["type"] == "http.disconnect" and not tracking_send.started:
                told_disconnect = True
            return message

        try:
            await self.app(scope, noting_receive, tracking_send)
        except Exception as exc:
            if not tracking_send.started and (told_disconnect or isinstance(exc, DISCONNECTS)):
                self._client_closed(scope)
                return
            request_id = scope.get("state", {}).get("request_id", "-")
            log.exception("unhandled error in %s %s", scope["method"], logged_target(scope))
            if tracking_send.started:
                raise
            response = problem(
                500, f"Internal error; quote request id {request_id}.", request_id=request_id
            )
            await response(scope, receive, send)
            return
        if told_disconnect:  # the app answered, but no one was there to read it
            self._client_closed(scope)

    @staticmethod
    def _client_closed(scope: Scope) -> None:
        scope.setdefault("state", {})[_CLIENT_CLOSED] = True
        log.warning(
            "client disconnected before the response: %s %s", scope["method"], logged_target(scope)
        )


class TimeoutMiddleware:
    """Bound the time of a request, cancelling its work when it passes; 0 disables a limit.

    - ``seconds`` (``LOOMSYNC_REQUEST_TIMEOUT``) bounds the whole request: past it, a request
      the server was slow with (a lock, a database that accepts connections but does not
      answer) is answered 503 problem JSON with ``Retry-After``, so it never hangs its client.
      Cancelled database connections are terminated by SQLAlchemy's pool, never handed to
      another request half-used.
    - ``body_seconds`` (``LOOMSYNC_BODY_TIMEOUT``) bounds the time from the request's arrival
      until its body has been read. A request whose time runs out (either limit) while the app
      waits for body bytes is answered 408 ``request_timeout`` (RFC 9110 section 15.5.9) with
      ``Connection: close``: the client was slow, not the server.
    """

    def __init__(self, app: ASGIApp, seconds: float, body_seconds: float = 0) -> None:
        self.app = app
        self.seconds = seconds
        self.body_seconds = body_seconds
        #: The limit a slow body runs into first, and its setting (for the 408's detail).
        self.body_limit = (
            (body_seconds, "LOOMSYNC_BODY_TIMEOUT")
            if body_seconds and (not seconds or body_seconds < seconds)
            else (seconds, "LOOMSYNC_REQUEST_TIMEOUT")
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not (self.seconds or self.body_seconds):
            await self.app(scope, receive, send)
            return
        tracking_send = ResponseTracker(send)
        now = asyncio.get_running_loop().time()
        deadline = now + self.seconds if self.seconds else None
        body_deadline = now + self.body_limit[0]
        limit = asyncio.timeout(deadline)
        reading_body = False  # still True after the limit cancelled a read of the body
        body_done = False

        def reschedule(when: float | None) -> None:
            if not limit.expired():
                limit.reschedule(when)

        async def timed_receive() -> Message:
            nonlocal reading_body, body_done
            if body_done:
                return await receive()
            reading_body = True
            reschedule(body_deadline)
            message = await receive()
            reading_body = False
            reschedule(deadline)
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        try:
            async with limit:
                await self.app(scope, timed_receive, tracking_send)
        except TimeoutError:
            if tracking_send.started:
                raise
            await self._timed_out(scope, receive, send, while_reading_body=reading_body)

    async def _timed_out(
        self, scope: Scope, receive: Receive, send: Send, *, while_reading_body: bool
    ) -> None:
        target = logged_target(scope)
        if while_reading_body:
            seconds, limit = self.body_limit
            log.warning("request body too slow (%s s): %s %s", seconds, scope["method"], target)
            response = RequestTimeout(
                f"The request body did not arrive within {seconds:g} seconds ({limit})."
            ).to_response()
        else:
            log.warning(
                "request timed out after %s s: %s %s", self.seconds, scope["method"], target
            )
            response = Unavailable(
                f"The request took longer than {self.seconds:g} seconds; retry shortly."
            ).to_response()
        await response(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


#: Content codings a request body may have: none (RFC 9110 section 8.4.1 "identity").
_IDENTITY = (b"", b"identity")


class BodyLimitMiddleware:
    """Answer 413 problem JSON for a body over ``max_bytes``: at once when ``Content-Length``
    says so, else as soon as the streamed (e.g. chunked) body passes the limit, without reading
    the rest. A body with a content coding (``Content-Encoding: gzip``) is 415 with
    ``Accept-Encoding: identity`` (RFC 9110 sections 15.5.16 and 12.5.3): the server decodes
    none, and reading gzip bytes as the JSON they encode, or plain bytes as gzip, would be
    wrong either way."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _problem(self) -> tuple[dict[str, object], bytes]:
        body = json.dumps(
            {
                "type": "https://loomsync.dev/problems/payload-too-large",
                "title": "Payload too large",
                "status": 413,
                "detail": f"The request body is over the limit of {self.max_bytes} bytes.",
                "code": "payload_too_large",
            }
        ).encode()
        start = {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", PROBLEM_JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
        return start, body

    async def _reject(self, send: Send) -> None:
        start, body = self._problem()
        await send(start)
        await send({"type": "http.response.body", "body": body})

    @staticmethod
    async def _refuse_coding(coding: bytes, scope: Scope, receive: Receive, send: Send) -> None:
        response = UnsupportedMediaType(
            f"Content-Encoding {coding.decode('latin-1')[:40]!r} is not accepted; send the"
            " body without a content coding."
        ).to_response()
        response.headers["Connection"] = "close"  # the body is not read
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = dict(scope["headers"])
        length = head.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
            return
        coding = head.get(b"content-encoding", b"").strip(b" \t").lower()
        has_body = b"transfer-encoding" in head or (length is not None and length != b"0")
        if has_body and coding not in _IDENTITY:
            await self._refuse_coding(coding, scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _BodyTooLarge
            return message

        tracking_send = ResponseTracker(send)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if tracking_send.started:
                raise
            await self._reject(send)
