"""Crush and OpenCode (Go): their real databases, read the way an agent leaves them, and
copies of them that grow, gain a newer schema or get damaged while we read."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, crush, detect_format, goose, opencode_go
from loomsync.importers.common import refusal
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped
from tests.importers.sqlitedb import agent, copy_store, listing, pairing, roles

CISCO = TRANSCRIPTS / "crush" / "AndresGaibor__cisco-auto" / ".crush" / "crush.db"
DBOS = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"
KUTILS = TRANSCRIPTS / "opencode-go-sqlite" / "kashifkhan0771__utils" / ".opencode" / "opencode.db"
NOORA = TRANSCRIPTS / "opencode-go-sqlite" / "tuist__Noora" / ".opencode" / "opencode.db"
CISCO_SESSION = "05193330-a419-4f38-a955-8ea6c72cccc2"

# (path, importer, threads, messages by role, tool calls, tool results, calls without result)
REAL = [
    (CISCO, "crush", 1, {"user": 1, "assistant": 47, "tool": 51}, 51, 51, 0),
    (DBOS, "crush", 2, {"user": 13, "assistant": 39, "tool": 41}, 41, 41, 0),
    (KUTILS, "opencode-go", 6, {"user": 13, "assistant": 54, "tool": 78}, 78, 78, 0),
    (NOORA, "opencode-go", 1, {"user": 2, "assistant": 28, "tool": 59}, 60, 59, 1),
]


@pytest.mark.parametrize(
    ("path", "fmt", "threads", "by_role", "calls", "results", "open_calls"),
    REAL,
    ids=["crush-v8", "crush-v5", "opencode-go-v3", "opencode-go-v2"],
)
def test_real_databases_give_their_sessions_with_every_tool_call_paired(
    path: Path,
    fmt: str,
    threads: int,
    by_role: dict[str, int],
    calls: int,
    results: int,
    open_calls: int,
) -> None:
    result = FORMATS[fmt].parse(path)

    assert (result.warnings, result.skipped) == ([], Counter())
    assert len(result.threads) == threads
    assert roles(result.threads) == by_role
    made, answered, unanswered, orphans = pairing(result.threads)
    assert (made, answered, len(unanswered), orphans) == (calls, results, open_calls, set())
    for thread in result.threads:
        tools = [m for m in thread.messages if m.role == "tool"]
        names = {c.id: c.tool_name for m in thread.messages for c in m.tool_calls or []}
        assert all(m.tool_name == names[m.tool_call_id] for m in tools)
        # each result comes after the message that made its call
        position = {c.id: i for i, m in enumerate(thread.messages) for c in m.tool_calls or []}
        assert all(position[m.tool_call_id] < thread.messages.index(m) for m in tools)


def test_crush_seconds_are_read_as_seconds_although_its_schema_says_milliseconds() -> None:
    [thread] = crush.parse(CISCO).threads
    document = thread.model_dump(mode="json")

    assert document["created_at"] == "2026-04-01T22:40:44Z"
    assert document["last_activity_at"] == "2026-04-01T22:51:34Z"
    assert document["conversation"]["messages"][1]["created_at"] == "2026-04-01T22:40:44Z"
    assert all(m.created_at is not None for m in thread.messages)
    times = [m.created_at for m in thread.messages if m.created_at]
    assert times == sorted(times)


def test_opencode_go_v2_iso_text_times_and_its_logs_are_kept() -> None:
    [thread] = opencode_go.parse(NOORA).threads
    document = thread.model_dump(mode="json")

    assert document["created_at"] == "2025-05-28T11:05:58.132Z"
    assert document["last_activity_at"] == "2025-05-28T11:15:23.474Z"
    assert document["conversation"]["messages"][0]["created_at"] == "2025-05-28T11:05:58.133Z"
    extra = thread.metadata.extra
    assert extra["session_usage"] == {
        "input_tokens": 637,
        "output_tokens": 47068,
        "cost_usd": 0.69006315,
    }
    # the session's own log lines (app lines without a session are not the session's)
    with sqlite3.connect(NOORA.as_uri() + "?immutable=1", uri=True) as connection:
        count = connection.execute(
            "SELECT count(*) FROM logs WHERE session_id = '2530334d-ccd1-4294-9961-2aa13749f060'"
        ).fetchone()[0]
    assert len(extra["logs"]) == count == 28
    assert {log["level"] for log in extra["logs"]} <= {"info", "warn", "error", "debug"}
    assert thread.model == "claude-4-sonnet"
    assert thread.provider is None  # OpenCode-Go records no provider


def test_model_provider_session_totals_and_no_invented_per_message_usage() -> None:
    [thread] = crush.parse(CISCO).threads

    assert (thread.model, thread.provider) == ("claude-haiku-4.5", "copilot")
    assert thread.id == f"T-{CISCO_SESSION}"
    assert thread.metadata.extra["session_usage"] == {
        "input_tokens": 75188,
        "output_tokens": 72,
        "cost_usd": 0.0,
    }
    assistant = [m for m in thread.messages if m.role == "assistant"]
    assert {m.model_extra["model"] for m in assistant if m.model_extra} == {"claude-haiku-4.5"}
    assert not any("usage" in (m.model_extra or {}) for m in thread.messages)
    assert thread.cwd == str(CISCO.resolve().parent.parent)  # absolute, links resolved
    assert thread.metadata.extra["todos"][0]["status"] == "completed"


def test_pasted_file_and_the_api_error_turn_lose_nothing() -> None:
    [thread] = crush.parse(CISCO).threads
    first = thread.messages[0]
    assert first.content.startswith("[paste_1.txt]\nPerfecto.")
    assert first.model_extra["extra"]["attachments"] == [
        {"path": "paste_1.txt", "mime_type": "text/plain; charset=utf-8"}
    ]

    failed = crush.parse(DBOS).threads[0].messages[1]
    finish = failed.model_extra["extra"]["finish"]
    assert (failed.role, failed.content, finish["reason"], finish["message"]) == (
        "assistant",
        "",
        "error",
        "API Error",
    )
    assert "400 Bad Request" in finish["details"]


def test_detection_tells_crush_from_opencode_go_by_schema_not_by_name(tmp_path: Path) -> None:
    crush_copy = tmp_path / "a.db"
    opencode_copy = tmp_path / "b.db"
    crush_copy.write_bytes(DBOS.read_bytes())
    opencode_copy.write_bytes(KUTILS.read_bytes())

    assert detect_format(crush_copy) == "crush"
    assert detect_format(opencode_copy) == "opencode-go"
    assert [detect_format(p) for p in (CISCO, DBOS, KUTILS, NOORA)] == [
        "crush",
        "crush",
        "opencode-go",
        "opencode-go",
    ]


def test_reading_never_creates_a_side_file_next_to_the_database(tmp_path: Path) -> None:
    before = listing(CISCO.parent)
    crush.parse(CISCO)
    assert listing(CISCO.parent) == before == ["crush.db"]

    copy = copy_store(CISCO, tmp_path)
    crush.parse(copy)
    crush.detect(copy)
    assert listing(copy.parent) == ["crush.db"]


def _insert(connection: sqlite3.Connection, row: dict[str, object]) -> None:
    names = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    connection.execute(f"INSERT INTO messages ({names}) VALUES ({marks})", list(row.values()))


def _turn(connection: sqlite3.Connection, at: int) -> None:
    """One user turn as Crush writes it: a user row, an assistant row with a tool call, the
    tool row with its result, a final assistant row (each commit its own transaction)."""
    parts = {
        "user": [{"type": "text", "data": {"text": "and now the tests"}}],
        "call": [
            {"type": "text", "data": {"text": "Running them."}},
            {
                "type": "tool_call",
                "data": {"id": "call-9", "name": "bash", "input": '{"command": "go test"}'},
            },
            {"type": "finish", "data": {"reason": "tool_use", "time": at + 1}},
        ],
        "tool": [
            {
                "type": "tool_result",
                "data": {"tool_call_id": "call-9", "name": "bash", "content": "ok"},
            }
        ],
        "done": [{"type": "text", "data": {"text": "All pass."}}],
    }
    for offset, (key, role) in enumerate(
        [("user", "user"), ("call", "assistant"), ("tool", "tool"), ("done", "assistant")]
    ):
        _insert(
            connection,
            {
                "id": f"m-{key}",
                "session_id": CISCO_SESSION,
                "role": role,
                "parts": json.dumps(parts[key]),
                "model": "claude-haiku-4.5" if role == "assistant" else "",
                "provider": "copilot" if role == "assistant" else None,
                "created_at": at + offset,
                "updated_at": at + offset,
            },
        )


def test_a_database_the_agent_writes_to_while_we_read_gives_the_new_turns_once(
    tmp_path: Path,
) -> None:
    path = copy_store(CISCO, tmp_path)
    [before] = crush.parse(path).threads
    writer = agent(path)
    reader = sqlite3.connect(path)  # another reader holding a snapshot open
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchone()

    _turn(writer, 1775090000)
    writer.execute("BEGIN")  # a turn still being written: not committed, not seen
    writer.execute(
        "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)"
        " VALUES ('m-open', ?, 'user', '[]', 1775090100, 1775090100)",
        (CISCO_SESSION,),
    )
    assert path.with_name("crush.db-wal").stat().st_size > 0
    [after] = crush.parse(path).threads

    assert_extends(before.messages, after.messages)
    new = after.messages[len(before.messages) :]
    assert [(m.role, m.content) for m in new] == [
        ("user", "and now the tests"),
        ("assistant", "Running them."),
        ("tool", "ok"),
        ("assistant", "All pass."),
    ]
    assert new[2].tool_call_id == (new[1].tool_calls or [])[0].id == "call-9"
    ids = [m.id for m in after.messages if m.id]
    assert len(ids) == len(set(ids))
    assert dumped(crush.parse(path).threads) == dumped([after])  # read again: the same
    writer.execute("ROLLBACK")
    writer.execute("BEGIN IMMEDIATE")  # we hold no lock the agent waits for
    writer.execute("COMMIT")
    writer.close()
    reader.close()


def test_read_changed_rebuilds_only_the_sessions_written_since_the_mark(tmp_path: Path) -> None:
    path = copy_store(DBOS, tmp_path)
    first = crush.read_changed(path, None)
    assert len(first.result.threads) == 2
    unchanged = crush.read_changed(path, first.mark).result.threads
    assert [t.id for t in unchanged] == ["T-f306c145-4c83-492c-b575-739c30bbced4"]  # newest

    writer = agent(path)
    later = int(first.mark["messages"]) + 60
    _insert(
        writer,
        {
            "id": "m-late",
            "session_id": "f306c145-4c83-492c-b575-739c30bbced4",
            "role": "user",
            "parts": json.dumps([{"type": "text", "data": {"text": "one more thing"}}]),
            "created_at": later,
            "updated_at": later,
        },
    )
    second = crush.read_changed(path, first.mark)

    [changed] = second.result.threads
    assert changed.id == "T-f306c145-4c83-492c-b575-739c30bbced4"
    assert changed.messages[-1].content == "one more thing"
    full = {t.id: t for t in crush.parse(path).threads}
    assert dumped([changed]) == dumped([full[changed.id]])
    assert second.mark["messages"] == later
    writer.close()


def test_the_mark_of_an_unchanged_database_selects_only_its_last_second(tmp_path: Path) -> None:
    path = copy_store(KUTILS, tmp_path)
    mark = opencode_go.read_changed(path, None).mark

    again = opencode_go.read_changed(path, mark).result.threads

    # at-or-after the mark: only the session holding the newest row is read again
    assert [t.id for t in again] == ["T-d19286ff-7e04-4d9c-af03-cf2c6b3e687c"]


def test_a_sub_agent_session_names_its_parent(tmp_path: Path) -> None:
    path = copy_store(CISCO, tmp_path)
    writer = agent(path)
    writer.execute(
        "INSERT INTO sessions (id, parent_session_id, title, created_at, updated_at)"
        " VALUES ('child-1', ?, 'Agent task', 1775083300, 1775083300)",
        (CISCO_SESSION,),
    )
    _insert(
        writer,
        {
            "id": "c-1",
            "session_id": "child-1",
            "role": "user",
            "parts": json.dumps([{"type": "text", "data": {"text": "find the tests"}}]),
            "created_at": 1775083300,
            "updated_at": 1775083300,
        },
    )
    writer.close()

    threads = {t.metadata.title: t for t in crush.parse(path).threads}

    child = threads["Agent task"]
    assert child.metadata.extra["parent_thread_id"] == f"T-{CISCO_SESSION}"
    assert "parent_thread_id" not in threads["New Session"].metadata.extra


def test_a_newer_schema_still_imports_and_says_so_once(tmp_path: Path) -> None:
    path = copy_store(CISCO, tmp_path)
    writer = agent(path)
    writer.execute("CREATE TABLE agents (id TEXT PRIMARY KEY, name TEXT)")
    writer.execute("ALTER TABLE messages ADD COLUMN usage_json TEXT")
    writer.execute("ALTER TABLE sessions ADD COLUMN workspace TEXT")
    writer.execute("UPDATE sessions SET workspace = '/src/cisco'")
    writer.execute(
        "UPDATE messages SET usage_json = '{\"in\": 5}' WHERE id = 'c90ffd3e-ee32-4e8f-9b2f-1de945367973'"
    )
    writer.close()

    result = crush.parse(path)

    [thread] = result.threads
    assert roles(result.threads) == {"user": 1, "assistant": 47, "tool": 51}
    [warning] = result.warnings
    assert "tables not read: agents" in warning
    assert "messages.usage_json" in warning
    assert "sessions.workspace" in warning
    assert thread.metadata.extra["workspace"] == "/src/cisco"
    assert thread.messages[1].model_extra["extra"]["usage_json"] == '{"in": 5}'


def test_a_damaged_or_foreign_file_gives_a_warning_not_an_exception(tmp_path: Path) -> None:
    cut = tmp_path / "crush.db"
    cut.write_bytes(CISCO.read_bytes()[:8192])
    text = tmp_path / "notes.db"
    text.write_text("not a database")
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")

    for path in (cut, text, other):
        result = crush.parse(path)
        assert result.threads == []
        assert len(result.warnings) == 1
        assert str(path) in result.warnings[0]
    assert not crush.detect(text)
    assert not crush.detect(other)


def test_default_paths_read_crush_projects_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "projects.json").write_text(
        json.dumps(
            {
                "projects": [
                    {"path": "/src/a", "data_dir": ".crush"},
                    {"path": "/src/b", "data_dir": "/var/crush-b"},
                    {"path": "/src/c"},
                ]
            }
        )
    )
    monkeypatch.setenv("CRUSH_GLOBAL_DATA", str(data))

    assert crush.default_paths() == [
        Path("/src/a/.crush"),
        Path("/var/crush-b"),
        Path("/src/c/.crush"),
        data,
    ]
    monkeypatch.delenv("CRUSH_GLOBAL_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert crush.default_paths() == [tmp_path / "xdg" / "crush"]
    assert opencode_go.default_paths() == []


def test_watch_is_told_which_database_a_changed_file_belongs_to(tmp_path: Path) -> None:
    folder = tmp_path / ".crush"
    assert crush.unit_of(folder / "crush.db-wal") == folder / "crush.db"
    assert crush.unit_of(folder / "crush.db") == folder / "crush.db"
    assert crush.unit_of(folder / "crush.db-shm") is None
    assert crush.unit_of(folder / "crush.log") is None
    assert opencode_go.unit_of(tmp_path / "opencode.db-wal") == tmp_path / "opencode.db"
    assert (crush.IMPORTER.live, opencode_go.IMPORTER.live) == ("sqlite", "sqlite")


def test_a_database_of_another_agent_is_refused_by_what_was_expected(tmp_path: Path) -> None:
    assert refusal(goose.IMPORTER, DBOS) == (
        f"{DBOS}: not a Goose session database (expected an SQLite database with Goose's"
        " sessions and messages tables (sessions.db))"
    )
    assert refusal(crush.IMPORTER, DBOS) is None


def test_a_store_whose_every_row_is_still_in_its_wal_is_recognised_and_read(
    tmp_path: Path,
) -> None:
    """The shape SOURCES.md describes for exabgp's Crush store: a 4 KB main file and all
    sessions in the -wal (copied while Crush held it open, never checkpointed)."""
    live = tmp_path / "live" / ".crush" / "crush.db"
    live.parent.mkdir(parents=True)
    writer = agent(live)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    with sqlite3.connect(CISCO.as_uri() + "?immutable=1", uri=True) as source:
        source.backup(writer)
    copied = tmp_path / "copied" / ".crush"
    copied.mkdir(parents=True)
    for name in ("crush.db", "crush.db-wal"):
        (copied / name).write_bytes((live.parent / name).read_bytes())
    writer.close()
    path = copied / "crush.db"
    assert path.stat().st_size <= 4096 < (copied / "crush.db-wal").stat().st_size

    assert detect_format(path) == "crush"
    result = crush.parse(path)

    assert roles(result.threads) == {"user": 1, "assistant": 47, "tool": 51}
    assert (
        dumped(result.threads)[0]["conversation"]
        == dumped(crush.parse(CISCO).threads)[0]["conversation"]
    )
    assert listing(copied) == ["crush.db", "crush.db-wal"]
