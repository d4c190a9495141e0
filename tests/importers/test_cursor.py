"""Cursor's state.vscdb, built here as Cursor writes it (no sample exists: see the importer's
docstring): composers and bubbles in cursorDiskKV, settings and auth in ItemTable."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import cursor, detect_format
from tests.importers.corpus import assert_extends, dumped
from tests.importers.sqlitedb import agent, listing, pairing, roles

MAIN = "b2a1e0c4-7d3f-4e8a-9c61-0f5e4d3c2b1a"
CHILD = "c3b2f1d5-8e4a-4f9b-8d72-1a6f5e4d3c2b"
LEGACY = "d4c3a2e6-9f5b-4a0c-9e83-2b7a6f5e4d3c"
EMPTY = "e5d4b3f7-0a6c-4b1d-8f94-3c8b7a6f5e4d"


def _put(db: sqlite3.Connection, key: str, value: Any) -> None:
    db.execute("INSERT OR REPLACE INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(value)))


def _bubble(db: sqlite3.Connection, composer: str, bubble: str, **fields: Any) -> dict[str, str]:
    _put(db, f"bubbleId:{composer}:{bubble}", {"_v": 3, "bubbleId": bubble, **fields})
    return {"bubbleId": bubble, "type": fields["type"]}


def _main_bubbles(db: sqlite3.Connection) -> list[dict[str, str]]:
    return [
        _bubble(
            db,
            MAIN,
            "u1",
            type=1,
            text="why does the build fail?",
            createdAt="2025-12-26T10:00:00.000Z",
            modelInfo={"modelName": "claude-4.5-sonnet"},
            images=[],
        ),
        _bubble(
            db,
            MAIN,
            "a1",
            type=2,
            text="Let me look.",
            createdAt="2025-12-26T10:00:03.000Z",
            thinking={"text": "check the log"},
            tokenCount={"inputTokens": 0, "outputTokens": 0},
        ),
        _bubble(
            db,
            MAIN,
            "a2",
            type=2,
            text="",
            createdAt="2025-12-26T10:00:05.000Z",
            capabilityType=15,
            toolFormerData={
                "tool": 15,
                "toolCallId": "toolu_1",
                "name": "run_terminal_cmd",
                "rawArgs": '{"command": "make"}',
                "result": '{"output": "error: missing semicolon", "exitCode": 2}',
                "status": "completed",
            },
        ),
        _bubble(
            db,
            MAIN,
            "a3",
            type=2,
            text="A semicolon is missing in main.c.",
            createdAt="2025-12-26T10:00:09.000Z",
            tokenCount={"inputTokens": 5120, "outputTokens": 64},
            modelInfo={"modelName": "claude-4.5-sonnet"},
            newCursorField={"kept": True},
        ),
    ]


def _build(path: Path, db: sqlite3.Connection | None = None) -> None:
    own = db is None
    db = db or sqlite3.connect(path)
    db.execute(
        "CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
    )
    db.execute("INSERT INTO ItemTable VALUES ('cursorAuth/accessToken', 'eyJ.secret.token')")
    _put(
        db,
        f"composerData:{MAIN}",
        {
            "_v": 10,
            "composerId": MAIN,
            "name": "Build failure",
            "createdAt": 1766743200000,
            "lastUpdatedAt": 1766743209000,
            "status": "completed",
            "unifiedMode": "agent",
            "createdOnBranch": "main",
            "modelConfig": {"modelName": "claude-4.5-sonnet", "maxMode": False},
            "subComposerIds": [CHILD],
            "fullConversationHeadersOnly": _main_bubbles(db),
            "conversationMap": {},
            "text": "",
            "originalFileStates": {"file:///src/main.c": {"content": "int main(){}"}},
        },
    )
    _put(
        db,
        f"composerData:{CHILD}",
        {
            "composerId": CHILD,
            "createdAt": 1766743204000,
            "fullConversationHeadersOnly": [
                _bubble(db, CHILD, "s1", type=1, text="search for main.c"),
                _bubble(db, CHILD, "s2", type=2, text="Found it in src/."),
            ],
        },
    )
    _put(
        db,
        f"composerData:{LEGACY}",
        {
            "_v": 3,
            "composerId": LEGACY,
            "createdAt": 1740000000000,
            "conversation": [
                {"type": 1, "bubbleId": "l1", "text": "hello"},
                {"type": 2, "bubbleId": "l2", "text": "Hi."},
            ],
        },
    )
    _put(db, f"composerData:{EMPTY}", {"_v": 10, "composerId": EMPTY, "createdAt": 1766000000000})
    if own:
        db.commit()
        db.close()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    path = tmp_path / "User" / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    _build(path)
    return path


def test_composers_become_threads_with_calls_results_usage_and_lineage(state: Path) -> None:
    result = cursor.parse(state)

    assert (result.warnings, result.skipped) == ([], Counter())
    threads = {t.id: t for t in result.threads}
    assert list(threads) == [f"T-{LEGACY}", f"T-{MAIN}", f"T-{CHILD}"]  # by creation; no empty
    main = threads[f"T-{MAIN}"]
    assert [(m.role, m.content) for m in main.messages] == [
        ("user", "why does the build fail?"),
        ("assistant", "Let me look."),
        ("assistant", ""),
        ("tool", '{"output": "error: missing semicolon", "exitCode": 2}'),
        ("assistant", "A semicolon is missing in main.c."),
    ]
    assert pairing([main]) == (1, 1, set(), set())
    call = (main.messages[2].tool_calls or [])[0]
    assert (call.tool_name, call.arguments_json) == ("run_terminal_cmd", {"command": "make"})
    assert main.messages[4].model_extra["usage"] == {
        "input_tokens": 5120,
        "output_tokens": 64,
        "model": "claude-4.5-sonnet",
    }
    assert "usage" not in main.messages[1].model_extra  # zeros: nothing recorded
    assert main.messages[1].model_extra["extra"]["thinking"] == {"text": "check the log"}
    assert main.messages[4].model_extra["extra"]["newCursorField"] == {"kept": True}
    document = main.model_dump(mode="json")
    assert document["conversation"]["messages"][0]["created_at"] == "2025-12-26T10:00:00Z"
    assert (document["created_at"], document["last_activity_at"]) == (
        "2025-12-26T10:00:00Z",
        "2025-12-26T10:00:09Z",
    )
    assert (main.model, main.git_branch, main.metadata.title) == (
        "claude-4.5-sonnet",
        "main",
        "Build failure",
    )
    assert main.metadata.extra["originalFileStates"] == ["file:///src/main.c"]
    assert main.metadata.extra["status"] == "completed"
    assert threads[f"T-{CHILD}"].metadata.extra["parent_thread_id"] == f"T-{MAIN}"
    assert roles([threads[f"T-{LEGACY}"]]) == {"user": 1, "assistant": 1}
    assert "eyJ.secret.token" not in json.dumps(dumped(result.threads), default=str)


def test_detection_and_no_side_file(state: Path, tmp_path: Path) -> None:
    assert detect_format(state) == "cursor"
    assert cursor.discover(tmp_path) == [state]
    plain = tmp_path / "vscode.vscdb"
    with sqlite3.connect(plain) as db:
        db.execute("CREATE TABLE ItemTable (key TEXT, value BLOB)")
    db.close()
    assert not cursor.detect(plain)
    cursor.parse(state)
    assert listing(state.parent) == ["state.vscdb"]
    assert dumped(cursor.parse(state).threads) == dumped(cursor.parse(state).threads)


def test_a_conversation_growing_in_wal_mode_is_read_again_without_duplicates(state: Path) -> None:
    before = {t.id: t for t in cursor.parse(state).threads}
    writer = agent(state)
    reader = sqlite3.connect(state, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM cursorDiskKV").fetchone()
    headers = json.loads(
        writer.execute(
            "SELECT value FROM cursorDiskKV WHERE key = ?", (f"composerData:{MAIN}",)
        ).fetchone()[0]
    )
    headers["fullConversationHeadersOnly"] += [
        _bubble(writer, MAIN, "u2", type=1, text="fix it", createdAt="2025-12-26T10:01:00Z"),
        _bubble(writer, MAIN, "a4", type=2, text="Fixed.", createdAt="2025-12-26T10:01:04Z"),
    ]
    headers["lastUpdatedAt"] = 1766743264000
    _put(writer, f"composerData:{MAIN}", headers)

    after = {t.id: t for t in cursor.parse(state).threads}

    assert state.with_name("state.vscdb-wal").exists()
    main = f"T-{MAIN}"
    assert_extends(before[main].messages, after[main].messages)
    assert [m.content for m in after[main].messages[len(before[main].messages) :]] == [
        "fix it",
        "Fixed.",
    ]
    assert [m.id for m in after[main].messages if m.id].count("a4") == 1
    assert dumped([after[f"T-{CHILD}"]]) == dumped([before[f"T-{CHILD}"]])
    reader.close()
    writer.close()


def test_missing_bubbles_damaged_values_and_a_newer_table(state: Path) -> None:
    with sqlite3.connect(state) as db:
        data = json.loads(
            db.execute(
                "SELECT value FROM cursorDiskKV WHERE key = ?", (f"composerData:{MAIN}",)
            ).fetchone()[0]
        )
        data["fullConversationHeadersOnly"].append({"bubbleId": "gone", "type": 2})
        _put(db, f"composerData:{MAIN}", data)
        db.execute(f"INSERT INTO cursorDiskKV VALUES ('bubbleId:{MAIN}:bad', '{{oops')")
        db.execute("CREATE TABLE aiCodeTracking (id TEXT)")
    db.close()

    result = cursor.parse(state)

    assert result.skipped == Counter({"missing_bubble": 1, "bad_record": 1})
    assert len(result.threads) == 3
    assert result.warnings == [
        f"{state}: a newer schema than this importer knows (tables not read: aiCodeTracking)"
    ]


def test_default_paths_per_os(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(cursor.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert cursor.default_paths() == [tmp_path / "cfg" / "Cursor" / "User" / "globalStorage"]
    monkeypatch.setattr(cursor.sys, "platform", "darwin")
    assert cursor.default_paths() == [
        tmp_path / "Library" / "Application Support" / "Cursor" / "User" / "globalStorage"
    ]
    monkeypatch.setattr(cursor.sys, "platform", "win32")
    monkeypatch.setenv("APPDATA", str(tmp_path / "Roaming"))
    assert cursor.default_paths() == [tmp_path / "Roaming" / "Cursor" / "User" / "globalStorage"]
    assert cursor.unit_of(tmp_path / "state.vscdb-wal") == tmp_path / "state.vscdb"
