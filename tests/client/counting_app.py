"""uvicorn factory for the client tests: the real app, recording every request it receives.

``uvicorn tests.client.counting_app:create --factory`` serves ``app.asgi.create()`` and appends
``METHOD PATH`` (then, tab-separated, the ``User-Agent``, ``X-Loomsync-Version`` and
``X-Loomsync-Platform`` headers) for each HTTP request to the file named by
``LOOMSYNC_TEST_REQUEST_LOG``, before the app sees it. The tests count lines to prove how many
requests reached the server.
"""

from __future__ import annotations

import os
from typing import Any

from app.asgi import create as create_app

ASGIApp = Any


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
        await self.app(scope, receive, send)


def create() -> ASGIApp:
    """The app, wrapped in :class:`RequestLog` when ``LOOMSYNC_TEST_REQUEST_LOG`` is set."""
    app = create_app()
    path = os.environ.get("LOOMSYNC_TEST_REQUEST_LOG")
    return RequestLog(app, path) if path else app
