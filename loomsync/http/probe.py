"""Is the server there, which version is it, and does it take the token? (``loomsync status``,
issue 16 item 5.)

Three requests, none retried, each within ``timeout`` seconds: ``GET /health`` (API.md section
6: the process is up; no token needed), ``GET /openapi.json`` (its ``info.version`` is the
server's version: API.md names no version endpoint, and the OpenAPI document is what the
server already publishes), and ``GET /api/threads?limit=1`` with the token (the one way to learn
whether the server accepts it: the client cannot verify a signature).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loomsync.errors import AuthError, NetworkError, SyncError
from loomsync.http.client import ThreadSyncClient

TokenVerdict = Literal["accepted", "refused", "unchecked"]


@dataclass(frozen=True)
class ServerCheck:
    """What :func:`check` found.

    ``reachable``: ``/health`` answered 200. ``version``: the server's own (None when it does
    not say). ``token``: ``accepted``, ``refused`` (401: expired, revoked or not signed by this
    server) or ``unchecked`` (no token, or the server could not be asked). ``detail``: why it
    is unreachable, why the token was refused, or what else went wrong (raw server or network
    text: make it printable before showing it).
    """

    reachable: bool
    version: str | None = None
    token: TokenVerdict = "unchecked"
    detail: str | None = None


def _version(client: ThreadSyncClient) -> str | None:
    try:
        document = client.request("GET", "/openapi.json", retries=0).json()
    except (SyncError, ValueError):
        return None
    info = document.get("info") if isinstance(document, dict) else None
    version = info.get("version") if isinstance(info, dict) else None
    return version if isinstance(version, str) and version else None


def check(server_url: str, token: str | None, *, timeout: float = 5.0) -> ServerCheck:
    """Ask the server at ``server_url`` (module docstring). Never raises for what the server
    or the network does: the answer says it.

    Raises:
        ConfigError: ``server_url`` is not an http(s) URL.
    """
    with ThreadSyncClient(server_url, token, timeout=timeout, retries=0) as client:
        try:
            client.request("GET", "/health", retries=0)
        except NetworkError as exc:
            return ServerCheck(False, detail=exc.detail or str(exc))
        except SyncError as exc:
            return ServerCheck(False, detail=exc.detail or f"status {exc.status}")
        version = _version(client)
        if not token:
            return ServerCheck(True, version)
        try:
            client.list_threads(limit=1)
        except AuthError as exc:
            if exc.status == 401:
                return ServerCheck(True, version, "refused", exc.detail or "unauthorized")
            return ServerCheck(True, version, "unchecked", exc.detail)
        except SyncError as exc:
            return ServerCheck(True, version, "unchecked", exc.detail or str(exc))
        return ServerCheck(True, version, "accepted")


__all__ = ["ServerCheck", "TokenVerdict", "check"]
