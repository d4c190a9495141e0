"""sst/opencode's JSON storage tree, read in place from ../shared/data and from copies that
grow, carry unknown fields or are damaged the way opencode's files can be."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, detect_format, import_path
from loomsync.importers.common import session_thread_id
from loomsync.importers.opencode import default_paths, discover, parse, unit_of
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped, sibling_files

STORAGE = TRANSCRIPTS / "opencode-storage" / "jwp23__dotfiles" / "storage"
PROJECT = "98f0326ae5594d769602840258229a7888e46ff5"
FIRST = STORAGE / "session" / PROJECT / "ses_539950424ffev4SAECXTZKSubM.json"
SECOND = STORAGE / "session" / PROJECT / "ses_53993b312ffeefelTsBlbUVXV8.json"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "storage"
    shutil.copytree(STORAGE, root)
    return root


def test_the_two_real_sessions_import_with_roles_tools_usage_and_times() -> None:
    [first] = parse(FIRST).threads
    [second] = parse(SECOND).threads

    assert Counter(m.role for m in first.messages) == {"user": 2, "assistant": 3, "tool": 2}
    assert Counter(m.role for m in second.messages) == {"user": 3, "assistant": 5, "tool": 3}
    assert first.id == session_thread_id("opencode", "ses_539950424ffev4SAECXTZKSubM")
    assert first.cwd == "/Users/jpresley/workspace/mordant-software/claude-instructions"
    assert first.workspace_root == first.cwd
    assert first.metadata.title == "Adding /story command to README"
    assert (first.model, first.provider) == ("claude-sonnet-4-5-20250929", "anthropic")
    assert first.metadata.extra["project"]["vcs"] == "git"
    assert first.metadata.extra["session_diff"] == []
    assert [m.created_at is not None for m in first.messages] == [True] * 7
    times = [m.created_at for m in second.messages if m.role != "tool"]
    assert times == sorted(times)  # type: ignore[type-var]
    # The first answer failed (Opus not enabled): kept, with its error, and no usage counted.
    failed = first.messages[1]
    assert failed.role == "assistant"
    assert failed.content == ""
    assert failed.extra["error"]["name"] == "APIError"  # type: ignore[attr-defined]
    assert failed.usage == {  # type: ignore[attr-defined]
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
        "model": "claude-opus-4-5",
        "provider": "anthropic",
    }
    reading = first.messages[3]
    assert reading.usage["cache_write_tokens"] == 10075  # type: ignore[attr-defined]
    assert reading.usage["output_tokens"] == 164  # type: ignore[attr-defined]
    assert [c.tool_name for c in reading.tool_calls or []] == ["read", "read"]


@pytest.mark.parametrize("session", [FIRST, SECOND], ids=["first", "second"])
def test_every_tool_call_is_followed_by_its_result(session: Path) -> None:
    [thread] = parse(session).threads
    for index, item in enumerate(thread.messages):
        for call in item.tool_calls or []:
            answers = [m for m in thread.messages[index + 1 :] if m.tool_call_id == call.id]
            assert len(answers) == 1
            assert answers[0].role == "tool"
            assert answers[0].tool_name == call.tool_name
            assert call.arguments_json["filePath"].startswith("/Users/jpresley/")


def test_a_tool_result_keeps_its_state_and_metadata() -> None:
    [thread] = parse(SECOND).threads
    edit = next(m for m in thread.messages if m.role == "tool" and m.tool_name == "edit")

    assert edit.tool_call_id == "toolu_011jMe54MHJ5Pfi8u44UsW1C"
    assert edit.extra["status"] == "completed"  # type: ignore[attr-defined]
    assert edit.extra["metadata"]["filediff"]["additions"] == 15  # type: ignore[attr-defined]
    assert edit.created_at is not None


def test_discover_and_detect_take_the_session_files_only() -> None:
    assert discover(TRANSCRIPTS) == [SECOND, FIRST]
    assert detect_format(FIRST) == "opencode"
    for sibling in sibling_files("opencode"):
        assert detect_format(sibling) is None, sibling


def test_unit_of_maps_every_file_of_a_session_to_its_session_file() -> None:
    units = Counter(unit_of(p) for p in STORAGE.rglob("*") if p.is_file())

    assert units == {FIRST: 1 + 5 + 10 + 1, SECOND: 1 + 8 + 22 + 1, None: 2}
    assert unit_of(STORAGE / "project" / f"{PROJECT}.json") is None
    assert unit_of(STORAGE / "migration") is None


def test_a_reimport_changes_nothing() -> None:
    assert dumped(import_path(STORAGE).threads) == dumped(import_path(STORAGE).threads)


def test_a_session_growing_file_by_file_is_extended_without_duplicates(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    session = root / "session" / PROJECT / SECOND.name
    messages = sorted((root / "message" / SECOND.stem).glob("*.json"))
    held = tmp_path / "held"
    held.mkdir()
    for file in messages[3:]:  # opencode has not written these yet
        file.rename(held / file.name)
    earlier = parse(session).threads[0]
    for file in sorted(held.iterdir()):  # one message at a time, as opencode writes them
        file.rename(root / "message" / SECOND.stem / file.name)
        later = parse(session).threads[0]
        assert later.id == earlier.id
        assert_extends(earlier.messages, later.messages)
        earlier = later

    assert dumped([earlier]) == dumped(parse(SECOND).threads)


def test_a_part_written_after_its_message_grows_that_message(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    message_id = "msg_ac66cc747002NIrz9VJhyVvXnk"
    tool_part = root / "part" / message_id / "prt_ac66cd268001Omd9aUJY5hCNrG.json"
    saved = tool_part.read_bytes()
    tool_part.unlink()
    session = root / "session" / PROJECT / SECOND.name
    before = parse(session).threads[0]
    tool_part.write_bytes(saved)
    after = parse(session).threads[0]

    assert len(after.messages) == len(before.messages) + 1
    assert unit_of(tool_part) == session
    assert_extends(before.messages[:5], after.messages)


def test_a_sub_agent_session_names_its_parent(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    child = json.loads(FIRST.read_text())
    child.update(id="ses_child0000000000000000000", parentID=SECOND.stem, title="task")
    (root / "session" / PROJECT / "ses_child0000000000000000000.json").write_text(json.dumps(child))
    (root / "message" / "ses_child0000000000000000000").mkdir()
    user = json.loads(
        (STORAGE / "message" / FIRST.stem / "msg_ac66afbde001D57jeCF60WuGhS.json").read_text()
    )
    user["sessionID"] = child["id"]
    (root / "message" / child["id"] / "msg_ac66afbde001D57jeCF60WuGhS.json").write_text(
        json.dumps(user)
    )

    [thread] = parse(root / "session" / PROJECT / "ses_child0000000000000000000.json").threads

    assert thread.metadata.extra["parent_thread_id"] == str(parse(SECOND).threads[0].id)


def test_files_of_a_newer_opencode_with_unknown_fields_still_import(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    for file in root.rglob("*.json"):
        value = json.loads(file.read_text())
        if isinstance(value, dict):
            value["futureField"] = {"v": 2}
            file.write_text(json.dumps(value))
    session = root / "session" / PROJECT / FIRST.name

    result = parse(session)
    [thread] = result.threads
    [clean] = parse(FIRST).threads

    assert (result.warnings, result.skipped) == ([], Counter())
    assert [(m.role, m.content) for m in thread.messages] == [
        (m.role, m.content) for m in clean.messages
    ]
    assert thread.messages[0].extra["futureField"] == {"v": 2}  # type: ignore[attr-defined]
    assert thread.metadata.extra["session"]["futureField"] == {"v": 2}


def test_a_truncated_part_loses_only_that_part(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    part = root / "part" / "msg_ac66cc747002NIrz9VJhyVvXnk" / "prt_ac66cd268001Omd9aUJY5hCNrG.json"
    part.write_bytes(part.read_bytes()[:200])

    result = parse(root / "session" / PROJECT / SECOND.name)
    [thread] = result.threads
    [clean] = parse(SECOND).threads

    assert result.skipped == Counter({"invalid_json": 1})
    assert len(result.warnings) == 1
    assert part.name in result.warnings[0]
    assert len(thread.messages) == len(clean.messages) - 1  # the edit call and its result
    assert [m.content for m in thread.messages if m.role == "user"] == [
        m.content for m in clean.messages if m.role == "user"
    ]


def test_a_truncated_session_file_is_reported_not_raised(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    session = root / "session" / PROJECT / FIRST.name
    session.write_bytes(session.read_bytes()[:50])

    result = parse(session)

    assert result.threads == []
    assert result.skipped == Counter({"invalid_json": 1})


def test_default_paths_follow_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    assert default_paths() == [tmp_path / ".local" / "share" / "opencode" / "storage"]
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_paths() == [tmp_path / "data" / "opencode" / "storage"]
    assert FORMATS["opencode"].live == "rewrite"
