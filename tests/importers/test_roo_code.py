"""Roo Code / Kilo Code / Cline task folders: the two real Roo tasks of ../shared/data (XML
tool calls, a condensation, resumes), and a Cline-style task with native tool blocks and a
subtask written here from the extensions' formats."""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import detect_format
from loomsync.importers.common import session_thread_id
from loomsync.importers.roo_code import default_paths, discover, parse, unit_of
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped

ROO = TRANSCRIPTS / "roo-code"
NATURAL = ROO / "natural-already-condensed" / "api_conversation_history.json"
SMALL = ROO / "tasks" / "eaece8cc-d874-4e46-9330-52d772f31492" / "api_conversation_history.json"


def test_the_condensed_task_imports_roles_tools_and_its_condensation() -> None:
    result = parse(NATURAL)
    [thread] = result.threads

    assert (result.warnings, result.skipped) == ([], Counter())
    roles = Counter(m.role for m in thread.messages)
    assert roles == {"assistant": 14, "tool": 12, "user": 6, "system": 1}
    summary = thread.messages[1]
    assert summary.role == "system"
    assert summary.content.startswith("**Context: The context to continue the conversation")
    [condensed] = thread.metadata.extra["compactions"]
    assert (condensed["prevContextTokens"], condensed["newContextTokens"]) == (124669, 57960)
    assert len(thread.metadata.extra["resumes"]) == 7
    assert thread.cwd == "c:/dev/roo-code"
    assert thread.metadata.title is not None
    assert thread.metadata.title.startswith("Bonjour. Ta mission")
    assert all(m.created_at is not None for m in thread.messages)
    assert "files_in_context" in thread.metadata.extra["task_metadata"]
    assert len(thread.metadata.extra["ui_messages"]) == 155
    # The extension's environment details are not the user's words; they are kept aside.
    first = thread.messages[0]
    assert "<environment_details>" not in first.content
    assert first.extra["environment_details"][0].startswith("<environment_details>")  # type: ignore[attr-defined]


def test_xml_tool_calls_are_paired_with_the_results_that_name_them() -> None:
    [thread] = parse(NATURAL).threads
    calls = {c.id: (c, i) for i, m in enumerate(thread.messages) for c in m.tool_calls or []}
    results = [(i, m) for i, m in enumerate(thread.messages) if m.role == "tool"]

    assert len(calls) == 13
    # One result answers a call that the condensation removed from the history.
    orphans = [m for _, m in results if m.tool_call_id is None]
    assert [m.tool_name for m in orphans] == ["update_todo_list"]
    for index, answer in results:
        if answer.tool_call_id is None:
            continue
        call, at = calls[answer.tool_call_id]
        assert at == index - 1
        assert answer.tool_name == call.tool_name
        assert answer.content.startswith(f"[{call.tool_name}")
    listing = calls["xml-5-0"][0]
    assert listing.arguments_json == {"path": "./", "recursive": "false"}


def test_usage_comes_from_the_request_before_each_answer() -> None:
    [thread] = parse(NATURAL).threads
    ui = json.loads((NATURAL.parent / "ui_messages.json").read_text())
    requests = [(e["ts"], json.loads(e["text"])) for e in ui if e.get("say") == "api_req_started"]
    answered = [m for m in thread.messages if getattr(m, "usage", None)]

    assert len(answered) == 13
    for answer in answered:
        assert answer.created_at is not None
        stamp = int(answer.created_at.timestamp() * 1000)
        _, counts = max((r for r in requests if r[0] <= stamp), key=lambda r: r[0])
        assert answer.usage["output_tokens"] == counts["tokensOut"]  # type: ignore[attr-defined]
        assert answer.usage["input_tokens"] == counts["tokensIn"] - counts["cacheReads"]  # type: ignore[attr-defined]
        assert answer.usage["model"] in ("anthropic/claude-sonnet-4", "google/gemini-2.5-pro")  # type: ignore[attr-defined]


def test_the_small_older_task_has_one_user_turn_and_its_resumes() -> None:
    [thread] = parse(SMALL).threads

    assert [m.role for m in thread.messages] == ["user"]
    assert str(thread.id) == "T-eaece8cc-d874-4e46-9330-52d772f31492"
    assert len(thread.metadata.extra["resumes"]) == 3
    assert "[TASK RESUMPTION]" in thread.messages[0].content
    assert thread.cwd == "f:/Develop/project/tools/Roo-Code"
    assert "extension" not in thread.metadata.extra["source"]  # not under an extension's folder


def test_only_the_api_history_is_detected_and_the_siblings_map_to_it() -> None:
    assert discover(TRANSCRIPTS) == [NATURAL, SMALL]
    for name in ("ui_messages.json", "task_metadata.json"):
        sibling = NATURAL.parent / name
        assert detect_format(sibling) is None
        assert unit_of(sibling) == NATURAL
    assert unit_of(NATURAL) == NATURAL
    assert unit_of(NATURAL.parent / "history_item.json") == NATURAL
    assert unit_of(ROO / "README.json") is None


def test_a_reimport_changes_nothing_and_a_growing_task_is_extended(tmp_path: Path) -> None:
    assert dumped(parse(NATURAL).threads) == dumped(parse(NATURAL).threads)
    folder = tmp_path / "tasks" / "17fed2f1-0000-4000-8000-000000000001"
    shutil.copytree(NATURAL.parent, folder)
    history = json.loads(NATURAL.read_text())
    earlier: list[Any] = []
    for end in range(1, len(history) + 1):
        (folder / NATURAL.name).write_text(json.dumps(history[:end]))
        [thread] = parse(folder / NATURAL.name).threads
        assert str(thread.id) == "T-17fed2f1-0000-4000-8000-000000000001"
        assert_extends(earlier, thread.messages)
        earlier = thread.messages


def _cline_task(tmp_path: Path) -> Path:
    folder = (
        tmp_path
        / ".config"
        / "Code"
        / "User"
        / "globalStorage"
        / "saoudrizwan.claude-dev"
        / "tasks"
        / "1750000000000"
    )
    folder.mkdir(parents=True)
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nlist files\n</task>"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "use ls"},
                {"type": "text", "text": "Listing."},
                {"type": "tool_use", "id": "toolu_1", "name": "list_files", "input": {"path": "."}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "a.py"}],
                }
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "One file."}]},
    ]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    item = {
        "id": "1750000000000",
        "task": "list files",
        "workspace": "/home/u/p",
        "parentTaskId": "1749999999999",
        "futureKey": 1,
    }
    (folder / "history_item.json").write_text(json.dumps(item))
    return folder / "api_conversation_history.json"


def test_a_cline_task_with_native_tool_blocks_and_a_parent_task(tmp_path: Path) -> None:
    [thread] = parse(_cline_task(tmp_path)).threads

    assert [m.role for m in thread.messages] == ["user", "assistant", "tool", "assistant"]
    call = (thread.messages[1].tool_calls or [])[0]
    answer = thread.messages[2]
    assert (call.id, call.tool_name, call.arguments_json) == (
        "toolu_1",
        "list_files",
        {"path": "."},
    )
    assert (answer.tool_call_id, answer.tool_name, answer.content) == (
        "toolu_1",
        "list_files",
        "a.py",
    )
    assert thread.messages[1].extra["blocks"] == [{"type": "thinking", "thinking": "use ls"}]  # type: ignore[attr-defined]
    assert thread.metadata.extra["source"]["extension"] == "cline"
    assert thread.metadata.extra["parent_thread_id"] == str(
        session_thread_id("roo-code", "1749999999999")
    )
    assert thread.metadata.extra["history_item"]["futureKey"] == 1
    assert (thread.cwd, thread.metadata.title) == ("/home/u/p", "list files")
    # Cline's legacy history carries no time per entry: none is invented.
    assert all(m.created_at is None for m in thread.messages)


def test_damaged_sibling_files_lose_only_what_they_held(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(NATURAL.parent, folder)
    ui = folder / "ui_messages.json"
    ui.write_bytes(ui.read_bytes()[:10000])

    result = parse(folder / NATURAL.name)
    [thread] = result.threads

    assert result.skipped == Counter({"invalid_json": 1})
    assert len(result.warnings) == 1
    assert len(thread.messages) == 33
    assert not any(getattr(m, "usage", None) for m in thread.messages)

    (folder / NATURAL.name).write_bytes(NATURAL.read_bytes()[:5000])
    result = parse(folder / NATURAL.name)
    assert result.threads == []
    assert result.skipped == Counter({"invalid_json": 1})


def test_unknown_fields_of_a_newer_extension_are_kept(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(NATURAL.parent, folder)
    history = json.loads(NATURAL.read_text())
    for entry in history:
        entry["newField"] = 7
    (folder / NATURAL.name).write_text(json.dumps(history))

    [thread] = parse(folder / NATURAL.name).threads

    assert len(thread.messages) == 33
    assert thread.messages[0].extra["newField"] == 7  # type: ignore[attr-defined]


@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_default_paths_cover_the_three_extensions_in_each_editor(
    platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr(sys, "platform", platform)
    paths = default_paths()

    base = (
        tmp_path / "Library" / "Application Support"
        if platform == "darwin"
        else tmp_path / ".config"
    )
    for editor in ("Code", "Cursor", "VSCodium"):
        for extension in (
            "saoudrizwan.claude-dev",
            "rooveterinaryinc.roo-cline",
            "kilocode.kilo-code",
        ):
            assert base / editor / "User" / "globalStorage" / extension / "tasks" in paths
    assert all(p.is_relative_to(tmp_path) for p in paths)
