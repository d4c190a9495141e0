"""The server's second line of defence (issue 12 item 4): ``LOOMSYNC_SECRET_SCAN`` = ``redact``
(the default) | ``reject`` | ``off`` on every write that brings text (POST create, PUT, append,
PATCH), through real uvicorn processes, one per mode, on the test database.

Each test plants invented credentials (tests/threads/planted.py) made from its own seed, and
checks what was stored (GET), answered, audited (``GET /api/audit``, never a value) and counted
(``/metrics``). Isolation: unique users per test (tests/conftest.py).
"""

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
from loomsync.ids import ThreadId
from loomsync.secrets import marker
from tests.conftest import TokenFactory
from tests.servers import app_env, uvicorn_server
from tests.threads.planted import aws_access_key, github_token, planted, private_key

MODES = ("redact", "reject", "off")
AWS, GITHUB, PEM = "aws-access-key", "github-token", "private-key"


@pytest.fixture(scope="module")
def servers(database_url: str, settings: Settings) -> Iterator[dict[str, str]]:
    """Base URL of a server per mode; ``redact`` is started without the variable (the default)."""
    with contextlib.ExitStack() as stack:
        urls = {}
        for mode in MODES:
            extra = {} if mode == "redact" else {"LOOMSYNC_SECRET_SCAN": mode}
            env = app_env(database_url, settings, **extra)
            urls[mode] = stack.enter_context(uvicorn_server(env)).base_url
        yield urls


@pytest.fixture
def http(servers: dict[str, str]) -> Iterator[Callable[[str], httpx.Client]]:
    """``http(mode)``: a client of that mode's server."""
    with contextlib.ExitStack() as stack:
        clients: dict[str, httpx.Client] = {}

        def client(mode: str) -> httpx.Client:
            if mode not in clients:
                clients[mode] = stack.enter_context(
                    httpx.Client(base_url=servers[mode], timeout=60)
                )
            return clients[mode]

        yield client


@pytest.fixture
def alice(auth: TokenFactory, new_user: Callable[[str], str]) -> dict[str, str]:
    return auth(new_user("alice"), org="acme-secrets")


@pytest.fixture
def admin(auth: TokenFactory, new_user: Callable[[str], str]) -> dict[str, str]:
    return auth(new_user("auditor"), roles=("admin",))


def seed() -> str:
    return uuid.uuid4().hex


def audit_events(
    client: httpx.Client, admin: dict[str, str], thread: str, action: str | None = None
) -> list[dict[str, Any]]:
    params = {"thread": thread, **({"action": action} if action else {})}
    response = client.get("/api/audit", params=params, headers=admin)
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


def assert_absent(text: str, *secrets: str) -> None:
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
                {"role": "tool", "content": f"AWS_ACCESS_KEY_ID={keys[AWS]}\nregion=eu-west-1"},
                {
                    "role": "assistant",
                    "content": "cloning",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "tool_name": "bash",
                            "arguments_json": {"cmd": f"git clone https://{keys[GITHUB]}@x/y"},
                        }
                    ],
                },
            ]
        },
    }
    if tid is not None:
        doc["id"] = tid
    return doc


# ---- redact (the default) ------------------------------------------------------------------


def test_redact_is_the_default_and_a_create_stores_and_answers_markers(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    keys = planted(seed())
    client = http("redact")
    created = client.post("/api/threads", json=secret_doc(keys), headers=alice)
    assert created.status_code == 201, created.text
    body = created.json()
    assert_absent(created.text, *keys.values())
    assert body["metadata"]["title"] == f"deploy key {marker(PEM)}"
    messages = body["conversation"]["messages"]
    assert messages[1]["content"] == f"AWS_ACCESS_KEY_ID={marker(AWS)}\nregion=eu-west-1"
    cmd = messages[2]["tool_calls"][0]["arguments_json"]["cmd"]
    assert cmd == f"git clone https://{marker(GITHUB)}@x/y"
    stored = client.get(f"/api/threads/{body['id']}", headers=alice)
    assert stored.json() == body
    [event] = audit_events(client, admin, body["id"], "thread.secrets_redacted")
    assert event["details"] == {
        "kinds": {AWS: 1, GITHUB: 1, PEM: 1},
        "message_indexes": [1, 2],
        "fields": ["metadata"],
    }
    assert_absent(json.dumps(audit_events(client, admin, body["id"])), *keys.values())


def test_redact_on_put_create_and_replace(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = http("redact")
    tid = ThreadId.new()
    first, second = planted(seed()), planted(seed())
    created = client.put(f"/api/threads/{tid}", json=secret_doc(first, tid), headers=alice)
    assert created.status_code == 201
    replaced = client.put(
        f"/api/threads/{tid}",
        json={**secret_doc(second, tid), "version": 1},
        headers=alice,
    )
    assert replaced.status_code == 200, replaced.text
    assert_absent(replaced.text, *first.values(), *second.values())
    assert marker(AWS) in replaced.json()["conversation"]["messages"][1]["content"]
    got = client.get(f"/api/threads/{tid}", headers=alice)
    assert_absent(got.text, *first.values(), *second.values())
    events = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert len(events) == 2


def test_redact_on_append_scans_only_the_new_messages_and_names_thread_indexes(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, key = http("redact"), aws_access_key(seed())
    off = http("off")  # a stored message holding a key (stored under off) is not scanned again
    tid = ThreadId.new()
    old = aws_access_key(seed())
    doc = {"conversation": {"messages": [{"role": "user", "content": f"old {old}"}] * 3}}
    assert off.put(f"/api/threads/{tid}", json=doc, headers=alice).status_code == 201
    appended = client.post(
        f"/api/threads/{tid}/messages",
        json={
            "messages": [
                {"role": "assistant", "content": "ok"},
                {"role": "tool", "content": f"key: {key}"},
            ],
            "agent_state": {"kind": "error", "last_error": f"denied for {key}"},
        },
        headers={**alice, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    assert appended.json()["message_count"] == 5
    got = client.get(f"/api/threads/{tid}", headers=alice).json()
    assert got["conversation"]["messages"][4]["content"] == f"key: {marker(AWS)}"
    assert got["agent_state"]["last_error"] == f"denied for {marker(AWS)}"
    assert got["conversation"]["messages"][0]["content"] == f"old {old}"
    [event] = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert event["details"] == {
        "kinds": {AWS: 2},
        "message_indexes": [4],
        "fields": ["agent_state"],
    }


def test_redact_on_patch_of_title_tags_and_extra(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, token = http("redact"), github_token(seed())
    tid = ThreadId.new()
    assert client.put(f"/api/threads/{tid}", json={}, headers=alice).status_code == 201
    patch = {"metadata": {"title": token, "tags": [f"t {token}"], "extra": {"note": token}}}
    patched = client.patch(f"/api/threads/{tid}", json=patch, headers=alice)
    assert patched.status_code == 200, patched.text
    assert_absent(patched.text, token)
    metadata = patched.json()["metadata"]
    assert metadata["title"] == marker(GITHUB)
    assert metadata["tags"] == [f"t {marker(GITHUB)}"]
    assert metadata["extra"] == {"note": marker(GITHUB)}
    assert_absent(client.get(f"/api/threads/{tid}", headers=alice).text, token)
    [event] = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert event["details"] == {"kinds": {GITHUB: 3}, "message_indexes": [], "fields": ["metadata"]}


def test_fork_brings_no_text_and_is_not_scanned(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    """Decision (issue 12 item 4): a fork copies what its source holds, which its caller reads
    already; the request brings no text. Old unredacted data is the client's ``loomsync
    redact`` to fix."""
    key = aws_access_key(seed())
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": key}]}}
    assert http("off").put(f"/api/threads/{tid}", json=doc, headers=alice).status_code == 201
    for mode in ("redact", "reject"):
        fork = http(mode).post(f"/api/threads/{tid}/fork", headers=alice)
        assert fork.status_code == 201, fork.text
        assert fork.json()["conversation"]["messages"][0]["content"] == key
        assert audit_events(http(mode), admin, fork.json()["id"], "thread.secrets_redacted") == []


def test_a_clean_document_is_stored_byte_for_byte(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = http("redact")
    tid = ThreadId.new()
    message = (
        '{"role":"tool","content":"AKIA-not-a-key \\u0000 ghp_short \\ud800 -----BEGIN","n":1E2,'
        '"neg":-0,"deep":{"x":[0.50,{"y":"ok"}]},"future_field":"kept"}'
    )
    raw = (
        f'{{"id":"{tid}","metadata":{{"title":"t","extra":{{"big":123456789012345678901234567890}}'
        f'}},"conversation":{{"messages":[{message}]}}}}'
    )
    headers = {**alice, "Content-Type": "application/json"}
    created = client.put(f"/api/threads/{tid}", content=raw.encode(), headers=headers)
    assert created.status_code == 201, created.text
    got = client.get(f"/api/threads/{tid}", headers=alice)
    assert f'"messages":[{message}]' in got.text
    assert '"big":123456789012345678901234567890' in got.text
    assert audit_events(client, admin, tid, "thread.secrets_redacted") == []


# ---- reject --------------------------------------------------------------------------------


def _existing(client: httpx.Client, headers: dict[str, str]) -> str:
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": "hello"}] * 2}}
    assert client.put(f"/api/threads/{tid}", json=doc, headers=headers).status_code == 201
    return tid


def _write(
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
    tid = _existing(client, headers)
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
#: The audit details each endpoint's write of ``_write`` leaves.
EXPECTED_DETAILS = {
    "post": {"kinds": {AWS: 1}, "message_indexes": [1], "fields": []},
    "put-create": {"kinds": {AWS: 1}, "message_indexes": [], "fields": ["metadata"]},
    "put-replace": {"kinds": {AWS: 1}, "message_indexes": [0], "fields": []},
    "append": {"kinds": {AWS: 1}, "message_indexes": [3], "fields": []},
    "patch": {"kinds": {AWS: 1}, "message_indexes": [], "fields": ["metadata"]},
}


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_reject_answers_422_naming_where_and_which_kind_and_stores_nothing(
    http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
) -> None:
    client, key = http("reject"), aws_access_key(seed())
    before = secrets_count(client, AWS, "rejected")
    tid, answer, locs = _write(client, alice, endpoint, key)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"] == "application/problem+json"
    problem = answer.json()
    assert problem["code"] == "validation_error"
    assert problem["status"] == 422
    assert [e["loc"] for e in problem["errors"]] == locs
    assert [e["kind"] for e in problem["errors"]] == [AWS]
    assert_absent(answer.text, key)
    got = client.get(f"/api/threads/{tid}", headers=alice)
    if endpoint in ("post", "put-create"):
        assert got.status_code == 404
    else:
        assert got.json()["version"] == 1  # nothing written
        assert_absent(got.text, key)
    [event] = audit_events(client, admin, tid, "thread.secrets_rejected")
    assert event["details"] == EXPECTED_DETAILS[endpoint]
    assert_absent(json.dumps(audit_events(client, admin, tid)), key)
    assert secrets_count(client, AWS, "rejected") == before + 1


def test_reject_lists_at_most_20_errors(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = http("reject")
    keys = [aws_access_key(seed()) for _ in range(25)]
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": k} for k in keys]}}
    answer = client.put(f"/api/threads/{tid}", json=doc, headers=alice)
    assert answer.status_code == 422
    errors = answer.json()["errors"]
    assert len(errors) == 20
    assert [e["loc"][3] for e in errors] == list(range(20))
    assert_absent(answer.text, *keys)
    [event] = audit_events(client, admin, tid, "thread.secrets_rejected")
    assert event["details"]["kinds"] == {AWS: 25}
    assert event["details"]["message_indexes"] == list(range(25))


def test_reject_cuts_long_field_names_in_locations_and_audit(
    http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, key = http("reject"), aws_access_key(seed())
    name = "f" * 5000  # an unknown field's name is client input too
    tid = ThreadId.new()
    answer = client.put(f"/api/threads/{tid}", json={name: {"x": key}}, headers=alice)
    assert answer.status_code == 422
    [error] = answer.json()["errors"]
    assert error["loc"] == ["body", "f" * 64 + "…", "x"]
    assert name not in answer.text
    [event] = audit_events(client, admin, tid, "thread.secrets_rejected")
    assert event["details"]["fields"] == ["f" * 64 + "…"]


def test_reject_lets_a_clean_write_through(
    http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    client = http("reject")
    tid = _existing(client, alice)
    appended = client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [{"role": "user", "content": "no secrets here"}]},
        headers={**alice, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text


# ---- off -----------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_off_stores_what_is_sent_and_audits_nothing(
    http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
) -> None:
    client, key = http("off"), aws_access_key(seed())
    tid, answer, _ = _write(client, alice, endpoint, key)
    assert answer.status_code in (200, 201), answer.text
    assert key in client.get(f"/api/threads/{tid}", headers=alice).text
    actions = {e["action"] for e in audit_events(client, admin, tid)}
    assert not actions & {"thread.secrets_redacted", "thread.secrets_rejected"}


# ---- metrics -------------------------------------------------------------------------------


def test_metrics_count_redacted_credentials_by_kind(
    http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    client = http("redact")
    before = {kind: secrets_count(client, kind, "redacted") for kind in (AWS, GITHUB, PEM)}
    keys = planted(seed())
    assert client.post("/api/threads", json=secret_doc(keys), headers=alice).status_code == 201
    pem = private_key(seed())
    tid = _existing(client, alice)
    patched = client.patch(f"/api/threads/{tid}", json={"metadata": {"title": pem}}, headers=alice)
    assert patched.status_code == 200
    after = {kind: secrets_count(client, kind, "redacted") for kind in (AWS, GITHUB, PEM)}
    assert after == {AWS: before[AWS] + 1, GITHUB: before[GITHUB] + 1, PEM: before[PEM] + 2}
    assert secrets_count(http("off"), AWS, "redacted") == 0
