"""``python -m app.cli rescan [--dry-run]`` (review P3-14): threads stored before the scan (here:
by the ``LOOMSYNC_SECRET_SCAN=off`` server of tests/threads/scan_support.py) are redacted with
the server's detector as a replace would: version + 1, an audit event per thread, the stored
idempotent answer refreshed; clean threads untouched; a dry run writes nothing. Each run names
its threads with ``--thread``: the test database is shared with the other tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import httpx
import pytest

from app.config import Settings
from app.database import make_engine, make_sessionmaker
from app.threads import rescan as rescan_module
from app.threads.rescan import RESCAN_ACTOR, rescan
from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import default_redactor, marker
from tests.servers import app_env
from tests.threads.planted import planted
from tests.threads.scan_support import (
    AWS,
    GITHUB,
    PEM,
    assert_absent,
    audit_events,
    existing_thread,
    secret_doc,
    seed,
)

PASSWORD = "Tr0ub4dor&3x"


def run_rescan(
    database_url: str, settings: Settings, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **app_env(database_url, settings)}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "rescan", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_rescan_redacts_stored_threads_as_a_replace_and_a_dry_run_writes_nothing(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    admin: dict[str, str],
    database_url: str,
    settings: Settings,
) -> None:
    client, keys = scan_http("off"), planted(seed())
    doc = secret_doc(keys)
    doc["metadata"]["extra"] = {"password": PASSWORD}
    headers = {**alice, "Idempotency-Key": f"rescan-{seed()}"}
    created = client.post("/api/threads", json=doc, headers=headers)
    assert created.status_code == 201, created.text
    tid = created.json()["id"]
    clean = existing_thread(client, alice)
    only = ("--thread", tid, "--thread", clean)

    dry = run_rescan(database_url, settings, "--dry-run", *only)
    assert dry.returncode == 0, dry.stderr
    assert f"{tid} version 1:" in dry.stdout
    assert "github-token x1" in dry.stdout
    assert "secret-assignment x1" in dry.stdout
    assert "2 threads scanned: 1 clean, 1 with credentials" in dry.stdout
    assert_absent(dry.stdout + dry.stderr, *keys.values(), PASSWORD)
    assert client.get(f"/api/threads/{tid}", headers=alice).json() == created.json()

    done = run_rescan(database_url, settings, *only)
    assert done.returncode == 0, done.stderr
    assert f"{tid} version 1:" in done.stdout
    assert "redacted, now version 2" in done.stdout
    assert_absent(done.stdout + done.stderr, *keys.values(), PASSWORD)
    got = client.get(f"/api/threads/{tid}", headers=alice)
    assert got.json()["version"] == 2
    assert got.headers["etag"] == '"2"'
    assert_absent(got.text, *keys.values(), PASSWORD)
    body = got.json()
    assert body["metadata"]["extra"]["password"] == marker("secret-assignment")
    assert marker(AWS) in body["conversation"]["messages"][1]["content"]
    assert body["metadata"]["title"] == f"deploy key {marker(PEM)}"
    assert client.get(f"/api/threads/{clean}", headers=alice).json()["version"] == 1

    [event] = audit_events(client, admin, tid, "thread.secrets_redacted")
    assert event["actor_id"] == RESCAN_ACTOR.user_id
    assert event["details"] == {
        "kinds": {AWS: 1, GITHUB: 1, PEM: 1, "secret-assignment": 1},
        "message_indexes": [1, 2],
        "fields": ["metadata"],
    }
    assert_absent(json.dumps(audit_events(client, admin, tid)), *keys.values(), PASSWORD)

    replayed = client.post("/api/threads", json=doc, headers=headers)
    assert replayed.headers.get("idempotent-replayed") == "true"
    assert replayed.status_code == 201
    assert replayed.headers["etag"] == '"2"'
    assert_absent(replayed.text, *keys.values(), PASSWORD)

    again = run_rescan(database_url, settings, *only)
    assert again.returncode == 0, again.stderr
    assert "2 threads scanned: 2 clean, 0 redacted, 0 left alone" in again.stdout


async def test_rescan_pages_through_ids_and_skips_deleted_threads(
    scan_http: Callable[[str], httpx.Client],
    alice: dict[str, str],
    database_url: str,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = scan_http("off")
    tids = [ThreadId.parse(existing_thread(client, alice)) for _ in range(3)]
    deleted = client.delete(f"/api/threads/{tids[1]}", headers={**alice, "If-Match": '"1"'})
    assert deleted.status_code == 204
    monkeypatch.setattr(rescan_module, "BATCH", 1)
    engine = make_engine(str(settings.async_database_url), settings)
    try:
        maker = make_sessionmaker(engine)
        seen = [o async for o in rescan(maker, default_redactor(), dry_run=True, only=tids)]
    finally:
        await engine.dispose()
    assert [(o.thread_id, o.status) for o in seen] == [
        (tid, "clean") for tid in sorted((tids[0], tids[2]), key=lambda t: t.uuid)
    ]
