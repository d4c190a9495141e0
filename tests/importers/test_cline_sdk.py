"""Cline CLI / SDK sessions: the real forked session of ../shared/data, and copies of it that
grow, lose their manifest, carry unknown fields or are damaged."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from loomsync.importers import detect_format
from loomsync.importers.cline_sdk import default_paths, detect, discover, parse, unit_of
from loomsync.importers.common import session_thread_id
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped

FOLDER = TRANSCRIPTS / "cline-sdk" / "1784094124598_rruoq"
MANIFEST = FOLDER / "1784094124598_rruoq.json"
MESSAGES = FOLDER / "1784094124598_rruoq.messages.json"


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / FOLDER.name
    shutil.copytree(FOLDER, folder)
    return folder


def test_the_real_session_imports_roles_tools_usage_and_its_fork() -> None:
    result = parse(MANIFEST)
    [thread] = result.threads

    assert (result.warnings, result.skipped) == ([], Counter())
    assert Counter(m.role for m in thread.messages) == {"user": 5, "assistant": 16, "tool": 11}
    assert thread.id == session_thread_id("cline-sdk", "1784094124598_rruoq")
    assert thread.metadata.extra["forked_from"] == str(
        session_thread_id("cline-sdk", "1784094053271_p8pzo")
    )
    assert thread.cwd == "/Users/example/dev/cline"
    assert thread.metadata.title is not None
    assert thread.metadata.title.startswith("can you update @apps/examples/desktop-app/")
    # The manifest names the model configured at start; the messages the ones that answered.
    assert thread.metadata.extra["manifest"]["model"] == "mistralai/mixtral-8x22b-instruct"
    assert (thread.model, thread.provider) == ("mistralai/voxtral-small-24b-2507", "cline")
    assert all(m.created_at is not None for m in thread.messages)
    assert "You are Cline" in thread.metadata.extra["messages_file"]["system_prompt"]


def test_usage_per_answer_takes_cache_reads_out_of_the_input_count() -> None:
    [thread] = parse(MANIFEST).threads
    answers = [m for m in thread.messages if m.role == "assistant"]

    assert all(getattr(m, "usage", None) for m in answers)
    assert answers[0].usage == {  # type: ignore[attr-defined]
        "input_tokens": 34334,
        "output_tokens": 741,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "model": "anthropic/claude-opus-4.8-fast",
        "provider": "cline",
    }
    assert answers[1].usage["input_tokens"] == 35912 - 34332  # type: ignore[attr-defined]
    assert answers[1].usage["cache_read_tokens"] == 34332  # type: ignore[attr-defined]
    assert answers[1].extra["metrics"]["cost"] == 0.06539085  # type: ignore[attr-defined]


def test_every_tool_call_is_answered_right_after_its_message() -> None:
    [thread] = parse(MANIFEST).threads
    for index, item in enumerate(thread.messages):
        for call in item.tool_calls or []:
            [answer] = [m for m in thread.messages if m.tool_call_id == call.id]
            assert thread.messages.index(answer) == index + 1
            assert answer.tool_name == call.tool_name
            assert answer.content
    attached = thread.messages[0].extra["files"]  # type: ignore[attr-defined]
    assert attached[0]["path"].endswith("agent-sidebar.tsx")


def test_detect_discover_and_unit_of_take_the_manifest() -> None:
    assert discover(TRANSCRIPTS) == [MANIFEST]
    assert detect_format(MANIFEST) == "cline-sdk"
    assert detect_format(MESSAGES) is None
    assert unit_of(MESSAGES) == MANIFEST
    assert unit_of(MANIFEST) == MANIFEST
    assert (
        unit_of(TRANSCRIPTS / "continue" / "continuedev__continue" / "sessions" / "sessions.json")
        is None
    )


def test_messages_without_a_manifest_still_import(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / MANIFEST.name).unlink()
    alone = folder / MESSAGES.name

    [thread] = parse(alone).threads

    assert detect(alone)
    assert unit_of(alone) == alone
    assert thread.id == session_thread_id("cline-sdk", "1784094124598_rruoq")
    assert len(thread.messages) == 32


def test_a_session_rewritten_message_by_message_is_extended(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    log = json.loads(MESSAGES.read_text())
    earlier: list[object] = []
    for end in range(1, len(log["messages"]) + 1):
        (folder / MESSAGES.name).write_text(json.dumps({**log, "messages": log["messages"][:end]}))
        [thread] = parse(folder / MANIFEST.name).threads
        assert_extends(earlier, thread.messages)  # type: ignore[arg-type]
        earlier = thread.messages  # type: ignore[assignment]
    assert dumped(parse(folder / MANIFEST.name).threads) == dumped(parse(MANIFEST).threads)


def test_unknown_fields_of_a_newer_cline_are_kept(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    log = json.loads(MESSAGES.read_text())
    for entry in log["messages"]:
        entry["newField"] = {"n": 1}
    log["newTop"] = "x"
    (folder / MESSAGES.name).write_text(json.dumps(log))

    [thread] = parse(folder / MANIFEST.name).threads

    assert len(thread.messages) == 32
    assert thread.metadata.extra["messages_file"]["newTop"] == "x"
    assert thread.messages[1].extra["newField"] == {"n": 1}  # type: ignore[attr-defined]


def test_damaged_files_are_reported_not_raised(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    messages = folder / MESSAGES.name
    messages.write_bytes(MESSAGES.read_bytes()[:3000])
    result = parse(folder / MANIFEST.name)
    assert result.threads == []
    assert result.skipped == Counter({"invalid_json": 1})
    assert [MESSAGES.name in w for w in result.warnings] == [True]

    log = json.loads(MESSAGES.read_text())
    log["messages"].insert(2, ["not", "a", "message"])
    messages.write_text(json.dumps(log))
    result = parse(folder / MANIFEST.name)
    assert result.skipped == Counter({"bad_record": 1})
    assert len(result.threads[0].messages) == 32


def test_default_paths_honour_cline_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLINE_DIR", raising=False)
    monkeypatch.delenv("CLINE_DATA_DIR", raising=False)
    assert default_paths() == [tmp_path / ".cline" / "data" / "sessions"]
    monkeypatch.setenv("CLINE_DIR", str(tmp_path / "c"))
    assert default_paths() == [tmp_path / "c" / "data" / "sessions"]
    monkeypatch.setenv("CLINE_DATA_DIR", str(tmp_path / "d"))
    assert default_paths() == [tmp_path / "d" / "sessions"]
