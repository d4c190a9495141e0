"""uvicorn factory for the client tests: the real app, recording every request it receives.

``uvicorn tests.client.counting_app:create --factory`` serves ``app.asgi.create()`` and appends
``METHOD PATH`` (then, tab-separated, the ``User-Agent``, ``X-Loomsync-Version`` and
``X-Loomsync-Platform`` headers) for each HTTP request to the file named by
``LOOMSYNC_TEST_REQUEST_LOG``, before the app sees it. The tests count lines to prove how many
requests reached the server. While a file named like the log plus ``.hold`` exists, responses
to writes are held forever after the app produced them (noted in the log plus ``.held``). A file
named like the log plus ``.drop-once`` makes the next write's response be dropped: held until
the client gives up and disconnects (the file is removed as that response is taken).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from app.asgi import create as create_app

ASGIApp = Any
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class RequestLog:
    """Pure ASGI middleware: one line per HTTP request, flushed before the app runs."""

    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            names = (b"user-agent", b"x-loomsync-version", b"x-loomsync-platform")
            values = [headers.get(name, b"-").decode("latin-1") for name in names]
            with open(self.path, "a", encoding="utf-8") as log:
                log.write("\t".join([f"{scope['method']} {scope['path']}", *values]) + "\n")
            request = f"{scope['method']} {scope['path']}"
            if scope["method"] in WRITES and os.path.exists(self.path + ".hold"):
                send = self._held(request, send)
            elif scope["method"] in WRITES and os.path.exists(self.path + ".drop-once"):
                send = self._dropped_once(request, send, receive)
        await self.app(scope, receive, send)

    def _held(self, request: str, send: Any) -> Any:
        """A ``send`` that never delivers the response (the app has already committed): the
        test then kills the server, so the client loses the answer to a write that was done."""

        async def hold(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                with open(self.path + ".held", "a", encoding="utf-8") as log:
                    log.write(f"{request}\t{message['status']}\n")
                while True:
                    await asyncio.sleep(3600)
            await send(message)

        return hold

    def _dropped_once(self, request: str, send: Any, receive: Any) -> Any:
        """A ``send`` that, if it is first to take the ``.drop-once`` file, never delivers the
        response (the app has already committed) and returns once the client disconnected."""
        dropping = False

        async def drop(message: dict[str, Any]) -> None:
            nonlocal dropping
            if message["type"] == "http.response.start":
                try:
                    os.remove(self.path + ".drop-once")
                    dropping = True
                except FileNotFoundError:
                    pass
            if not dropping:
                await send(message)
                return
            if message["type"] == "http.response.start":
                with open(self.path + ".held", "a", encoding="utf-8") as log:
                    log.write(f"{request}\t{message['status']}\n")
                while (await receive())["type"] != "http.disconnect":
                    pass

        return drop


def create() -> ASGIApp:
    """The app, wrapped in :class:`RequestLog` when ``LOOMSYNC_TEST_REQUEST_LOG`` is set."""
    app = create_app()
    path = os.environ.get("LOOMSYNC_TEST_REQUEST_LOG")
    return RequestLog(app, path) if path else app
