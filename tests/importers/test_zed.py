"""Zed's threads.db, built here as Zed writes it (no sample exists: see the importer's
docstring): one row per thread, its JSON zstd-compressed (level 3) or plain."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import zstandard

from loomsync.importers import detect_format, zed
from tests.importers.corpus import assert_extends, dumped
from tests.importers.sqlitedb import agent, listing, pairing, roles

MAIN = "8f0e6c2a-1b3d-4e5f-9a7b-6c5d4e3f2a1b"
SUB = "9a1f7d3b-2c4e-4f60-8b8c-7d6e5f4a3b2c"
OLD = "0b2a8e4c-3d5f-4a71-9c9d-8e7f6a5b4c3d"
TABLE = (
    "CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL,"
    " updated_at TEXT NOT NULL, data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT,"
    " folder_paths TEXT, folder_paths_order TEXT)"
)


def _main(extra_turn: bool = False) -> dict[str, Any]:
    messages: list[Any] = [
        {
            "User": {
                "id": "um-1",
                "content": [
                    {"Text": "Why is "},
                    {
                        "Mention": {
                            "uri": {"File": {"abs_path": "/src/app/lib.rs"}},
                            "content": "fn f() {}",
                        }
                    },
                    {"Text": " slow?"},
                ],
            }
        },
        {
            "Agent": {
                "content": [
                    {"Thinking": {"text": "read it first", "signature": "s1"}},
                    {"Text": "Reading the file."},
                    {
                        "ToolUse": {
                            "id": "toolu_1",
                            "name": "read_file",
                            "raw_input": '{"path":"src/lib.rs"}',
                            "input": {"path": "src/lib.rs"},
                            "is_input_complete": True,
                        }
                    },
                ],
                "tool_results": {
                    "toolu_1": {
                        "tool_use_id": "toolu_1",
                        "tool_name": "read_file",
                        "is_error": False,
                        "content": {"Text": "fn f() { loop {} }"},
                        "output": None,
                    }
                },
            }
        },
        {"Agent": {"content": [{"Text": "It loops forever."}], "tool_results": {}}},
        "Resume",
    ]
    if extra_turn:
        messages += [
            {"User": {"id": "um-2", "content": [{"Text": "fix it"}]}},
            {"Agent": {"content": [{"Text": "Fixed."}], "tool_results": {}}},
        ]
    return {
        "title": "Slow f",
        "messages": messages,
        "updated_at": "2026-02-27T12:34:56Z",
        "detailed_summary": None,
        "initial_project_snapshot": {
            "worktree_snapshots": [
                {
                    "worktree_path": "/src/app",
                    "git_state": {
                        "remote_url": "git@github.com:me/app.git",
                        "head_sha": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
                        "current_branch": "main",
                        "diff": "",
                    },
                }
            ],
            "timestamp": "2026-02-27T12:30:00Z",
        },
        "cumulative_token_usage": {"input_tokens": 3000, "output_tokens": 120},
        "request_token_usage": {
            "um-1": {"input_tokens": 2900, "output_tokens": 110, "cache_read_input_tokens": 2048}
        },
        "model": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
        "profile": "write",
        "imported": False,
        "subagent_context": None,
        "version": "0.3.0",
    }


def _sub() -> dict[str, Any]:
    return {
        "title": "find callers",
        "messages": [
            {"User": {"id": "um-s", "content": [{"Text": "find callers of f"}]}},
            {"Agent": {"content": [{"Text": "Two callers."}], "tool_results": {}}},
        ],
        "updated_at": "2026-02-27T12:33:00Z",
        "subagent_context": {"parent_thread_id": MAIN, "depth": 1},
        "version": "0.3.0",
    }


def _legacy() -> dict[str, Any]:
    return {
        "version": "0.2.0",
        "summary": "Old chat",
        "updated_at": "2025-06-01T09:00:00Z",
        "messages": [
            {"id": 0, "role": "user", "segments": [{"type": "text", "text": "list files"}]},
            {
                "id": 1,
                "role": "assistant",
                "segments": [{"type": "text", "text": "Listing."}],
                "tool_uses": [{"id": "t-1", "name": "list_directory", "input": {"path": "."}}],
            },
            {
                "id": 2,
                "role": "user",
                "segments": [],
                "tool_results": [
                    {
                        "tool_use_id": "t-1",
                        "is_error": False,
                        "content": "a.rs\nb.rs",
                        "output": None,
                    }
                ],
            },
            {"id": 3, "role": "assistant", "segments": [{"type": "text", "text": "Two files."}]},
        ],
        "request_token_usage": [{"input_tokens": 10}],
        "model": {"provider": "zed.dev", "model": "claude-3-7-sonnet"},
    }


def _row(
    db: sqlite3.Connection,
    thread_id: str,
    document: dict[str, Any],
    kind: str = "zstd",
    parent: str | None = None,
) -> None:
    data = json.dumps(document).encode()
    if kind == "zstd":
        data = zstandard.ZstdCompressor(level=3).compress(data)
    db.execute(
        "INSERT OR REPLACE INTO threads (id, summary, updated_at, data_type, data, parent_id)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            thread_id,
            document.get("title") or document.get("summary"),
            document["updated_at"],
            kind,
            data,
            parent,
        ),
    )


@pytest.fixture
def threads_db(tmp_path: Path) -> Path:
    path = tmp_path / "zed" / "threads" / "threads.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute(TABLE)
        _row(db, MAIN, _main())
        _row(db, SUB, _sub(), parent=MAIN)
        _row(db, OLD, _legacy(), kind="json")
    db.close()
    return path


def test_threads_map_messages_tool_results_usage_git_and_lineage(threads_db: Path) -> None:
    result = zed.parse(threads_db)

    assert (result.warnings, result.skipped) == ([], Counter())
    by_id = {t.id: t for t in result.threads}
    assert list(by_id) == [f"T-{OLD}", f"T-{SUB}", f"T-{MAIN}"]  # by updated_at
    main = by_id[f"T-{MAIN}"]
    assert [(m.role, m.content) for m in main.messages] == [
        ("user", "Why is \nfn f() {}\n slow?"),
        ("assistant", "Reading the file."),
        ("tool", "fn f() { loop {} }"),
        ("assistant", "It loops forever."),
        ("system", "[resumed]"),
    ]
    assert pairing([main]) == (1, 1, set(), set())
    assert main.messages[2].tool_name == "read_file"
    assert main.messages[0].model_extra["extra"]["content"] == [
        {"mention": {"File": {"abs_path": "/src/app/lib.rs"}}}
    ]
    assert (
        main.messages[1].model_extra["extra"]["content"][0]["Thinking"]["text"] == "read it first"
    )
    assert "usage" not in main.messages[1].model_extra  # the turn's last answer carries it
    assert main.messages[3].model_extra["usage"] == {
        "input_tokens": 2900,
        "output_tokens": 110,
        "cache_read_tokens": 2048,
        "cache_write_tokens": 0,
        "model": "claude-sonnet-4-5",
        "provider": "anthropic",
    }
    assert (main.cwd, main.git_branch, main.git_remote_url, main.git_current_commit_sha) == (
        "/src/app",
        "main",
        "git@github.com:me/app.git",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    )
    assert (main.provider, main.model, main.metadata.title) == (
        "anthropic",
        "claude-sonnet-4-5",
        "Slow f",
    )
    document = main.model_dump(mode="json")
    assert (document["created_at"], document["last_activity_at"]) == (
        "2026-02-27T12:30:00Z",
        "2026-02-27T12:34:56Z",
    )
    assert main.metadata.extra["cumulative_token_usage"] == {
        "input_tokens": 3000,
        "output_tokens": 120,
    }
    assert main.metadata.extra["profile"] == "write"
    assert by_id[f"T-{SUB}"].metadata.extra["parent_thread_id"] == f"T-{MAIN}"
    old = by_id[f"T-{OLD}"]
    assert [(m.role, m.content) for m in old.messages] == [
        ("user", "list files"),
        ("assistant", "Listing."),
        ("tool", "a.rs\nb.rs"),
        ("assistant", "Two files."),
    ]
    assert old.messages[2].tool_name == "list_directory"
    assert roles(result.threads) == {"user": 3, "assistant": 5, "tool": 2, "system": 1}


def test_detection_reimport_and_no_side_file(threads_db: Path) -> None:
    assert detect_format(threads_db) == "zed"
    assert dumped(zed.parse(threads_db).threads) == dumped(zed.parse(threads_db).threads)
    assert listing(threads_db.parent) == ["threads.db"]


def test_a_thread_rewritten_in_wal_mode_gives_the_new_turn_once(threads_db: Path) -> None:
    before = {t.id: t for t in zed.parse(threads_db).threads}
    writer = agent(threads_db)
    reader = sqlite3.connect(threads_db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM threads").fetchone()

    _row(writer, MAIN, _main(extra_turn=True))
    after = {t.id: t for t in zed.parse(threads_db).threads}

    assert threads_db.with_name("threads.db-wal").exists()
    main = f"T-{MAIN}"
    assert_extends(before[main].messages, after[main].messages)
    assert [m.content for m in after[main].messages[len(before[main].messages) :]] == [
        "fix it",
        "Fixed.",
    ]
    reader.close()
    writer.close()


def test_damaged_data_unknown_data_type_and_newer_columns(threads_db: Path) -> None:
    with sqlite3.connect(threads_db) as db:
        db.execute("ALTER TABLE threads ADD COLUMN worktree_branch TEXT")
        db.execute("UPDATE threads SET worktree_branch = 'feature' WHERE id = ?", (SUB,))
        db.execute(
            "INSERT INTO threads (id, summary, updated_at, data_type, data)"
            " VALUES ('bad-1', 'x', '2026-01-01T00:00:00Z', 'zstd', X'28b52ffd00ff')"
        )
        db.execute(
            "INSERT INTO threads (id, summary, updated_at, data_type, data)"
            " VALUES ('bad-2', 'x', '2026-01-01T00:00:00Z', 'brotli', X'00')"
        )
    db.close()

    result = zed.parse(threads_db)

    assert len(result.threads) == 3
    assert result.skipped == Counter({"bad_record": 2})
    assert result.warnings[0] == (
        f"{threads_db}: a newer schema than this importer knows"
        " (columns kept as extra: threads.worktree_branch)"
    )
    assert "bad-1: damaged zstd data" in result.warnings[1]
    assert "bad-2: unknown data_type 'brotli'" in result.warnings[2]
    sub = next(t for t in result.threads if t.id == f"T-{SUB}")
    assert sub.metadata.extra["worktree_branch"] == "feature"


def test_default_paths_per_os(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(zed.sys, "platform", "linux")
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert zed.default_paths() == [tmp_path / ".local" / "share" / "zed" / "threads"]
    monkeypatch.setattr(zed.sys, "platform", "darwin")
    assert zed.default_paths() == [tmp_path / "Library" / "Application Support" / "Zed" / "threads"]
    monkeypatch.setattr(zed.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "Local"))
    assert zed.default_paths() == [tmp_path / "Local" / "Zed" / "threads"]
    assert zed.unit_of(tmp_path / "threads.db-wal") == tmp_path / "threads.db"
