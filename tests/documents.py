"""Comparing documents the way API.md section 2's round-trip guarantee allows."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

import httpx

from loomsync.core.document.ids import ThreadId

SERVER_SET = ("version", "updated_at", "owner_id", "org_id", "archived_at", "message_count")
THREAD_TIMESTAMPS = ("created_at", "last_activity_at")


def _instant(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def comparable(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` without server-set fields, thread timestamps as UTC instants."""
    out = copy.deepcopy(doc)
    for key in SERVER_SET:
        out.pop(key, None)
    for key in THREAD_TIMESTAMPS:
        if isinstance(out.get(key), str):
            out[key] = _instant(out[key])
    return out


def thread_doc(tid: ThreadId | None = None, *texts: str, **fields: Any) -> dict[str, Any]:
    """A thread document: one user message per text, ``id`` when ``tid`` is given, then
    ``fields``."""
    doc: dict[str, Any] = {
        "conversation": {"messages": [{"role": "user", "content": t} for t in texts]}
    }
    if tid is not None:
        doc["id"] = tid
    return {**doc, **fields}


async def create_thread(
    client: httpx.AsyncClient, headers: dict[str, str], *texts: str, **fields: Any
) -> str:
    """PUT a new thread (:func:`thread_doc` of a fresh id); its URL path. Fails unless 201."""
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", json=thread_doc(tid, *texts, **fields), headers=headers
    )
    assert response.status_code == 201, response.text
    return f"/api/threads/{tid}"


def assert_round_trip(sent: dict[str, Any], got: dict[str, Any]) -> None:
    """``got`` equals ``sent`` apart from what API.md §2 lets the server change."""
    for key in (*THREAD_TIMESTAMPS, "updated_at"):
        value = got.get(key)
        assert value is None or value.endswith("Z"), f"{key} is not UTC Z: {value!r}"
    assert got["conversation"]["messages"] == sent["conversation"]["messages"]
    assert comparable(got) == comparable(sent)
