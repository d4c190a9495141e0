"""A resumed Claude Code session is one conversation, not two copies (issue 27, item 9).

``claude --resume`` writes a new file under a new session id that opens with a copy of the
history it continues: the copied lines keep their ``uuid`` s and take the new ``sessionId``
(a leading ``summary`` line points at the old leaf), then the new turns follow. The files here
are built that way from the real session ``e9fb405b-turn-2.jsonl`` of ../shared/data: its
first 28 lines are the original session; the resumed file copies them under a new id, adds the
prompt typed after the resume, and goes on with the real lines 28-49. Imported as a folder,
as the single new file, and by ``loomsync watch`` while the file grows, the resumed thread
holds only what is new, links to the first (``metadata.extra.resumed_from``), and search finds
a copied message once.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from loomsync.importers import claude_code
from tests.client.conftest import Person, wait_for
from tests.client.test_watch import CLAUDE_DIR, Watch, copy_lines, local_counts, watches

__all__ = ["watches"]  # the fixture, shared with test_watch.py

REAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts" / "claude-code"
SOURCE = REAL / "e9fb405b-turn-2.jsonl"
OLD = "e9fb405b-169f-40eb-9396-7e75076f045d"
NEW = "7c2b4d1e-0a9f-4e3b-8d6c-5f1a2b3c4d5e"
CUT = 28  # the original session: lines [0, CUT) of the real file
PROMPT = "after the resume: write the loomsync resumption plan down"
COPIED_WORDS = "solution-architect"  # in the original's first prompt, so in the copy


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SOURCE.read_text(encoding="utf-8").splitlines()]


def _dump(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _resumed_lines(
    original: list[dict[str, Any]], new_session: str, prompt: str, rest: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """As Claude Code writes a resumed session: a summary line naming the old leaf, the old
    lines under the new ``sessionId`` (uuids kept), the prompt typed after the resume, then
    ``rest`` (lines going on from the prompt) under the new id."""
    conversation = [e for e in original if e.get("type") in ("user", "assistant")]
    leaf = conversation[-1]["uuid"]
    title = next((e["summary"] for e in original if e.get("type") == "summary"), "Session")
    copied = [
        {**e, "sessionId": new_session} if "sessionId" in e else e
        for e in original
        if e.get("type") != "summary"
    ]
    ask = {
        **conversation[-1],
        "type": "user",
        "uuid": f"{new_session[:8]}-0000-4000-8000-000000000001",
        "parentUuid": leaf,
        "sessionId": new_session,
        "timestamp": "2026-01-14T20:00:00.000Z",
        "message": {"role": "user", "content": prompt},
    }
    ask.pop("requestId", None)
    follow = [{**e, "sessionId": new_session} for e in rest]
    if follow:
        follow[0] = {**follow[0], "parentUuid": ask["uuid"]}
    return [{"type": "summary", "summary": title, "leafUuid": leaf}, *copied, ask, *follow]


def _write_pair(folder: Path) -> tuple[Path, Path]:
    """The original session and its resumption, in one project folder."""
    lines = _lines()
    original = _dump(folder / f"{OLD}.jsonl", lines[:CUT])
    resumed = _dump(folder / f"{NEW}.jsonl", _resumed_lines(lines[:CUT], NEW, PROMPT, lines[CUT:]))
    os.utime(original, ns=(1_700_000_000_000_000_000,) * 2)  # written before the resumption
    return original, resumed


def _shown(person: Person, thread_id: str) -> dict[str, Any]:
    done = person("show", thread_id, "--json")
    assert done.code == 0, done.err
    shown: dict[str, Any] = json.loads(done.out)
    return shown


def _threads(person: Person) -> dict[str, dict[str, Any]]:
    """Every thread here by its session id (``metadata.extra.source.session_id``)."""
    done = person("list", "--json", "--limit", "0")
    assert done.code == 0, done.err
    found = {}
    for row in json.loads(done.out):
        thread = _shown(person, row["id"])
        found[thread["metadata"]["extra"]["source"]["session_id"]] = thread
    return found


def _search_ids(person: Person, words: str) -> list[str]:
    done = person("search", words, "--local", "--json")
    assert done.code == 0, done.err
    return sorted({hit["thread"]["id"] for hit in json.loads(done.out)["hits"]})


def _contents(thread: dict[str, Any]) -> list[str]:
    return [m["content"] for m in thread["conversation"]["messages"]]


def _expected_new_part() -> list[str]:
    """The messages of the resumed thread when only its own lines are read."""
    lines = _lines()
    alone = _resumed_lines(lines[:CUT], NEW, PROMPT, lines[CUT:])
    copied = {e["uuid"] for e in lines[:CUT] if "uuid" in e}
    own = [e for e in alone if e.get("uuid") not in copied and e.get("type") != "summary"]
    with tempfile.TemporaryDirectory() as scratch:
        [thread] = claude_code.parse(_dump(Path(scratch) / f"{NEW}.jsonl", own)).threads
    return [m.content for m in thread.messages]


def _assert_one_conversation(person: Person) -> None:
    threads = _threads(person)
    assert set(threads) == {OLD, NEW}
    first, second = threads[OLD], threads[NEW]
    assert "resumed_from" not in first["metadata"]["extra"]
    assert second["metadata"]["extra"]["resumed_from"] == first["id"]
    assert _contents(second) == _expected_new_part()
    assert _contents(second)[0] == PROMPT
    whole = claude_code.parse(SOURCE).threads[0]
    assert len(first["conversation"]["messages"]) + len(_contents(second)) > len(whole.messages)
    assert _search_ids(person, COPIED_WORDS) == [first["id"]]  # found once, in the first
    assert _search_ids(person, "resumption plan") == [second["id"]]


def test_a_folder_import_links_the_resumption_and_keeps_the_copy_once(
    person: Person, tmp_path: Path
) -> None:
    folder = tmp_path / "projects" / "-home-me-app"
    _write_pair(folder)
    done = person("import", "claude-code", str(folder))
    assert done.code == 0, done.err
    assert "no Claude Code conversation" not in done.out + done.err
    _assert_one_conversation(person)


def test_the_single_new_file_imported_alone_holds_only_its_new_turns(
    person: Person, tmp_path: Path
) -> None:
    folder = tmp_path / "projects" / "-home-me-app"
    original, resumed = _write_pair(folder)
    assert person("import", "claude-code", str(resumed)).code == 0  # the new file first
    assert person("import", "claude-code", str(original)).code == 0
    _assert_one_conversation(person)


def test_a_second_resumption_continues_the_first_and_copies_of_one_session_are_not_one(
    tmp_path: Path,
) -> None:
    """``A`` resumed as ``B``, ``B`` resumed as ``C``: ``C`` links to ``B`` and holds only its
    own turns. Two captures of one session file (same session id) are not a resumption."""
    lines = _lines()
    folder = tmp_path / "project"
    third = "0d4e5f6a-7b8c-4d9e-8f0a-1b2c3d4e5f6a"
    original, resumed = _write_pair(folder)
    b_lines = [json.loads(line) for line in resumed.read_text().splitlines()]
    c_lines = _resumed_lines(b_lines, third, "and once more after a second resume", [])
    _dump(folder / f"{third}.jsonl", c_lines)
    [c_thread] = claude_code.parse(folder / f"{third}.jsonl").threads
    assert c_thread.metadata.extra["resumed_from"] == f"T-{NEW}"
    assert [m.content for m in c_thread.messages] == ["and once more after a second resume"]
    [b_thread] = claude_code.parse(resumed).threads
    assert b_thread.metadata.extra["resumed_from"] == f"T-{OLD}"
    [a_thread] = claude_code.parse(original).threads
    assert "resumed_from" not in a_thread.metadata.extra
    # the real pair of captures of one session, side by side: each keeps its whole history
    pair = _dump(tmp_path / "captures" / "turn-2.jsonl", lines)
    _dump(tmp_path / "captures" / "turn-1.jsonl", lines[:25])
    [whole] = claude_code.parse(pair).threads
    assert len(whole.messages) == len(claude_code.parse(SOURCE).threads[0].messages)
    assert "resumed_from" not in whole.metadata.extra


def test_a_resumed_file_holding_only_the_copy_gives_no_thread_and_no_warning(
    tmp_path: Path,
) -> None:
    """Claude Code has copied the history but the first new turn is not written yet."""
    folder = tmp_path / "project"
    lines = _lines()
    original = _dump(folder / f"{OLD}.jsonl", lines[:CUT])
    os.utime(original, ns=(1_700_000_000_000_000_000,) * 2)
    only_copy = _resumed_lines(lines[:CUT], NEW, PROMPT, [])[:-1]  # without the new prompt
    result = claude_code.parse(_dump(folder / f"{NEW}.jsonl", only_copy))
    assert result.threads == []
    assert result.warnings == []
    assert len(claude_code.parse(original).threads) == 1  # the older file is the original


def test_watch_imports_the_resumed_file_as_it_grows_without_the_copy(
    person: Person, watches: list[Watch], tmp_path: Path
) -> None:
    folder = person.home / CLAUDE_DIR
    lines = _lines()
    _dump(folder / f"{OLD}.jsonl", lines[:CUT])
    watches.append(watch := Watch(person))
    wait_for(lambda: len(local_counts(person)) == 1, what="the original session")
    staged = _dump(tmp_path / "staged" / f"{NEW}.jsonl",
                   _resumed_lines(lines[:CUT], NEW, PROMPT, lines[CUT:]))  # fmt: skip
    copy_lines(staged, folder / f"{NEW}.jsonl")  # line by line, as Claude Code writes it
    want = len(_expected_new_part())
    [first] = claude_code.parse(folder / f"{OLD}.jsonl").threads
    both = sorted([len(first.messages), want])
    wait_for(lambda: sorted(local_counts(person).values()) == both, timeout=15,
             what="the resumed session")  # fmt: skip
    assert not watch.lines("no Claude Code conversation"), watch.text()
    assert watch.stop() == 0
    _assert_one_conversation(person)
