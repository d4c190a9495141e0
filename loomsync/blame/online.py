"""Asking the server (``/api/provenance``, issue 32): the threads of the whole team the
caller may read, not only this machine's."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from loomsync.blame.answer import Hit

if TYPE_CHECKING:
    from loomsync.http.client import ThreadSyncClient


def _when(value: Any) -> datetime | None:
    try:
        return (
            datetime.fromisoformat(value.replace("Z", "+00:00")) if isinstance(value, str) else None
        )
    except ValueError:
        return None


#: Most UTF-8 bytes of a line's text sent: percent-encoded (up to 3 characters a byte) it
#: stays well inside the server's 32 KiB request head (LOOMSYNC_MAX_HEADER_BYTES).
MAX_TEXT_BYTES = 4096


def cut_utf8(text: str, limit: int = MAX_TEXT_BYTES) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, never inside a character (the server
    matches the line's start: a 4,096-character line of CJK is 12 KiB, 36 KiB encoded)."""
    return text.encode("utf-8", "surrogatepass")[:limit].decode("utf-8", "ignore")


def line_hits(
    client: ThreadSyncClient, path: str, text: str, commit: str | None, repository: str | None
) -> list[Hit]:
    """``GET /api/provenance/lines``. Raises the client's SyncError subclasses."""
    params = {"path": path, "text": cut_utf8(text), "commit": commit, "repository": repository}
    body = client.request("GET", "/api/provenance/lines", params=params).json()
    return [
        Hit(
            h["thread"]["id"],
            h["match"],
            h.get("message_index"),
            list(h.get("commits") or []),
            h["thread"].get("title"),
            _when(h["thread"].get("last_activity_at")),
        )
        for h in body.get("hits", [])
    ]


def commit_hits(client: ThreadSyncClient, sha: str, repository: str | None) -> list[Hit]:
    """``GET /api/provenance/commits/{sha}``, every page (at most 1000 threads)."""
    hits: list[Hit] = []
    cursor: str | None = None
    while len(hits) < 1000:
        params = {"repository": repository, "limit": 200, "cursor": cursor}
        body = client.request("GET", f"/api/provenance/commits/{sha}", params=params).json()
        for h in body.get("hits", []):
            files = sorted({t["path"] for t in h.get("touches", [])})
            hits.append(
                Hit(
                    h["thread"]["id"],
                    "commit",
                    None,
                    list(h.get("commits") or []),
                    h["thread"].get("title"),
                    _when(h["thread"].get("last_activity_at")),
                    files,
                )
            )
        cursor = body.get("next_cursor")
        if not cursor:
            break
    return hits
