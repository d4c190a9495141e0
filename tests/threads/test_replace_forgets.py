"""The server keeps no older version of a replaced message (issue 12 item 3).

A thread stored with credentials (under ``LOOMSYNC_SECRET_SCAN=off``, as a server before the
scan did, and created with an ``Idempotency-Key``, whose stored answer holds the document) is
replaced by its redacted version, as the client's ``loomsync redact`` pushes it. Then nothing
readable by SQL holds a planted value: ``pg_dump --data-only`` of the whole test database
(messages, ``threads.document``, both ``search_vector`` columns, the audit trail, stored
idempotency answers) holds none of them, the planner's statistics (``pg_stats``, after ANALYZE)
hold none, and a search for a planted word finds nothing. Dead row versions that VACUUM has not
removed yet are outside what SQL reads (docs/operations.md).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import default_redactor
from tests.conftest import TokenFactory
from tests.pg_tools import matching_program
from tests.servers import app_env, uvicorn_server
from tests.threads.planted import fragments, planted


def _plain(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


#: A ``bytea`` value in a dump's COPY data (hex output, its backslash escaped).
_BYTEA = re.compile(rb"\\\\x((?:[0-9a-f]{2})+)")


def dump(database_url: str) -> str:
    """``pg_dump --data-only`` of the test database, lower-cased (tsvector lexemes are), with
    every ``bytea`` value (stored idempotency answers) decoded and appended. The ``pg_dump``
    is the server's own major version (:func:`tests.pg_tools.matching_program`)."""
    pg_dump = matching_program("pg_dump", database_url)
    done = subprocess.run(
        [pg_dump, "--data-only", "--no-owner", _plain(database_url)],
        capture_output=True,
        check=True,
        timeout=120,
    )
    decoded = [bytes.fromhex(m.group(1).decode()) for m in _BYTEA.finditer(done.stdout)]
    return b"\n".join([done.stdout, *decoded]).decode("utf-8", errors="replace").lower()


async def _statistics(database_url: str) -> str:
    conn = await asyncpg.connect(_plain(database_url))
    try:
        await conn.execute("ANALYZE")
        rows = await conn.fetch(
            "SELECT CAST(s AS text) FROM pg_stats s WHERE schemaname = 'public'"
        )
    finally:
        await conn.close()
    return "\n".join(row[0] for row in rows).lower()


def statistics(database_url: str) -> str:
    """The planner's statistics of the public tables after ANALYZE, lower-cased."""
    return asyncio.run(_statistics(database_url))


@pytest.fixture(scope="module")
def server(database_url: str, settings: Settings) -> Iterator[str]:
    """A server that stores credentials as sent (``LOOMSYNC_SECRET_SCAN=off``)."""
    with uvicorn_server(app_env(database_url, settings, LOOMSYNC_SECRET_SCAN="off")) as running:
        yield running.base_url


def planted_thread(tid: ThreadId, keys: dict[str, str]) -> dict[str, Any]:
    """A thread holding every planted key in messages, tool-call arguments, title and tags."""
    aws, github, pem = keys["aws-access-key"], keys["github-token"], keys["private-key"]
    return {
        "id": tid,
        "visibility": "organization",
        "metadata": {"title": f"creds {aws}", "tags": [github], "extra": {"k": pem}},
        "agent_state": {"kind": "error", "last_error": f"bad token {github}"},
        "conversation": {
            "messages": [
                {"role": "user", "content": "show me the env"},
                {"role": "tool", "content": f"AWS_ACCESS_KEY_ID={aws}\n{pem}\n"},
                {
                    "role": "assistant",
                    "content": f"token {github}",
                    "tool_calls": [{"id": "1", "tool_name": "sh", "arguments_json": {"t": aws}}],
                },
            ]
        },
    }


def leaked(text: str, keys: dict[str, str]) -> list[str]:
    """The fragments of the planted keys found in ``text``."""
    return [piece for key in keys.values() for piece in fragments(key) if piece in text]


def test_a_replaced_thread_leaves_no_planted_value_readable_by_sql(
    server: str, database_url: str, auth: TokenFactory
) -> None:
    keys = planted(uuid.uuid4().hex)
    owner = auth(f"owner-{uuid.uuid4().hex[:8]}", org="acme-forget")
    tid = ThreadId.new()
    doc = planted_thread(tid, keys)
    idempotent = {**owner, "Idempotency-Key": f"create-{tid}"}
    aws = keys["aws-access-key"]
    with httpx.Client(base_url=server, timeout=60) as http:
        created = http.post("/api/threads", json=doc, headers=idempotent)
        assert created.status_code == 201, created.text

        def search(q: str) -> list[str]:
            found = http.get("/api/threads/search", params={"q": q}, headers=owner)
            assert found.status_code == 200, found.text
            return [hit["thread"]["id"] for hit in found.json()["hits"]]

        assert search(aws) == [tid]  # indexed: the proof below can fail
        before = dump(database_url)
        for key in keys.values():  # each planted value is readable before the replace
            assert [piece for piece in fragments(key) if piece in before], key[:4]
        redacted = default_redactor().redact_value({**doc, "version": 1})
        replaced = http.put(f"/api/threads/{tid}", json=redacted, headers=owner)
        assert replaced.status_code == 200, replaced.text
        assert leaked(replaced.text.lower(), keys) == []
        assert search(aws) == []
        assert search(keys["github-token"]) == []
        assert tid in search("REDACTED aws")  # the markers are searchable
        after = dump(database_url)
        assert leaked(after, keys) == []
        assert leaked(statistics(database_url), keys) == []
        replay = http.post("/api/threads", json=doc, headers=idempotent)
        assert replay.status_code == 201
        assert replay.headers["Idempotent-Replayed"] == "true"
        assert replay.headers["ETag"] == '"2"'
        assert json.loads(replay.content) == replaced.json()
