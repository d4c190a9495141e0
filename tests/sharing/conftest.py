"""Fixtures of the share-link tests: a thread of the test's own owner, and links to it.

Isolation: each test works as its own users (``new_user``), so it sees only its own threads,
links and audit events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.conftest import TokenFactory


@dataclass
class Shared:
    """A private thread of ``owner`` (``headers``) with two messages."""

    client: httpx.AsyncClient
    owner: str
    headers: dict[str, str]
    thread_id: str

    @property
    def links(self) -> str:
        """``/api/threads/{id}/share-links``."""
        return f"/api/threads/{self.thread_id}/share-links"

    async def make_link(self, body: Any = None, headers: dict[str, str] | None = None) -> Any:
        """POST a link (``body`` as JSON, or none); the 201 answer's JSON."""
        response = await self.client.post(self.links, json=body, headers=headers or self.headers)
        assert response.status_code == 201, response.text
        return response.json()


def secret_of(url: str) -> str:
    """The secret at the end of a link's ``…/s/<secret>`` URL."""
    head, _, secret = url.rpartition("/s/")
    assert head, url
    assert secret, url
    return secret


@pytest.fixture
async def shared(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> Shared:
    """A private thread of a fresh owner, ready to be shared by link."""
    owner = new_user("owner")
    headers = auth(owner, org=new_org("acme"))
    created = await client.post(
        "/api/threads",
        json={
            "metadata": {"title": "Fix the login redirect"},
            "conversation": {
                "messages": [
                    {"role": "user", "content": "the login page loops"},
                    {"role": "assistant", "content": "Let me look at `login.py`."},
                ]
            },
        },
        headers=headers,
    )
    assert created.status_code == 201, created.text
    assert created.json()["visibility"] == "private"
    return Shared(client, owner, headers, created.json()["id"])
