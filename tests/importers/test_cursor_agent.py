"""cursor-agent: the fixture transcript and store of the corpus, and chat stores built here
the way the agent writes them (hex-JSON meta, content-addressed blobs linked by hash)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections import Counter
from pathlib import Path

from loomsync.importers import cursor_agent, detect_format
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped
from tests.importers.sqlitedb import agent, listing, pairing, roles

FOLDER = TRANSCRIPTS / "cursor-agent"
TRANSCRIPT = FOLDER / "FIXTURE-test-session.jsonl"
STORE = FOLDER / "FIXTURE-test-store.db"
CHAT = "3f1c2a8e-9b7d-4c61-a0e2-5d4b6f7e8a90"


def test_the_fixture_transcript_gives_its_six_messages_with_unpaired_calls() -> None:
    result = cursor_agent.parse(TRANSCRIPT)

    assert (result.warnings, result.skipped) == ([], Counter())
    [thread] = result.threads
    assert [m.role for m in thread.messages] == ["user", "assistant", "assistant"] * 2
    assert thread.metadata.title == "run ls command"
    calls = [c for m in thread.messages for c in m.tool_calls or []]
    assert [(c.tool_name, c.arguments_json["command"]) for c in calls] == [
        ("Shell", "ls -la /tmp"),
        ("Shell", "git status"),
    ]
    assert all(c.id is None for c in calls)  # the transcript gives calls no id: no pairing
    assert detect_format(TRANSCRIPT) == "cursor-agent"


def test_the_fixture_store_has_no_blob_and_imports_into_nothing() -> None:
    assert cursor_agent.parse(STORE).threads == []
    assert cursor_agent.parse(STORE).warnings == []
    assert detect_format(STORE) == "cursor-agent"
    assert listing(FOLDER) == ["FIXTURE-test-session.jsonl", "FIXTURE-test-store.db"]


def _blob(db: sqlite3.Connection, data: bytes) -> bytes:
    digest = hashlib.sha256(data).digest()
    db.execute("INSERT OR IGNORE INTO blobs (id, data) VALUES (?, ?)", (digest.hex(), data))
    return digest


def _node(children: list[bytes], tail: bytes = b"") -> bytes:
    """A protobuf node: field 1 (length-delimited, 32 bytes) per child, then ``tail``."""
    return b"".join(b"\x0a\x20" + child for child in children) + tail


MESSAGES: list[dict[str, object]] = [
    {"role": "system", "content": "You are a coding agent."},
    {
        "role": "user",
        "content": [{"type": "text", "text": "<user_query>\nlist the repo\n</user_query>"}],
    },
    {
        "role": "assistant",
        "id": "1",
        "content": [
            {"type": "reasoning", "text": "use ls"},
            {"type": "text", "text": "Listing."},
            {
                "type": "tool-call",
                "toolCallId": "tc-1",
                "toolName": "Shell",
                "args": {"command": "ls"},
            },
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "tc-1",
                "toolName": "Shell",
                "result": "README.md\nsrc",
            }
        ],
    },
    {"role": "assistant", "id": "1", "content": [{"type": "text", "text": "Two entries."}]},
]


def _store(
    path: Path, messages: list[dict[str, object]], db: sqlite3.Connection | None = None
) -> None:
    """Write ``messages`` as cursor-agent does: each a JSON blob, a root node naming them in
    order (with a nested node for the later half), and the root's hash in ``meta``."""
    own = db is None
    db = db or sqlite3.connect(path)
    db.execute("CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, data BLOB)")
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    hashes = [_blob(db, json.dumps(m).encode()) for m in messages]
    half = len(hashes) // 2
    inner = _blob(db, _node(hashes[half:]))
    root = _blob(db, _node([*hashes[:half], inner], tail=b"\x10\x01"))  # + a varint field
    meta = {
        "agentId": CHAT,
        "name": "List the repo",
        "mode": "auto-run",
        "createdAt": 1775522590321,
        "lastUsedModel": "claude-4-sonnet",
        "latestRootBlobId": root.hex(),
    }
    db.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('0', ?)",
        (json.dumps(meta).encode().hex(),),
    )
    if own:
        db.commit()
        db.close()


def _chat(tmp_path: Path) -> Path:
    path = tmp_path / "chats" / "0123456789abcdef0123456789abcdef" / CHAT / "store.db"
    path.parent.mkdir(parents=True)
    _store(path, MESSAGES)
    return path


def test_a_chat_store_walks_its_blob_tree_in_order_and_pairs_calls(tmp_path: Path) -> None:
    path = _chat(tmp_path)

    result = cursor_agent.parse(path)

    assert (result.warnings, result.skipped) == ([], Counter())
    [thread] = result.threads
    assert thread.id == f"T-{CHAT}"
    assert [(m.role, m.content) for m in thread.messages] == [
        ("system", "You are a coding agent."),
        ("user", "<user_query>\nlist the repo\n</user_query>"),
        ("assistant", "Listing."),
        ("tool", "README.md\nsrc"),
        ("assistant", "Two entries."),
    ]
    assert pairing([thread]) == (1, 1, set(), set())
    assert thread.messages[3].tool_name == "Shell"
    assert thread.messages[2].model_extra["extra"]["content"] == [
        {"type": "reasoning", "text": "use ls"}
    ]
    assert (thread.model, thread.metadata.title) == ("claude-4-sonnet", "List the repo")
    assert thread.model_dump(mode="json")["created_at"] == "2026-04-07T00:43:10.321Z"
    assert thread.metadata.extra["workspace_hash"] == "0123456789abcdef0123456789abcdef"
    assert thread.metadata.extra["mode"] == "auto-run"
    assert detect_format(path) == "cursor-agent"
    assert listing(path.parent) == ["store.db"]


def test_a_growing_chat_in_wal_mode_gives_the_new_turn_once(tmp_path: Path) -> None:
    path = _chat(tmp_path)
    [before] = cursor_agent.parse(path).threads
    writer = agent(path)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM blobs").fetchone()
    later = [
        *MESSAGES,
        {"role": "user", "content": "<user_query>\nand the tests?\n</user_query>"},
        {
            "role": "assistant",
            "id": "1",
            "content": [
                {
                    "type": "tool-call",
                    "toolCallId": "tc-2",
                    "toolName": "Glob",
                    "input": {"p": "*_test*"},
                }
            ],
        },
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "tc-2",
                    "output": {"type": "text", "value": "none"},
                }
            ],
        },
        {"role": "assistant", "id": "1", "content": [{"type": "text", "text": "None yet."}]},
    ]

    _store(path, later, writer)  # new blobs and a new root, as the agent commits a turn
    [after] = cursor_agent.parse(path).threads

    assert path.with_name("store.db-wal").exists()
    assert_extends(before.messages, after.messages)
    assert [m.content for m in after.messages[len(before.messages) :]] == [
        "<user_query>\nand the tests?\n</user_query>",
        "",
        "none",
        "None yet.",
    ]
    assert pairing([after]) == (2, 2, set(), set())
    assert (after.messages[-3].tool_calls or [])[0].arguments_json == {"p": "*_test*"}
    assert dumped(cursor_agent.parse(path).threads) == dumped([after])
    reader.close()
    writer.close()


def test_damaged_blobs_and_a_newer_table_do_not_stop_the_import(tmp_path: Path) -> None:
    path = _chat(tmp_path)
    with sqlite3.connect(path) as db:
        broken = _blob(db, b"{not json")
        loop = hashlib.sha256(b"loop").digest()
        db.execute("INSERT INTO blobs VALUES (?, ?)", (loop.hex(), _node([loop])))  # a cycle
        root = json.loads(bytes.fromhex(db.execute("SELECT value FROM meta").fetchone()[0]))
        new_root = _blob(db, _node([bytes.fromhex(root["latestRootBlobId"]), broken, loop]))
        root["latestRootBlobId"] = new_root.hex()
        db.execute("UPDATE meta SET value = ?", (json.dumps(root).encode().hex(),))
        db.execute("CREATE TABLE checkpoints (id TEXT)")
    db.close()

    result = cursor_agent.parse(path)

    assert result.skipped == Counter({"invalid_json": 1})
    assert roles(result.threads) == {"system": 1, "user": 1, "assistant": 2, "tool": 1}
    assert result.warnings == [
        f"{path}: a newer schema than this importer knows (tables not read: checkpoints)"
    ]


def test_watch_maps_a_changed_wal_to_its_store() -> None:
    folder = Path("/h/.cursor/chats/x/y")
    assert cursor_agent.unit_of(folder / "store.db-wal") == folder / "store.db"
    assert cursor_agent.unit_of(folder / "store.db-shm") is None
    assert cursor_agent.unit_of(TRANSCRIPT) == TRANSCRIPT
