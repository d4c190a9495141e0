"""``loomsync watch`` driven by the importers' declarations (issue 28 items 2 and 4): a file
is mapped to its session unit by ``unit_of``, ``live="rewrite"`` reads the unit whole when it
or a sibling changed, ``live="sqlite"`` reads a database again when it or its ``-wal`` changed,
and a re-capture never duplicates a message (the compare-and-save path).

The machinery is driven in-process (:class:`loomsync.watch.capture.Capture` on a real local
store, the events :mod:`loomsync.watch.loop` would deliver), with two agents of
tests/client/thirdparty_agent.py registered for the test; plus the real Gemini CLI chat and
Codex rollout growing turn by turn, and the real loop over a SQLite store written in WAL mode.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loomsync.config import ImportConfig, WatchConfig
from loomsync.core.document.model import Thread
from loomsync.errors import ConfigError
from loomsync.importers import FORMATS
from loomsync.importers.exclude import Exclusions
from loomsync.importers.run import ImportOwner
from loomsync.store.local import LocalThreadStore
from loomsync.sync.syncing import SyncingThreadStore
from loomsync.watch.capture import Capture, Saved
from loomsync.watch.loop import run
from loomsync.watch.offsets import Offsets
from loomsync.watch.sources import Source, sources
from tests.client import thirdparty_agent
from tests.client.conftest import wait_for
from tests.importers.corpus import TRANSCRIPTS

GEMINI = TRANSCRIPTS / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json"
ROLLOUT = (
    TRANSCRIPTS
    / "codex-rollout"
    / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
)
OWNER = ImportOwner("machine:test")


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two agents of tests/client/thirdparty_agent.py, registered for this test."""
    monkeypatch.setitem(FORMATS, "folio", thirdparty_agent.FOLIO)
    monkeypatch.setitem(FORMATS, "sqlfake", thirdparty_agent.SQLFAKE)


class Rig:
    """A Capture on a real local store in ``root``, recording every save event."""

    def __init__(self, root: Path, exclusions: Exclusions | None = None) -> None:
        self.local = LocalThreadStore(root / "threads")
        self.store = SyncingThreadStore(self.local, None, sync_dir=root / "sync", background=False)
        self.offsets = Offsets(root / "offsets.sqlite3")
        self.events: list[Saved] = []
        self.capture = Capture(
            self.store, self.offsets, OWNER, on_saved=self.events.append, exclusions=exclusions
        )

    def threads(self) -> list[Thread]:
        return [self.local.load(s.id) for s in self.local.list(archived="all")]

    def contents(self) -> list[list[str]]:
        return [[m.content for m in t.messages] for t in self.threads()]

    def close(self) -> None:
        self.offsets.close()
        self.store.close()


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    made = Rig(tmp_path / "state")
    yield made
    made.close()


def turns(count: int) -> list[dict[str, str]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"}
        for i in range(count)
    ]


def test_a_sibling_file_of_a_session_folder_is_read_as_its_unit_and_rewrites_add_turns(
    fakes: None, rig: Rig, tmp_path: Path
) -> None:
    folder = tmp_path / "w" / "a.folio"
    source = Source(tmp_path / "w", "folio")
    thirdparty_agent.write_folio(folder, "a", turns(2))
    assert rig.capture.scan(source) == 1  # both files looked at, one session unit counted
    assert rig.contents() == [["turn 0", "turn 1"]]
    assert [e.added for e in rig.events] == [2]
    for count in (4, 6):
        thirdparty_agent.write_folio(folder, "a", turns(count))  # only the sibling changes
        rig.capture.changed(folder / "turns.json", source)
        rig.capture.changed(folder / "session.json", source)  # the same unit: nothing more
    assert rig.contents() == [[f"turn {i}" for i in range(6)]]
    assert [(e.created, e.added) for e in rig.events] == [(True, 2), (False, 2), (False, 2)]
    assert {e.path for e in rig.events} == {folder / "session.json"}


def test_an_unchanged_unit_is_not_read_again_after_a_restart(
    fakes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "w" / "a.folio"
    thirdparty_agent.write_folio(folder, "a", turns(2))
    source = Source(tmp_path / "w", "folio")
    first = Rig(tmp_path / "state")
    first.capture.scan(source)
    first.close()
    reads: list[Path] = []
    real = thirdparty_agent.FOLIO.parse
    monkeypatch.setitem(
        FORMATS,
        "folio",
        thirdparty_agent.FOLIO.__class__(
            **{**thirdparty_agent.FOLIO.__dict__, "parse": lambda p: reads.append(p) or real(p)}
        ),
    )
    second = Rig(tmp_path / "state")
    try:
        second.capture.scan(source)
        assert reads == []  # the offsets row's signature covers the unit and its sibling
        thirdparty_agent.write_folio(folder, "a", turns(3))
        second.capture.scan(source)
        assert reads == [folder / "session.json"]
        assert second.contents() == [["turn 0", "turn 1", "turn 2"]]
    finally:
        second.close()


def _sqlfake(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")  # every new row stays in the -wal
    db.execute("CREATE TABLE turns (id INTEGER PRIMARY KEY, role TEXT, content TEXT)")
    return db


def test_a_sqlite_store_is_read_again_when_its_wal_changes_never_twice_the_same_row(
    fakes: None, rig: Rig, tmp_path: Path
) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "chat.sqlfake"
    writer = _sqlfake(path)
    try:
        source = Source(folder, "sqlfake")
        for n, turn in enumerate(turns(6)):
            writer.execute("INSERT INTO turns (role, content) VALUES (?, ?)", tuple(turn.values()))
            before = path.stat().st_mtime_ns
            rig.capture.changed(path.with_name(path.name + "-wal"), source)  # the event seen
            assert path.stat().st_mtime_ns == before  # the row is in the -wal only
            assert rig.contents() == [[f"turn {i}" for i in range(n + 1)]]
        rig.capture.changed(path.with_name(path.name + "-shm"), source)
        rig.capture.scan(source)  # the database, its -wal and -shm: nothing new
        assert [e.added for e in rig.events] == [1] * 6
        writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        rig.capture.changed(path, source)
        assert [e.added for e in rig.events] == [1] * 6
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["chat.sqlfake", "chat.sqlfake-wal", "chat.sqlfake-shm"]
        )  # the reader made no file of its own
    finally:
        writer.close()
    rig.capture.removed(path.with_name(path.name + "-wal"), source)  # gone at the last close
    assert [e.added for e in rig.events] == [1] * 6
    assert rig.offsets.get(str(path)) is not None  # the database is still followed


def test_the_loop_follows_a_database_written_in_wal_mode(fakes: None, tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "chat.sqlfake"
    writer = _sqlfake(path)
    stop = threading.Event()
    events: list[Saved] = []
    contents: list[list[list[str]]] = [[]]

    def watch() -> None:  # the capture's SQLite objects live in the loop's thread
        made = Rig(tmp_path / "state")
        made.capture.on_saved = lambda event: (
            events.append(event),
            contents.append(made.contents()),
        )
        try:
            run(made.capture, [Source(folder, "sqlfake")], polling="never", poll_interval=0.05,
                stop=stop)  # fmt: skip
        finally:
            made.close()

    loop = threading.Thread(target=watch)  # file events (inotify), as on a local disk
    loop.start()
    try:
        for n, turn in enumerate(turns(4)):
            writer.execute("INSERT INTO turns (role, content) VALUES (?, ?)", tuple(turn.values()))
            want = [[f"turn {i}" for i in range(n + 1)]]
            wait_for(lambda: contents[-1] == want, what=f"turn {n}")  # noqa: B023
    finally:
        stop.set()
        loop.join(timeout=10)
        writer.close()
    assert [e.added for e in events] == [1, 1, 1, 1]


def _gemini_prefix(document: dict[str, object], count: int) -> bytes:
    messages = document["messages"]
    assert isinstance(messages, list)
    return json.dumps({**document, "messages": messages[:count]}, indent=2).encode()


def test_a_growing_gemini_chat_rewritten_in_place_is_captured_turn_by_turn(
    rig: Rig, tmp_path: Path
) -> None:
    document = json.loads(GEMINI.read_text())
    total = len(document["messages"])
    chat = tmp_path / "gemini" / "proj" / "chats" / GEMINI.name
    chat.parent.mkdir(parents=True)
    source = Source(tmp_path / "gemini", "gemini-cli")
    counts = []
    for count in range(1, total + 1):
        chat.write_bytes(_gemini_prefix(document, count))  # Gemini CLI rewrites the file
        rig.capture.changed(chat, source)
        [thread] = rig.threads()
        counts.append(len(thread.messages))
    [want] = FORMATS["gemini-cli"].parse(GEMINI).threads
    [got] = rig.threads()
    assert [m.content for m in got.messages] == [m.content for m in want.messages]
    assert counts == sorted(counts)
    assert counts[-1] == len(want.messages)
    assert sum(e.added for e in rig.events) == len(want.messages)  # never a duplicate


def test_a_growing_codex_rollout_is_captured_line_by_line_with_its_usage(
    rig: Rig, tmp_path: Path
) -> None:
    lines = ROLLOUT.read_bytes().splitlines(keepends=True)
    rollout = tmp_path / "codex" / ROLLOUT.name
    rollout.parent.mkdir()
    source = Source(tmp_path / "codex", "codex")
    with open(rollout, "ab") as handle:
        for line in lines:
            handle.write(line)
            handle.flush()
            rig.capture.changed(rollout, source)
    [want] = FORMATS["codex"].parse(ROLLOUT).threads
    [got] = rig.threads()
    assert len(got.messages) == len(want.messages)
    assert [m.model_extra.get("usage") for m in got.messages] == [
        m.model_extra.get("usage") for m in want.messages
    ]
    assert any(m.model_extra.get("usage") for m in got.messages)
    assert sum(e.added for e in rig.events) == len(want.messages)


def test_a_session_of_an_excluded_repository_is_never_saved(tmp_path: Path) -> None:
    excluded = Exclusions.of(ImportConfig(exclude_repositories=["/work/secret"]))
    made = Rig(tmp_path / "state", excluded)
    try:
        rollout = tmp_path / "codex" / ROLLOUT.name
        rollout.parent.mkdir()
        text = ROLLOUT.read_text()
        [thread] = FORMATS["codex"].parse(ROLLOUT).threads
        assert thread.cwd
        rollout.write_text(text.replace(json.dumps(thread.cwd)[1:-1], "/work/secret/app"))
        made.capture.changed(rollout, Source(tmp_path / "codex", "codex"))
        assert made.threads() == []
        assert made.events == []
    finally:
        made.close()


def test_watch_sources_come_from_the_importers_and_config_keys_name_any_agent(
    fakes: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("FOLIO_HOME", str(home / ".folio"))
    by_default = {s.format for s in sources(WatchConfig(), home)}
    assert by_default == {n for n, i in FORMATS.items() if i.watch_by_default}
    (home / ".folio").mkdir(parents=True)  # folio found on this machine: watched too
    found = {s.root: s.format for s in sources(WatchConfig(), home)}
    assert found[home / ".folio"] == "folio"
    configured = sources(WatchConfig.model_validate({"folio": ["f"], "claude_code": []}), home)
    assert (home / "f", "folio") in [(s.root, s.format) for s in configured]
    assert "claude-code" not in {s.format for s in configured}
    left_out = Exclusions.of(ImportConfig(exclude_agents=["folio", "codex"]))
    assert {s.format for s in sources(WatchConfig(), home, left_out)} & {"folio", "codex"} == set()
    with pytest.raises(ConfigError, match=r"watch\.nobody: no such agent"):
        sources(WatchConfig.model_validate({"nobody": ["x"]}), home)
    shutil.rmtree(home / ".folio")
