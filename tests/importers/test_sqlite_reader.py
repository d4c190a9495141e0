"""The one SQLite reader every SQLite importer uses (loomsync/importers/sqlite.py): a private
copy, WAL-aware, no side file and no lock next to the user's database, schema notes and
change marks. Each hazard it avoids is shown happening to the obvious alternative first."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from loomsync.importers import sqlite
from tests.importers.corpus import TRANSCRIPTS
from tests.importers.sqlitedb import agent, listing

DBOS = TRANSCRIPTS / "crush" / "dbos-inc__dbos-transact-golang" / ".crush" / "crush.db"


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "project" / ".crush" / "crush.db"
    target.parent.mkdir(parents=True)
    shutil.copyfile(DBOS, target)
    return target


def test_opening_read_only_in_place_would_leave_side_files_a_snapshot_leaves_none(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    plain = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    plain.execute("SELECT count(*) FROM messages").fetchone()
    plain.close()
    assert listing(path.parent) == ["crush.db", "crush.db-shm", "crush.db-wal"]  # the hazard

    clean = _copy(tmp_path / "again")
    with sqlite.snapshot(clean) as connection:
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 82
        assert listing(clean.parent) == ["crush.db"]
    assert listing(clean.parent) == ["crush.db"]
    assert clean.read_bytes() == DBOS.read_bytes()


def test_the_committed_content_of_the_wal_is_seen_and_nothing_uncommitted(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    writer = agent(path)
    writer.execute("PRAGMA wal_autocheckpoint = 0")  # everything stays in the -wal
    writer.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    writer.execute("INSERT INTO notes (body) VALUES ('committed')")
    writer.execute("BEGIN")
    writer.execute("INSERT INTO notes (body) VALUES ('in flight')")
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    immutable = sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)
    assert immutable.execute("SELECT name FROM sqlite_master").fetchall() == []  # the hazard:
    immutable.close()  # immutable=1 ignores the -wal, where the whole database still is

    assert sqlite.peek(path) == {"notes": ["id", "body"]}
    with sqlite.snapshot(path) as connection:
        bodies = [row["body"] for row in connection.execute("SELECT body FROM notes")]

    assert bodies == ["committed"]
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files  # nothing touched
    writer.execute("COMMIT")
    writer.close()


def test_a_reader_in_place_blocks_the_agent_a_snapshot_does_not(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"  # Goose's database is in rollback-journal mode
    with sqlite3.connect(path) as setup:
        setup.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, body TEXT)")
        setup.execute("INSERT INTO messages (body) VALUES ('a')")
    setup.close()
    writer = sqlite3.connect(path, timeout=0, isolation_level=None)

    in_place = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    in_place.execute("BEGIN")
    in_place.execute("SELECT count(*) FROM messages").fetchone()
    with pytest.raises(sqlite3.OperationalError, match="locked"):  # the hazard
        writer.execute("INSERT INTO messages (body) VALUES ('b')")
    in_place.execute("ROLLBACK")
    in_place.close()

    with sqlite.snapshot(path) as connection:
        connection.execute("BEGIN")
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
        writer.execute("INSERT INTO messages (body) VALUES ('b')")  # the agent goes on
        assert connection.execute("SELECT count(*) FROM messages").fetchone()[0] == 1
    writer.close()


def test_a_copy_is_taken_again_when_the_agent_writes_during_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "crush.db"
    shutil.copyfile(DBOS, path)
    writer = agent(path)
    real = shutil.copyfile
    calls: list[str] = []

    def copy_while_the_agent_writes(source: Path, target: Path) -> object:
        calls.append(Path(source).name)
        if len(calls) == 1:  # the agent commits a turn while the first copy is taken
            writer.execute("UPDATE sessions SET title = 'renamed'")
        return real(source, target)

    monkeypatch.setattr(sqlite.shutil, "copyfile", copy_while_the_agent_writes)
    with sqlite.snapshot(path) as connection:
        titles = {row[0] for row in connection.execute("SELECT title FROM sessions")}

    assert "renamed" in titles
    assert calls.count("crush.db") >= 2
    writer.close()


def test_a_database_that_never_stops_changing_is_an_error_not_a_torn_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "crush.db"
    shutil.copyfile(DBOS, path)
    writer = agent(path)
    real = shutil.copyfile

    def always_changing(source: Path, target: Path) -> object:
        if Path(source).name == "crush.db":
            writer.execute("UPDATE sessions SET cost = cost + 1")
        return real(source, target)

    monkeypatch.setattr(sqlite.shutil, "copyfile", always_changing)
    with pytest.raises(sqlite.SnapshotError, match="kept changing"), sqlite.snapshot(path):
        pass
    writer.close()


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"", "not an SQLite database"), (b"SQLite format 3\x00" + b"\xff" * 200, "damaged")],
)
def test_a_file_that_is_not_a_readable_database_raises_snapshot_error(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(content)

    with pytest.raises(sqlite.SnapshotError, match=reason), sqlite.snapshot(path):
        pass
    assert sqlite.peek(path) == {}
    assert listing(tmp_path) == ["x.db"]


def test_schema_note_names_what_is_not_understood_and_nothing_else(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE sessions (id, title, colour)")
        connection.execute("CREATE TABLE plugins (id)")
        connection.execute("CREATE TABLE meta (k)")
    connection.close()
    schema = sqlite.Schema(tables={"sessions": ("id", "title")}, ignored=("meta",))
    exact = sqlite.Schema(
        tables={"sessions": ("id", "title", "colour")}, ignored=("plugins", "meta")
    )

    with sqlite.snapshot(path) as connection:
        assert sqlite.schema_note(connection, schema) == (
            "a newer schema than this importer knows (tables not read: plugins;"
            " columns kept as extra: sessions.colour)"
        )
        assert sqlite.schema_note(connection, exact) is None


def test_rows_changed_keys_and_high_water(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE m (id, session, updated_at, body BLOB)")
        connection.executemany(
            "INSERT INTO m VALUES (?, ?, ?, ?)",
            [(1, "s1", 10, b"\xff"), (2, "s2", 20, b"ok"), (3, "s1", 30, None)],
        )
    connection.close()

    with sqlite.snapshot(path) as connection:
        assert sqlite.high_water(connection, "m", "updated_at") == 30
        assert sqlite.changed_keys(connection, "m", "session", "updated_at", None) == {"s1", "s2"}
        assert sqlite.changed_keys(connection, "m", "session", "updated_at", 20) == {"s1", "s2"}
        assert sqlite.changed_keys(connection, "m", "session", "updated_at", 21) == {"s1"}
        assert sqlite.changed_keys(connection, "m", "session", "updated_at", 31) == set()
        assert sqlite.high_water(connection, "m", "missing") is None
        found = sqlite.rows(connection, "m", where={"session": "s1"}, order=("updated_at",))
        assert [r["id"] for r in found] == [1, 3]
        assert sqlite.rows(connection, "m", where={"nope": 1}) == []
        assert sqlite.rows(connection, "absent") == []
        assert sqlite.unknown(found[0], ("id", "session", "updated_at")) == {"body": {"hex": "ff"}}


def test_side_files_map_to_their_database() -> None:
    base = Path("/x/crush.db")
    assert [sqlite.database_of(Path(f"/x/crush.db{s}")) for s in sqlite.SIDE_SUFFIXES] == [base] * 3
    assert sqlite.database_of(base) == base
