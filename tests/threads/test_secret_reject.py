"""``LOOMSYNC_SECRET_SCAN=reject`` (issue 12 item 4): a write that brings a credential answers
422 problem JSON naming each location and kind (at most 20, never the value, API.md §7),
stores nothing, and leaves a ``thread.secrets_rejected`` audit event without the value; through
the real uvicorn process of tests/threads/scan_support.py."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.threads.planted import aws_access_key
from tests.threads.scan_support import (
    AWS,
    ENDPOINTS,
    assert_absent,
    audit_events,
    existing_thread,
    secrets_count,
    seed,
    write_with_key,
)

# ---- reject --------------------------------------------------------------------------------


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
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    endpoint: str,
) -> None:
    client, key = scan_http("reject"), aws_access_key(seed())
    before = secrets_count(client, AWS, "rejected")
    tid, answer, locs = write_with_key(client, alice, endpoint, key)
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client = scan_http("reject")
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str], admin: dict[str, str]
) -> None:
    client, key = scan_http("reject"), aws_access_key(seed())
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
    scan_http: Callable[[str], httpx.Client], alice: dict[str, str]
) -> None:
    client = scan_http("reject")
    tid = existing_thread(client, alice)
    appended = client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [{"role": "user", "content": "no secrets here"}]},
        headers={**alice, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text


# ---- access before audit (review P3-13) ----------------------------------------------------

#: A write of someone else's thread, or at a stale version, refused before any scan matters.
REFUSED = {
    "put-private-of-another": 404,
    "put-org-thread-of-another": 403,
    "put-deleted": 410,
    "put-stale-version": 409,
    "post-existing-id": 409,
}


@pytest.mark.parametrize("refused", REFUSED)
def test_reject_judges_access_before_auditing_credentials(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    auth: TokenFactory,
    new_user: Callable[[str], str],
    refused: str,
) -> None:
    """A PUT or POST with a credential on an id the caller may not write that way answers what
    the same write without the credential answers (404, 403, 410, 409), and leaves no
    ``thread.secrets_rejected`` event: no writer can put rejection rows against another's
    thread. Before the fix the credential was audited first and answered 422."""
    client, key = scan_http("reject"), aws_access_key(seed())
    owner = auth(new_user("owner"), org="acme-secrets")
    visibility = "organization" if refused == "put-org-thread-of-another" else "private"
    tid = ThreadId.new()
    doc = {"visibility": visibility, "metadata": {"title": "clean"}}
    assert client.put(f"/api/threads/{tid}", json=doc, headers=owner).status_code == 201
    if refused == "put-deleted":
        headers = {**owner, "If-Match": '"1"'}
        assert client.delete(f"/api/threads/{tid}", headers=headers).status_code == 204
    writer = owner if refused in ("put-deleted", "put-stale-version") else alice
    version = 7 if refused == "put-stale-version" else 1

    def write(title: str) -> httpx.Response:
        body = {"version": version, "metadata": {"title": title}}
        if refused == "post-existing-id":
            return client.post(
                "/api/threads", json={**body, "id": tid, "version": 0}, headers=writer
            )
        return client.put(f"/api/threads/{tid}", json=body, headers=writer)

    clean, holding_key = write("clean again"), write(f"creds {key}")
    assert clean.status_code == REFUSED[refused], clean.text
    assert holding_key.status_code == clean.status_code, holding_key.text
    assert holding_key.json()["code"] == clean.json()["code"]
    assert_absent(holding_key.text, key)
    assert audit_events(client, admin, tid, "thread.secrets_rejected") == []
