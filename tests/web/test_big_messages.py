"""A page of large messages reads their digests, not their bodies (app/web/clipped.py, review
finding G1): what a page read holds of a 5 MB message is bounded, while the page still shows
its preview, its whole size and "show all", and ``/m/{seq}`` still shows all of it."""

from __future__ import annotations

import re
import uuid
from typing import Any

import httpx
from fastapi import FastAPI

from app.auth import Principal
from app.web.clipped import CLIP_CHARS, Clipped, partial_string, restore
from app.web.reading import read_for
from loomsync.core.document import jsontext
from tests.web.documents import document

MB = 1024 * 1024
BIG = "y" * (5 * MB)
CODEX = jsontext.dumps({"output": "z\n" * MB, "metadata": {"exit_code": 3}})
WRITE = {"file_path": "/src/app.py", "content": "x = 1\n" * (MB // 2)}


def _messages() -> list[dict[str, Any]]:
    return [
        {"role": "tool", "tool_name": "bash", "content": BIG},
        {"role": "assistant", "content": "# big\n" + "a\x00\u202e b\n" * (MB // 4)},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"tool_name": "Write", "arguments_json": WRITE},
                {"tool_name": "Echo", "arguments_json": "e" * MB},
            ],
        },
        {"role": "tool", "tool_name": "shell", "content": CODEX},
        {"role": "user", "content": "small"},
    ]


def _held(value: Any) -> int:
    """Characters of strings in a decoded message."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(_held(v) for v in value.values())
    if isinstance(value, list):
        return sum(_held(v) for v in value)
    return 0


async def _store(client: httpx.AsyncClient, owner: dict[str, str]) -> str:
    doc = document(_messages(), visibility="public")
    response = await client.put(f"/api/threads/{doc['id']}", json=doc, headers=owner)
    assert response.status_code == 201, response.text
    return str(doc["id"])


async def test_a_page_read_holds_a_bounded_part_of_each_large_message(
    app: FastAPI, client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    thread_id = await _store(client, owner)
    anyone = Principal(user_id=None, org_id=None, roles=frozenset())
    async with app.state.sessionmaker() as session:
        loaded = await read_for(session, anyone, uuid.UUID(thread_id[2:]), 0, 50)
    held = [_held(body) for _, body in loaded.messages]
    assert all(size < 4 * CLIP_CHARS for size in held), held
    assert loaded.messages[4][1] == _messages()[4]  # a small message is read whole
    async with app.state.sessionmaker() as session:
        whole = await read_for(session, anyone, uuid.UUID(thread_id[2:]), 0, 1, whole=True)
    assert whole.messages[0][1]["content"] == BIG


async def test_the_page_shows_previews_whole_sizes_and_show_all(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    thread_id = await _store(client, owner)
    html = (await client.get(f"/t/{thread_id}")).text
    assert len(html) < 200_000
    assert "yyyy" in html
    sizes = re.findall('class="size">([^<]*)', html)
    assert sizes == ["5.0 MB", "3.0 MB", "1.0 MB", "2.0 MB"]  # each part's whole size
    assert "z\nz\n" in html
    assert '"output"' not in html
    assert html.count("show all") + html.count("Show all") >= 4
    full = await client.get(f"/t/{thread_id}/m/0/body")
    assert full.status_code == 200
    assert full.text.count("y") >= 1_000_000


def test_placeholders_restore_as_clipped_prefixes() -> None:
    restored = restore({"a": {"~loomsync.text": "abcd", "~loomsync.bytes": 100}, "b": [1]})
    assert isinstance(restored["a"], Clipped)
    assert restored["a"] == "abcd"
    assert restored["a"].full_bytes == 100
    assert restored["b"] == [1]
    assert partial_string('"tab\\') == "tab"
