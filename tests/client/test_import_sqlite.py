"""``loomsync import`` of an agent's SQLite database, end to end: a copy of a real Crush
store → the local store → a real server; importing again sends nothing; a turn the agent
commits meanwhile (WAL mode, a reader holding the database) is sent as an append."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.importers.run import token_subject
from tests.client.conftest import LiveServer, Person, login, wait_for

CISCO = (
    Path(__file__).resolve().parents[3]
    / "shared/data/transcripts/crush/AndresGaibor__cisco-auto/.crush/crush.db"
)
SESSION = "05193330-a419-4f38-a955-8ea6c72cccc2"


@pytest.fixture
def token(settings: Settings, new_user) -> str:
    return create_token(settings, new_user("sqlite-importer"), org="acme")


def test_a_crush_database_imports_once_and_a_new_turn_is_appended(
    person: Person, server: LiveServer, token: str, tmp_path: Path
) -> None:
    assert login(person, server, token).code == 0
    sub = token_subject(token)
    assert sub is not None
    thread = str(ThreadId.owned(sub, f"T-{SESSION}"))
    store = tmp_path / "project" / ".crush" / "crush.db"
    store.parent.mkdir(parents=True)
    shutil.copyfile(CISCO, store)

    first = json.loads(person("import", "auto", str(store.parent), "--json").out)
    assert first["created"] == [thread]
    wait_for(lambda: f"PUT /api/threads/{thread}" in server.requests(), what="PUT logged")
    again = json.loads(person("import", "crush", str(store), "--json").out)
    assert (again["created"], again["updated"], again["unchanged"]) == ([], [], [thread])

    agent = sqlite3.connect(store, timeout=0, isolation_level=None)
    agent.execute("PRAGMA journal_mode = WAL")
    reader = sqlite3.connect(store, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchone()
    agent.execute(
        "INSERT INTO messages (id, session_id, role, parts, model, provider, created_at,"
        " updated_at) VALUES ('m-new', ?, 'user', ?, '', NULL, 1775090000, 1775090000)",
        (SESSION, json.dumps([{"type": "text", "data": {"text": "one more check"}}])),
    )
    before = len(server.requests())
    third = json.loads(person("import", "crush", str(store), "--json").out)
    # the agent's own -wal/-shm while it holds the database; nothing of ours beside them
    assert sorted(p.name for p in store.parent.iterdir()) == [
        "crush.db",
        "crush.db-shm",
        "crush.db-wal",
    ]
    reader.close()
    agent.close()

    assert third["updated"] == [thread]
    writes = [r for r in server.requests_about(thread, before) if not r.startswith("GET")]
    assert writes == [f"POST /api/threads/{thread}/messages"]
    shown = json.loads(person("show", thread, "--json").out)
    contents = [m["content"] for m in shown["conversation"]["messages"]]
    assert contents[-1] == "one more check"
    assert len(contents) == 100
    assert sorted(p.name for p in store.parent.iterdir()) == ["crush.db"]
