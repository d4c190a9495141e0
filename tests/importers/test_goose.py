"""Goose: the real (empty) sessions.db, and copies of it the tests fill the way Goose writes
(one row per message, content_json as Goose's Message.content), in its rollback-journal
mode, while a reader holds it open."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from loomsync.importers import detect_format, goose
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped
from tests.importers.sqlitedb import copy_store, listing, pairing, roles

REAL = TRANSCRIPTS / "goose" / "jwp23__dotfiles" / "sessions" / "sessions.db"
SESSION = "20251202_1"


def test_the_real_database_holds_no_message_and_imports_cleanly_into_nothing() -> None:
    result = goose.parse(REAL)

    assert (result.threads, result.warnings, result.skipped) == ([], [], Counter())
    assert goose.detect(REAL)
    assert detect_format(REAL) == "goose"
    assert listing(REAL.parent) == ["sessions.db"]


def _message(
    db: sqlite3.Connection, role: str, content: list[object], at: int, **more: object
) -> None:
    columns = {"session_id": SESSION, "role": role, "content_json": json.dumps(content)}
    columns |= {"created_timestamp": at, **more}
    names = ", ".join(columns)
    db.execute(
        f"INSERT INTO messages ({names}) VALUES ({', '.join('?' for _ in columns)})",
        list(columns.values()),
    )


def _conversation(db: sqlite3.Connection) -> None:
    _message(db, "user", [{"type": "text", "text": "run the tests"}], 1764694800)
    _message(
        db,
        "assistant",
        [
            {"type": "thinking", "thinking": "cargo it is", "signature": "sig"},
            {"type": "text", "text": "Running them."},
            {
                "type": "toolRequest",
                "id": "call-1",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "developer__shell", "arguments": {"command": "cargo test"}},
                },
            },
        ],
        1764694805,
        metadata_json=json.dumps(
            {"userVisible": True, "usage": {"inputTokens": 900, "outputTokens": 40}}
        ),
        tokens=57,
    )
    _message(
        db,
        "user",
        [
            {
                "type": "toolResponse",
                "id": "call-1",
                "toolResult": {
                    "status": "success",
                    "value": {
                        "content": [{"type": "text", "text": "test result: ok"}],
                        "isError": False,
                    },
                },
            }
        ],
        1764694810,
    )
    _message(
        db,
        "assistant",
        [
            {
                "type": "toolRequest",
                "id": "call-2",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "developer__shell", "arguments": {"command": "false"}},
                },
            }
        ],
        1764694812,
    )
    _message(
        db,
        "user",
        [
            {
                "type": "toolResponse",
                "id": "call-2",
                "toolResult": {"status": "error", "error": "exit 1"},
            }
        ],
        1764694813,
    )
    _message(db, "assistant", [{"type": "text", "text": "One failed."}], 1764694815)


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = copy_store(REAL, tmp_path)
    with sqlite3.connect(path) as db:
        _conversation(db)
        db.execute("UPDATE sessions SET input_tokens = 900, output_tokens = 40, total_tokens = 940")
    db.close()
    return path


def test_messages_tool_calls_results_times_and_usage(filled: Path) -> None:
    result = goose.parse(filled)

    assert (result.warnings, result.skipped) == ([], Counter())
    [thread] = result.threads
    assert roles([thread]) == {"user": 1, "assistant": 3, "tool": 2}
    assert pairing([thread]) == (2, 2, set(), set())
    assert [m.role for m in thread.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    call = (thread.messages[1].tool_calls or [])[0]
    assert (call.tool_name, call.arguments_json) == ("developer__shell", {"command": "cargo test"})
    assert (thread.messages[2].content, thread.messages[2].tool_name) == (
        "test result: ok",
        "developer__shell",
    )
    assert thread.messages[4].content == "exit 1"
    assert thread.messages[4].model_extra["extra"] == {"is_error": True}
    assert thread.messages[1].model_extra["usage"] == {"input_tokens": 900, "output_tokens": 40}
    assert thread.messages[1].model_extra["extra"]["tokens"] == 57
    assert thread.messages[1].model_extra["extra"]["content"][0]["type"] == "thinking"
    document = thread.model_dump(mode="json")
    assert document["conversation"]["messages"][0]["created_at"] == "2025-12-02T17:00:00Z"
    assert document["created_at"] == "2025-12-02T16:58:55Z"
    assert thread.cwd == "/Users/jpresley/workspace/tmp/vsl"
    assert thread.metadata.title == "CLI Session"
    assert thread.metadata.extra["session_usage"] == {
        "total_tokens": 940,
        "input_tokens": 900,
        "output_tokens": 40,
    }
    assert thread.metadata.extra["session_type"] == "user"


def test_ids_are_stable_and_a_reimport_changes_nothing(filled: Path, tmp_path: Path) -> None:
    first = goose.parse(filled).threads
    moved = tmp_path / "elsewhere" / "sessions.db"
    moved.parent.mkdir()
    moved.write_bytes(filled.read_bytes())

    assert dumped(goose.parse(filled).threads) == dumped(first)
    assert [t.id for t in goose.parse(moved).threads] == [t.id for t in first]
    assert listing(filled.parent) == ["sessions.db"]


def test_new_turns_written_while_a_reader_holds_the_database_appear_once(filled: Path) -> None:
    [before] = goose.parse(filled).threads
    writer = sqlite3.connect(filled, timeout=0, isolation_level=None)
    _message(writer, "user", [{"type": "text", "text": "thanks"}], 1764694900)
    reader = sqlite3.connect(filled, isolation_level=None)  # another reader, mid-transaction
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchone()
    [middle] = goose.parse(filled).threads
    reader.execute("COMMIT")
    writer.execute("BEGIN")  # Goose mid-write: its -journal sits beside the database
    _message(writer, "assistant", [{"type": "text", "text": "You're welcome."}], 1764694901)
    assert filled.with_name("sessions.db-journal").exists()
    [during] = goose.parse(filled).threads
    writer.execute("COMMIT")  # timeout 0: it would fail if we held a lock
    [after] = goose.parse(filled).threads

    assert_extends(before.messages, middle.messages)
    assert dumped([during]) == dumped([middle])
    assert_extends(middle.messages, after.messages)
    assert [m.content for m in after.messages[len(before.messages) :]] == [
        "thanks",
        "You're welcome.",
    ]
    writer.close()
    reader.close()


def test_a_sub_agent_session_and_newer_columns_are_kept(filled: Path) -> None:
    with sqlite3.connect(filled) as db:
        db.execute("ALTER TABLE messages ADD COLUMN message_id TEXT")
        db.execute("ALTER TABLE sessions ADD COLUMN provider_name TEXT")
        db.execute("CREATE TABLE threads (id TEXT)")
        db.execute(
            "INSERT INTO sessions (id, name, session_type, working_dir, created_at, updated_at,"
            " provider_name) VALUES ('20251202_2', 'helper', 'sub-agent', '/w',"
            " '2025-12-02 17:05:00', '2025-12-02 17:06:00', 'anthropic')"
        )
        db.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, message_id)"
            " VALUES ('20251202_2', 'user', '[{\"type\":\"text\",\"text\":\"look\"}]', 1764695100, 'm9')"
        )
    db.close()

    result = goose.parse(filled)

    assert len(result.threads) == 2
    [warning] = result.warnings
    assert "tables not read: threads" in warning
    assert "messages.message_id" in warning
    helper = result.threads[1]
    assert helper.metadata.extra["session_type"] == "sub-agent"
    assert helper.metadata.extra["provider_name"] == "anthropic"
    assert helper.messages[0].model_extra["extra"]["message_id"] == "m9"


def test_default_paths_honour_goose_path_root_and_xdg(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("GOOSE_PATH_ROOT", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert goose.default_paths() == [tmp_path / ".local" / "share" / "goose" / "sessions"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert goose.default_paths() == [tmp_path / "xdg" / "goose" / "sessions"]
    monkeypatch.setenv("GOOSE_PATH_ROOT", str(tmp_path / "root"))
    assert goose.default_paths() == [tmp_path / "root" / "data" / "sessions"]
    assert goose.unit_of(tmp_path / "sessions.db-journal") == tmp_path / "sessions.db"


def test_two_machines_sessions_of_the_same_date_id_stay_two_threads(
    filled: Path, tmp_path: Path
) -> None:
    other = tmp_path / "laptop" / "sessions.db"
    other.parent.mkdir()
    other.write_bytes(filled.read_bytes())
    with sqlite3.connect(other) as db:
        db.execute(
            "UPDATE sessions SET working_dir = '/home/me/other', created_at = '2025-12-02 18:00:00'"
        )
    db.close()

    [here] = goose.parse(filled).threads
    [there] = goose.parse(other).threads

    assert (
        here.metadata.extra["source"]["session_id"] == there.metadata.extra["source"]["session_id"]
    )
    assert here.id != there.id
