"""The 22 real threads of ../shared/data/threads/ store over HTTP and read back exactly: as sent,
but for what the server's secret scan redacts (``LOOMSYNC_SECRET_SCAN=redact``, the default;
one real thread holds a placeholder AWS key id, ``AKIAXXXXXXXXXXXXXXXX``, that the detector
flags)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from loomsync.core.secrets import default_redactor
from tests.conftest import TokenFactory, load_thread, real_threads
from tests.documents import assert_round_trip

REAL = real_threads()


def test_real_thread_corpus_is_present() -> None:
    # SOURCES says 22; the folder holds 21 documents (noted in the issue).
    assert len(REAL) >= 21, "expected the real threads in ../shared/data/threads/"


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
async def test_real_thread_round_trips_and_replaces_with_etag(
    client: httpx.AsyncClient, auth: TokenFactory, new_user, path: Path
) -> None:
    sent = load_thread(path)
    stored = default_redactor().redact_value(sent)  # what the default scan stores
    headers = auth(new_user("owner"), org="acme")
    url = f"/api/threads/{sent['id']}"

    created = await client.put(url, json=sent, headers=headers)
    assert created.status_code == 201, created.text
    assert created.headers["etag"] == '"1"'
    assert created.headers["location"] == url

    got = await client.get(url, headers=headers)
    assert got.status_code == 200
    assert got.headers["etag"] == '"1"'
    body = got.json()
    assert_round_trip(stored, body)
    assert body["version"] == 1
    assert body["message_count"] == len(sent["conversation"]["messages"])

    replaced = await client.put(
        url, json=sent, headers={**headers, "If-Match": created.headers["etag"]}
    )
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["version"] == 2
    assert replaced.headers["etag"] == '"2"'
    assert_round_trip(stored, replaced.json())


async def test_same_ids_in_other_test_runs_do_not_collide(client: httpx.AsyncClient) -> None:
    # Each test run uses a fresh database (tests/conftest.py), so the fixed ids of the real
    # threads are free at the start of a run; reading one anonymously is 404 (not public).
    first = load_thread(REAL[0])
    response = await client.get(f"/api/threads/{first['id']}")
    assert response.status_code == 404
