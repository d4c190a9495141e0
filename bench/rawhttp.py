"""Two HTTP/1.1 clients with one keep-alive connection each, for load generators.

:class:`HttpxSender` is what a real client uses (httpx). :class:`RawSender` writes the request
bytes itself and reads ``Content-Length`` or chunked bodies off an asyncio stream: about a tenth
of httpx's CPU a request, so that on a machine where the load generator shares the cores with
the server and the database, the server's throughput is what gets measured.
"""

from __future__ import annotations

import asyncio
from typing import Protocol
from urllib.parse import urlsplit

import httpx


class Sender(Protocol):
    """Sends one request at a time on one connection."""

    async def send(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """(status, response body) of a request with a JSON ``body`` (may be empty)."""
        ...

    async def close(self) -> None:
        """Close the connection."""
        ...


class HttpxSender:
    """:class:`Sender` over an ``httpx.AsyncClient`` limited to one connection."""

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        limits = httpx.Limits(max_connections=1)
        self.client = httpx.AsyncClient(base_url=base, headers=headers, limits=limits, timeout=60)

    async def send(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """(status, body); see :class:`Sender`."""
        extra = {"Content-Type": "application/json", **headers} if body else headers
        response = await self.client.request(method, path, content=body or None, headers=extra)
        return response.status_code, response.content

    async def close(self) -> None:
        """Close the client."""
        await self.client.aclose()


class RawSender:
    """:class:`Sender` writing HTTP/1.1 by hand on one asyncio stream (opened on first use)."""

    def __init__(self, base: str, headers: dict[str, str]) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        fixed = {"Host": f"{self.host}:{self.port}", **headers}
        self.fixed = "".join(f"{k}: {v}\r\n" for k, v in fixed.items())
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def send(
        self, method: str, path: str, body: bytes, headers: dict[str, str]
    ) -> tuple[int, bytes]:
        """(status, body); see :class:`Sender`."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        lines = self.fixed + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        if body:
            lines += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(f"{method} {path} HTTP/1.1\r\n{lines}\r\n".encode() + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head[9:12])
        fields = {}
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            fields[name.strip().lower()] = value.strip()
        if "content-length" in fields:
            return status, await self.reader.readexactly(int(fields["content-length"]))
        chunks = []
        while size := int((await self.reader.readuntil(b"\r\n")).strip(), 16):
            chunks.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)
        await self.reader.readexactly(2)
        return status, b"".join(chunks)

    async def close(self) -> None:
        """Close the stream."""
        if self.writer is not None:
            self.writer.close()
