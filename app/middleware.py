"""Pure ASGI middleware: request ids, the request time limit and the request body limit
(API.md sections 7 and 8)."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import PROBLEM_JSON, Unavailable, problem
from app.logs import request_id_var

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


class ErrorBoundaryMiddleware:
    """Turn an exception that no handler took into a logged 500 problem JSON carrying the
    request id, inside the other middleware (so the answer still gets ``X-Request-ID``, the
    security headers and a metric). A 500 is always a bug (API.md section 7)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        tracking_send = ResponseTracker(send)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception:
            request_id = scope.get("state", {}).get("request_id", "-")
            log.exception("unhandled error in %s %s", scope["method"], scope["path"])
            if tracking_send.started:
                raise
            response = problem(
                500, f"Internal error; quote request id {request_id}.", request_id=request_id
            )
            await response(scope, receive, send)


class TimeoutMiddleware:
    """Answer 503 problem JSON (with ``Retry-After``) to a request not answered within
    ``seconds``, cancelling its work; ``seconds`` of 0 disables the limit.

    A request stuck on the database (a lock, a server that accepts connections but does not
    answer) thus never hangs its client past the limit. Cancelled database connections are
    terminated by SQLAlchemy's pool, never handed to another request half-used.
    """

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.seconds:
            await self.app(scope, receive, send)
            return
        tracking_send = ResponseTracker(send)

        try:
            async with asyncio.timeout(self.seconds):
                await self.app(scope, receive, tracking_send)
        except TimeoutError:
            if tracking_send.started:
                raise
            log.warning(
                "request timed out after %s s: %s %s", self.seconds, scope["method"], scope["path"]
            )
            response = Unavailable(
                f"The request took longer than {self.seconds:g} seconds; retry shortly."
            ).to_response()
            await response(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


class BodyLimitMiddleware:
    """Answer 413 problem JSON for a body over ``max_bytes``: at once when ``Content-Length``
    says so, else as soon as the streamed (e.g. chunked) body passes the limit, without reading
    the rest."""

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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
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
