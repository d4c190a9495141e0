"""Credentials found by the detector's field rules, not its text rules (review P1-1, P3-11): a
secret-named JSON key, a token under a nested ``id`` key (structure only at a thread's, a
message's or a tool call's own level), a message's ``extra.db_password`` and a URL's userinfo
in ``git_remote_url``. Under ``reject`` each write answers 422 naming the location and kind and
stores nothing; under ``redact`` it is stored redacted, audited and counted; for POST, PUT,
append and PATCH, through the real uvicorn processes of tests/threads/scan_support.py.

Before the fix the server re-derived the spots with ``Redactor.find`` on each changed string,
which knows none of these rules: ``reject`` stored them as sent (201), ``redact`` stored the
marker with no audit event and no count.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import marker
from tests.threads.planted import github_token
from tests.threads.scan_support import (
    assert_absent,
    audit_events,
    existing_thread,
    secrets_count,
    seed,
)

Path = tuple[str | int, ...]
MESSAGE: Path = ("conversation", "messages", 0)


@dataclass(frozen=True)
class Case:
    """A credential at ``path`` of a thread (a document's own position), of ``kind``; once
    redacted the string is ``stored``."""

    path: Path
    secret: str
    kind: str
    stored: str


def cases(tag: str) -> dict[str, Case]:
    """The four placements, with values made from ``tag`` (invented, never real)."""
    password = f"Zq8p{tag[:8]}"
    url = f"https://deploy:{password}@git.example.com/o/r.git"
    token = github_token(tag)
    return {
        "secret-named-key": Case(
            ("metadata", "extra", "password"),
            "Tr0ub4dor&3x",
            "secret-assignment",
            marker("secret-assignment"),
        ),
        "nested-id": Case(
            ("metadata", "extra", "build", "id"), token, "github-token", marker("github-token")
        ),
        "message-id": Case((*MESSAGE, "id"), token, "github-token", marker("github-token")),
        "tool-call-id": Case(
            (*MESSAGE, "tool_calls", 0, "id"), token, "github-token", marker("github-token")
        ),
        "tool-call-id-ref": Case(
            (*MESSAGE, "tool_call_id"), token, "github-token", marker("github-token")
        ),
        "message-extra": Case(
            (*MESSAGE, "extra", "db_password"),
            password,
            "secret-assignment",
            marker("secret-assignment"),
        ),
        "url-userinfo": Case(
            ("git_remote_url",), url, "url-password", "https://git.example.com/o/r.git"
        ),
    }


def place(path: Path, value: Any) -> dict[str, Any]:
    """A JSON object holding ``value`` at ``path``; an int step is a one-item list whose item
    is a tool message, or a tool call under ``tool_calls`` (valid once its other fields are
    added)."""
    root: dict[str, Any] = {}
    node: Any = root
    for step, after in itertools.pairwise(path):
        if isinstance(after, int) and step == "tool_calls":
            node[step] = [{"tool_name": "x", "arguments_json": {}}]
        elif isinstance(after, int):
            node[step] = [{"role": "tool", "content": "ok"}]
        elif isinstance(step, int):
            continue
        else:
            node[step] = {}
        node = node[step][0] if isinstance(after, int) else node[step]
    node[path[-1]] = value
    return root


def body_path(endpoint: str, path: Path) -> Path | None:
    """Where ``path`` goes in ``endpoint``'s body; None when the body has no such place (a patch
    holds no messages). An append carries the metadata cases in its message's ``extra``; a
    patch carries the URL in ``metadata.extra``."""
    if endpoint in ("post", "put"):
        return path
    if endpoint == "append":
        if path[0] == "git_remote_url":
            return path
        rest = path[len(MESSAGE) :] if path[:3] == MESSAGE else ("extra", *path[2:])
        return ("messages", 0, *rest)
    if path[0] == "git_remote_url":
        return ("metadata", "extra", "remote")
    return None if path[:3] == MESSAGE else path


def stored_path(endpoint: str, at: Path) -> Path:
    """Where a body's ``at`` is in the stored thread (an append's message 0 is message 2)."""
    return (
        ("conversation", "messages", 2, *at[2:])
        if endpoint == "append" and at[0] == "messages"
        else at
    )


def expected_details(endpoint: str, at: Path, kind: str) -> dict[str, Any]:
    """The audit details of the write: the message's index in the thread, or the field."""
    in_message = at[0] == "messages" or at[:2] == ("conversation", "messages")
    index = 2 if endpoint == "append" else 0
    return {
        "kinds": {kind: 1},
        "message_indexes": [index] if in_message else [],
        "fields": [] if in_message else [str(at[0])],
    }


def send(
    client: httpx.Client, headers: dict[str, str], endpoint: str, at: Path, value: str
) -> tuple[str, httpx.Response]:
    """Write ``value`` at ``at`` of ``endpoint``'s body: (thread id, answer). Every endpoint but
    POST writes a thread of two messages at version 1 first."""
    body = place(at, value)
    if endpoint == "post":
        tid = ThreadId.new()
        return tid, client.post("/api/threads", json={**body, "id": tid}, headers=headers)
    tid = existing_thread(client, headers)
    if endpoint == "put":
        return tid, client.put(f"/api/threads/{tid}", json={**body, "version": 1}, headers=headers)
    if endpoint == "append":
        url = f"/api/threads/{tid}/messages"
        return tid, client.post(url, json=body, headers={**headers, "If-Match": '"1"'})
    return tid, client.patch(f"/api/threads/{tid}", json=body, headers=headers)


def dig(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


COMBINATIONS = [
    (endpoint, name)
    for endpoint in ("post", "put", "append", "patch")
    for name, case in cases("x" * 32).items()
    if body_path(endpoint, case.path) is not None
]


@pytest.mark.parametrize(("endpoint", "name"), COMBINATIONS)
def test_reject_refuses_field_rule_credentials_naming_where_and_stores_nothing(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
    name: str,
) -> None:
    client, case = scan_http("reject"), cases(seed())[name]
    at = body_path(endpoint, case.path)
    assert at is not None
    before = secrets_count(client, case.kind, "rejected")
    tid, answer = send(client, alice, endpoint, at, case.secret)
    assert answer.status_code == 422, answer.text
    assert [(e["loc"], e["kind"]) for e in answer.json()["errors"]] == [(["body", *at], case.kind)]
    assert_absent(answer.text, case.secret)
    got = client.get(f"/api/threads/{tid}", headers=alice)
    if endpoint == "post":
        assert got.status_code == 404
    else:
        assert got.json()["version"] == 1
        assert_absent(got.text, case.secret)
    [event] = audit_events(client, admin, tid, "thread.secrets_rejected")
    assert event["details"] == expected_details(endpoint, at, case.kind)
    assert_absent(json.dumps(audit_events(client, admin, tid)), case.secret)
    assert secrets_count(client, case.kind, "rejected") == before + 1


@pytest.mark.parametrize(("endpoint", "name"), COMBINATIONS)
def test_redact_stores_field_rule_credentials_redacted_audited_and_counted(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
    name: str,
) -> None:
    client, case = scan_http("redact"), cases(seed())[name]
    at = body_path(endpoint, case.path)
    assert at is not None
    before = secrets_count(client, case.kind, "redacted")
    tid, answer = send(client, alice, endpoint, at, case.secret)
    assert answer.status_code in (200, 201), answer.text
    assert_absent(answer.text, case.secret)
    got = client.get(f"/api/threads/{tid}", headers=alice)
    assert_absent(got.text, case.secret)
    assert dig(got.json(), stored_path(endpoint, at)) == case.stored
    [event] = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert event["details"] == expected_details(endpoint, at, case.kind)
    assert_absent(json.dumps(audit_events(client, admin, tid)), case.secret)
    assert secrets_count(client, case.kind, "redacted") == before + 1
