"""The SQLite importers never raise on what a database holds: random JSON (and non-JSON)
in the columns each agent fills with JSON, on copies of real or built databases."""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.importers import FORMATS
from tests.importers.corpus import TRANSCRIPTS
from tests.importers.test_fuzz import SETTINGS, _check, json_values

CRUSH = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"
GOOSE = TRANSCRIPTS / "goose" / "jwp23__dotfiles" / "sessions" / "sessions.db"
#: Fewer draws than the JSON formats': each draw copies and snapshots a database.
FEWER = settings(SETTINGS, max_examples=40)
PART_TYPES = ["text", "tool_call", "tool_result", "binary", "finish", "reasoning", "image_url"]
parts = st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(PART_TYPES), "data": json_values}),
    max_size=4,
)
cell = st.one_of(
    json_values.map(json.dumps),
    parts.map(json.dumps),
    st.text(max_size=30),
    st.binary(max_size=30),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.none(),
)


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _fresh(source: Path, folder: Path, name: str) -> Path:
    target = folder / name
    target.unlink(missing_ok=True)
    shutil.copyfile(source, target)
    return target


@FEWER
@given(
    values=st.lists(cell, min_size=1, max_size=4),
    role=st.sampled_from(["user", "assistant", "tool", "x"]),
)
def test_crush_rows_with_random_parts_never_raise(
    values: list[Any], role: str, folder: Path
) -> None:
    path = _fresh(CRUSH, folder, "crush.db")
    with sqlite3.connect(path) as db:
        for index, value in enumerate(values):
            db.execute(
                "INSERT INTO messages (id, session_id, role, parts, created_at, updated_at)"
                " VALUES (?, 'a20c5ed5-41d4-45f7-88eb-7ba0645f1341', ?, ?, ?, ?)",
                (
                    f"fuzz-{index}",
                    role,
                    "null" if value is None else value,
                    value if isinstance(value, int) else 0,
                    0,
                ),
            )
    db.close()
    _check(FORMATS["crush"].parse(path))


@FEWER
@given(content=cell, metadata=cell, role=st.sampled_from(["user", "assistant", "system"]))
def test_goose_rows_with_random_content_never_raise(
    content: Any, metadata: Any, role: str, folder: Path
) -> None:
    path = _fresh(GOOSE, folder, "sessions.db")
    with sqlite3.connect(path) as db:
        db.execute(
            "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json)"
            " VALUES ('20251202_1', ?, ?, 0, ?)",
            (role, content if content is not None else "[]", metadata),
        )
    db.close()
    _check(FORMATS["goose"].parse(path))


@FEWER
@given(document=json_values, compressed=st.booleans())
def test_zed_rows_with_random_documents_never_raise(
    document: Any, compressed: bool, folder: Path
) -> None:
    path = folder / "threads.db"
    path.unlink(missing_ok=True)
    data = json.dumps(
        {"version": "0.3.0", "messages": [document, {"User": document}, {"Agent": document}]}
    ).encode()
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT, updated_at TEXT,"
            " data_type TEXT, data BLOB)"
        )
        db.execute(
            "INSERT INTO threads VALUES ('t', 's', '2026-01-01T00:00:00Z', ?, ?)",
            ("zstd" if compressed else "json", zstandard.compress(data) if compressed else data),
        )
    db.close()
    _check(FORMATS["zed"].parse(path))


@FEWER
@given(composer=json_values, bubble=json_values)
def test_cursor_rows_with_random_values_never_raise(
    composer: Any, bubble: Any, folder: Path
) -> None:
    path = folder / "state.vscdb"
    path.unlink(missing_ok=True)
    header = {"fullConversationHeadersOnly": [{"bubbleId": "b", "type": 2}], "x": composer}
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
        db.execute("INSERT INTO cursorDiskKV VALUES ('composerData:c', ?)", (json.dumps(header),))
        db.execute("INSERT INTO cursorDiskKV VALUES ('composerData:d', ?)", (json.dumps(composer),))
        db.execute(
            "INSERT INTO cursorDiskKV VALUES ('bubbleId:c:b', ?)",
            (json.dumps(bubble if not isinstance(bubble, dict) else {"type": 2, **bubble}),),
        )
    db.close()
    _check(FORMATS["cursor"].parse(path))
