"""The server's second line of defence (issue 12 item 4): ``LOOMSYNC_SECRET_SCAN`` = ``redact``
(the default) | ``reject`` | ``off`` on every write that brings text (POST create, PUT, append,
PATCH), through real uvicorn processes, one per mode, on the test database.

Each test plants invented credentials (tests/threads/planted.py) made from its own seed, and
checks what was stored (GET), answered, audited (``GET /api/audit``, never a value) and counted
(``/metrics``). Isolation: unique users per test (tests/conftest.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import marker
from tests.threads.planted import aws_access_key, github_token, planted, private_key
from tests.threads.scan_support import (
    AWS,
    ENDPOINTS,
    GITHUB,
    PEM,
    assert_absent,
    audit_events,
    existing_thread,
    secret_doc,
    secrets_count,
    seed,
    write_with_key,
)

# ---- redact (the default) ------------------------------------------------------------------


def test_redact_is_the_default_and_a_create_stores_and_answers_markers(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    keys = planted(seed())
    client = scan_http("redact")
    created = client.post("/api/threads", json=secret_doc(keys), headers=alice)
    assert created.status_code == 201, created.text
    body = created.json()
    assert_absent(created.text, *keys.values())
    assert body["metadata"]["title"] == f"deploy key {marker(PEM)}"
    messages = body["conversation"]["messages"]
    assert messages[1]["content"] == f"aws iam list-access-keys\n{marker(AWS)}  Active"
    cmd = messages[2]["tool_calls"][0]["arguments_json"]["cmd"]
    assert cmd == f"gh api user # with {marker(GITHUB)}"
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = scan_http("redact")
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, key = scan_http("redact"), aws_access_key(seed())
    off = scan_http("off")  # a stored message holding a key (stored under off) is not scanned again
    tid = ThreadId.new()
    old = aws_access_key(seed())
    doc = {"conversation": {"messages": [{"role": "user", "content": f"old {old}"}] * 3}}
    assert off.put(f"/api/threads/{tid}", json=doc, headers=alice).status_code == 201
    appended = client.post(
        f"/api/threads/{tid}/messages",
        json={
            "messages": [
                {"role": "assistant", "content": "ok"},
                {"role": "tool", "content": f"found {key} in the logs"},
            ],
            "agent_state": {"kind": "error", "last_error": f"denied for {key}"},
        },
        headers={**alice, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    assert appended.json()["message_count"] == 5
    got = client.get(f"/api/threads/{tid}", headers=alice).json()
    assert got["conversation"]["messages"][4]["content"] == f"found {marker(AWS)} in the logs"
    assert got["agent_state"]["last_error"] == f"denied for {marker(AWS)}"
    assert got["conversation"]["messages"][0]["content"] == f"old {old}"
    [event] = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert event["details"] == {
        "kinds": {AWS: 2},
        "message_indexes": [4],
        "fields": ["agent_state"],
    }


def test_redact_on_patch_of_title_tags_and_extra(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, token = scan_http("redact"), github_token(seed())
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    """Decision (issue 12 item 4): a fork copies what its source holds, which its caller reads
    already; the request brings no text. Old unredacted data is the client's ``loomsync
    redact`` to fix."""
    key = aws_access_key(seed())
    tid = ThreadId.new()
    doc = {"conversation": {"messages": [{"role": "user", "content": key}]}}
    assert scan_http("off").put(f"/api/threads/{tid}", json=doc, headers=alice).status_code == 201
    for mode in ("redact", "reject"):
        fork = scan_http(mode).post(f"/api/threads/{tid}/fork", headers=alice)
        assert fork.status_code == 201, fork.text
        assert fork.json()["conversation"]["messages"][0]["content"] == key
        assert (
            audit_events(scan_http(mode), admin, fork.json()["id"], "thread.secrets_redacted") == []
        )


def test_a_clean_document_is_stored_byte_for_byte(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = scan_http("redact")
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


# ---- off -----------------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_off_stores_what_is_sent_and_audits_nothing(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
) -> None:
    client, key = scan_http("off"), aws_access_key(seed())
    tid, answer, _ = write_with_key(client, alice, endpoint, key)
    assert answer.status_code in (200, 201), answer.text
    assert key in client.get(f"/api/threads/{tid}", headers=alice).text
    actions = {e["action"] for e in audit_events(client, admin, tid)}
    assert not actions & {"thread.secrets_redacted", "thread.secrets_rejected"}


# ---- metrics -------------------------------------------------------------------------------


def test_metrics_count_redacted_credentials_by_kind(
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    client = scan_http("redact")
    before = {kind: secrets_count(client, kind, "redacted") for kind in (AWS, GITHUB, PEM)}
    keys = planted(seed())
    assert client.post("/api/threads", json=secret_doc(keys), headers=alice).status_code == 201
    pem = private_key(seed())
    tid = existing_thread(client, alice)
    patched = client.patch(f"/api/threads/{tid}", json={"metadata": {"title": pem}}, headers=alice)
    assert patched.status_code == 200
    after = {kind: secrets_count(client, kind, "redacted") for kind in (AWS, GITHUB, PEM)}
    assert after == {AWS: before[AWS] + 1, GITHUB: before[GITHUB] + 1, PEM: before[PEM] + 2}
    assert secrets_count(scan_http("off"), AWS, "redacted") == 0
