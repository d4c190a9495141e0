"""A recording reverse proxy over real TCP, for counting what the client sent (issue 12).

:class:`RecordingProxy` is a small ASGI app served by uvicorn on a free port (in a thread of
the test process) that forwards every request to an upstream loomsync server with httpx and
keeps each request's method, path and body. With ``redactor`` it also plays a server that
redacts more than the client: the JSON body of every write is redacted with it before it is
forwarded (the server then stores and answers the redacted copy, as
``LOOMSYNC_SECRET_SCAN=redact`` does).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn

from loomsync.core.document import codec
from loomsync.core.secrets import Redactor
from tests.servers import free_port

_HOP = {b"host", b"content-length", b"connection", b"transfer-encoding", b"accept-encoding"}
_WRITES = {"PUT", "POST", "PATCH"}


@dataclass
class Recorded:
    """One request the proxy forwarded."""

    method: str
    path: str
    body: bytes


@dataclass
class RecordingProxy:
    """The proxy app: forwards to ``upstream`` and records every request in :attr:`requests`."""

    upstream: str
    redactor: Redactor | None = None
    requests: list[Recorded] = field(default_factory=list)

    def bodies(self) -> bytes:
        """Every request body, concatenated (what the server received, before redaction)."""
        return b"\n".join(r.body for r in self.requests)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests.append(Recorded(scope["method"], scope["path"], body))
        if self.redactor is not None and body and scope["method"] in _WRITES:
            body = codec.dumps(self.redactor.redact_value(codec.loads(body)))
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in _HOP]
        query = scope.get("query_string", b"").decode()
        url = f"{self.upstream}{scope['path']}" + (f"?{query}" if query else "")
        async with httpx.AsyncClient(timeout=60) as client:
            answer = await client.request(scope["method"], url, headers=headers, content=body)
        out = [(k.encode(), v.encode()) for k, v in answer.headers.items()]
        out = [(k, v) for k, v in out if k.lower() not in _HOP | {b"content-encoding"}]
        out.append((b"content-length", str(len(answer.content)).encode()))
        await send({"type": "http.response.start", "status": answer.status_code, "headers": out})
        await send({"type": "http.response.body", "body": answer.content})


@contextmanager
def recording_proxy(
    upstream: str, redactor: Redactor | None = None
) -> Iterator[tuple[str, RecordingProxy]]:
    """Serve a :class:`RecordingProxy` in front of ``upstream``: yields its URL and the app."""
    proxy = RecordingProxy(upstream.rstrip("/"), redactor)
    port = free_port()
    config = uvicorn.Config(proxy, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the recording proxy did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", proxy
    finally:
        server.should_exit = True
        thread.join(timeout=10)
