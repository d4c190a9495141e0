"""What the secret-scan tests share (tests/threads/test_secret_scan.py, test_secret_reject.py):
a real uvicorn process per ``LOOMSYNC_SECRET_SCAN`` mode on the test database, started once for
the package (``redact`` without the variable: the default), and the writes they send."""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from app.config import Settings
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.servers import app_env, uvicorn_server

MODES = ("redact", "reject", "off")
AWS, GITHUB, PEM = "aws-access-key", "github-token", "private-key"


@pytest.fixture(scope="package")
def scan_servers(database_url: str, settings: Settings) -> Iterator[dict[str, str]]:
    """Base URL of a server per mode; ``redact`` is started without the variable (the default)."""
    with contextlib.ExitStack() as stack:
        urls = {}
        for mode in MODES:
            extra = {} if mode == "redact" else {"LOOMSYNC_SECRET_SCAN": mode}
            env = app_env(database_url, settings, **extra)
            urls[mode] = stack.enter_context(uvicorn_server(env)).base_url
        yield urls


@pytest.fixture
def scan_http(scan_servers: dict[str, str]) -> Iterator[Callable[[str], httpx.Client]]:
    """``scan_http(mode)``: a client of that mode's server."""
    with contextlib.ExitStack() as stack:
        clients: dict[str, httpx.Client] = {}

        def client(mode: str) -> httpx.Client:
            if mode not in clients:
                clients[mode] = stack.enter_context(
                    httpx.Client(base_url=scan_servers[mode], timeout=60)
                )
            return clients[mode]

        yield client


@pytest.fixture
def alice(auth: TokenFactory, new_user: Callable[[str], str]) -> dict[str, str]:
    """Headers of a user unique to the test."""
    return auth(new_user("alice"), org="acme-secrets")


@pytest.fixture
def admin(auth: TokenFactory, new_user: Callable[[str], str]) -> dict[str, str]:
    """Headers of an admin (who reads the audit trail), unique to the test."""
    return auth(new_user("auditor"), roles=("admin",))


def seed() -> str:
    """A fresh seed for :mod:`tests.threads.planted`: values no other test plants."""
    return uuid.uuid4().hex


def audit_events(
    client: httpx.Client, admin: dict[str, str], thread: str, action: str | None = None
) -> list[dict[str, Any]]:
    """The audit events of ``thread`` (of ``action``), newest first, read as ``admin``."""
    params = {"thread": thread, **({"action": action} if action else {})}
    response = client.get("/api/audit", params=params, headers=admin)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


def assert_absent(text: str, *secrets: str) -> None:
    """None of ``secrets`` is in ``text``, as written or JSON-escaped."""
    for secret in secrets:
        assert secret not in text
        assert json.dumps(secret)[1:-1] not in text  # nor JSON-escaped (a PEM's line breaks)


def secrets_count(client: httpx.Client, kind: str, action: str) -> float:
    """``loomsync_secrets_total{kind, action}`` of the server, 0 when not yet counted."""
    text = client.get("/metrics").text
    pattern = (
        rf'^loomsync_secrets_total\{{(?=[^}}]*action="{action}")(?=[^}}]*kind="{kind}")[^}}]*\}}'
        r" (\S+)$"
    )
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def secret_doc(keys: dict[str, str], tid: ThreadId | None = None) -> dict[str, Any]:
    """A thread with the AWS key in message 1's content, the GitHub token in message 2's tool-call
    arguments and the private key in the title."""
    doc: dict[str, Any] = {
        "metadata": {"title": f"deploy key {keys[PEM]}", "tags": ["ops"]},
        "conversation": {
            "messages": [
                {"role": "user", "content": "set up the deploy"},
                {"role": "tool", "content": f"aws iam list-access-keys\n{keys[AWS]}  Active"},
                {
                    "role": "assistant",
                    "content": "cloning",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "tool_name": "bash",
                            "arguments_json": {"cmd": f"gh api user # with {keys[GITHUB]}"},
                        }
                    ],
                },
            ]
        },
    }
    if tid is not None:
        doc["id"] = tid
    return doc


def existing_thread(client: httpx.Client, headers: dict[str, str]) -> str:
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": "hello"}] * 2}}
    assert client.put(f"/api/threads/{tid}", json=doc, headers=headers).status_code == 201
    return tid


def write_with_key(
    client: httpx.Client, headers: dict[str, str], endpoint: str, key: str
) -> tuple[str, httpx.Response, list[list[str | int]]]:
    """Send a write of ``endpoint`` holding ``key``; (thread id, answer, expected locations)."""
    with_key = {"role": "tool", "content": f"creds {key}"}
    if endpoint == "post":
        tid = ThreadId.new()
        doc = {
            "id": tid,
            "conversation": {"messages": [{"role": "user", "content": "x"}, with_key]},
        }
        loc: list[str | int] = ["body", "conversation", "messages", 1, "content"]
        return tid, client.post("/api/threads", json=doc, headers=headers), [loc]
    if endpoint == "put-create":
        tid = ThreadId.new()
        doc = {"metadata": {"title": key}}
        return (
            tid,
            client.put(f"/api/threads/{tid}", json=doc, headers=headers),
            [["body", "metadata", "title"]],
        )
    tid = existing_thread(client, headers)
    if endpoint == "put-replace":
        doc = {"version": 1, "conversation": {"messages": [with_key]}}
        loc = ["body", "conversation", "messages", 0, "content"]
        return tid, client.put(f"/api/threads/{tid}", json=doc, headers=headers), [loc]
    if endpoint == "append":
        body = {"messages": [{"role": "user", "content": "fine"}, with_key]}
        answer = client.post(
            f"/api/threads/{tid}/messages", json=body, headers={**headers, "If-Match": '"1"'}
        )
        return tid, answer, [["body", "messages", 1, "content"]]
    assert endpoint == "patch"
    patch = {"metadata": {"tags": ["a", key]}}
    answer = client.patch(f"/api/threads/{tid}", json=patch, headers=headers)
    return tid, answer, [["body", "metadata", "tags", 1]]


ENDPOINTS = ("post", "put-create", "put-replace", "append", "patch")
