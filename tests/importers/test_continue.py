"""Continue sessions: the real 2024 session of ../shared/data, and an agent-mode session
(tool calls, tool results, usage) written here from Continue's published message types."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import detect_format
from loomsync.importers.continue_dev import INDEX, default_paths, discover, parse, unit_of
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped

FOLDER = TRANSCRIPTS / "continue" / "continuedev__continue" / "sessions"
SESSION = FOLDER / "89004c9d-6d6f-4786-83e0-a9f61c80bf44.json"


def test_the_real_session_imports_with_its_index_time_and_prompt_logs() -> None:
    result = parse(SESSION)
    [thread] = result.threads

    assert (result.warnings, result.skipped) == ([], Counter())
    assert [m.role for m in thread.messages] == ["user", "assistant"] * 7
    assert str(thread.id) == "T-89004c9d-6d6f-4786-83e0-a9f61c80bf44"
    assert thread.created_at is not None
    assert thread.created_at.isoformat() == "2024-10-29T20:51:17.652000+00:00"
    assert thread.cwd == "/Users/dallin/Documents/code/continue/manual-testing-sandbox"
    assert thread.metadata.title == "(dallin) dallin@Dallins-MBP intellij %"
    assert thread.model == "gpt-4o"
    assert thread.messages[4].content == "how to get environment variables in kotlin?"
    [log] = thread.messages[1].extra["promptLogs"]  # type: ignore[attr-defined]
    assert log["modelTitle"] == "GPT-4o"
    assert "editorState" in thread.messages[0].extra  # type: ignore[attr-defined]
    # These versions record no time per message and no token counts: none is invented.
    assert all(m.created_at is None for m in thread.messages)
    assert not any(getattr(m, "usage", None) for m in thread.messages)


def test_the_index_is_not_a_session_and_belongs_to_none() -> None:
    assert discover(TRANSCRIPTS) == [SESSION]
    assert detect_format(FOLDER / INDEX) is None
    assert unit_of(FOLDER / INDEX) is None
    assert unit_of(SESSION) == SESSION


def _item(role: str, content: Any, **more: Any) -> dict[str, Any]:
    return {"message": {"role": role, "content": content, **more}, "contextItems": []}


def _agent_session(tmp_path: Path) -> Path:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"filepath": "a.py"}'},
    }
    silent = {"id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}
    history = [
        _item("user", "read a.py"),
        {
            **_item(
                "assistant",
                "",
                toolCalls=[call],
                usage={
                    "promptTokens": 1200,
                    "completionTokens": 80,
                    "promptTokensDetails": {"cachedTokens": 1000},
                    "completionTokensDetails": {"reasoningTokens": 20},
                },
            ),
            "promptLogs": [
                {"modelTitle": "Sonnet", "completionOptions": {"model": "claude-sonnet-4-5"}}
            ],
        },
        _item("tool", "print('a')", toolCallId="call_1"),
        {
            **_item("assistant", "", toolCalls=[silent]),
            "toolCallStates": [
                {
                    "toolCallId": "call_2",
                    "status": "done",
                    "output": [{"content": "a.py\nb.py", "name": "ls"}],
                }
            ],
        },
        _item("assistant", "a.py prints a"),
    ]
    path = tmp_path / "sessions" / "0b0f2c57-3f5e-4f0e-9d1a-2c8f4f0c7a11.json"
    path.parent.mkdir()
    path.write_text(
        json.dumps(
            {
                "history": history,
                "title": "agent",
                "workspaceDirectory": "file:///home/u/p",
                "sessionId": path.stem,
                "mode": "agent",
            }
        )
    )
    return path


def test_an_agent_mode_session_pairs_tool_calls_and_counts_usage(tmp_path: Path) -> None:
    [thread] = parse(_agent_session(tmp_path)).threads

    assert [m.role for m in thread.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    first, result, second, listing = thread.messages[1:5]
    assert second.tool_calls is not None
    assert second.tool_calls[0].id == "call_2"
    assert first.tool_calls is not None
    assert (first.tool_calls[0].tool_name, first.tool_calls[0].arguments_json) == (
        "read_file",
        {"filepath": "a.py"},
    )
    assert (result.tool_call_id, result.tool_name, result.content) == (
        "call_1",
        "read_file",
        "print('a')",
    )
    assert (listing.tool_call_id, listing.tool_name, listing.content) == (
        "call_2",
        "ls",
        "a.py\nb.py",
    )
    assert first.usage == {  # type: ignore[attr-defined]
        "input_tokens": 200,
        "output_tokens": 80,
        "cache_read_tokens": 1000,
        "reasoning_tokens": 20,
        "model": "claude-sonnet-4-5",
    }
    assert thread.cwd == "/home/u/p"
    assert thread.metadata.extra["mode"] == "agent"


def test_a_session_rewritten_turn_by_turn_is_extended_without_duplicates(tmp_path: Path) -> None:
    document = json.loads(SESSION.read_text())
    copy = tmp_path / SESSION.name
    shutil.copy(FOLDER / INDEX, tmp_path / INDEX)
    earlier: list[Any] = []
    for end in range(1, len(document["history"]) + 1):
        copy.write_text(json.dumps({**document, "history": document["history"][:end]}, indent=2))
        [thread] = parse(copy).threads
        assert str(thread.id) == "T-89004c9d-6d6f-4786-83e0-a9f61c80bf44"
        assert len(thread.messages) == end
        assert_extends(earlier, thread.messages)
        earlier = thread.messages
    assert dumped(parse(copy).threads) == dumped(parse(SESSION).threads)


def test_unknown_fields_of_a_newer_continue_are_kept(tmp_path: Path) -> None:
    document = json.loads(SESSION.read_text())
    document["newSessionField"] = [1]
    for item in document["history"]:
        item["newItemField"] = "x"
        item["message"]["newMessageField"] = True
    copy = tmp_path / SESSION.name
    copy.write_text(json.dumps(document))

    [thread] = parse(copy).threads

    assert len(thread.messages) == 14
    assert thread.metadata.extra["newSessionField"] == [1]
    assert all(m.extra["newItemField"] == "x" for m in thread.messages)  # type: ignore[attr-defined]
    assert all(m.extra["newMessageField"] is True for m in thread.messages)  # type: ignore[attr-defined]


def test_a_truncated_session_and_a_damaged_item_lose_only_themselves(tmp_path: Path) -> None:
    cut = tmp_path / "cut" / SESSION.name
    cut.parent.mkdir()
    cut.write_bytes(SESSION.read_bytes()[:5000])
    result = parse(cut)
    assert result.threads == []
    assert result.skipped == Counter({"invalid_json": 1})
    assert len(result.warnings) == 1

    document = json.loads(SESSION.read_text())
    document["history"].insert(3, "not an item")
    damaged = tmp_path / SESSION.name
    damaged.write_text(json.dumps(document))
    result = parse(damaged)
    assert result.skipped == Counter({"bad_record": 1})
    assert len(result.threads[0].messages) == 14


def test_default_paths_honour_continue_global_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CONTINUE_GLOBAL_DIR", raising=False)
    assert default_paths() == [tmp_path / ".continue" / "sessions"]
    monkeypatch.setenv("CONTINUE_GLOBAL_DIR", str(tmp_path / "c"))
    assert default_paths() == [tmp_path / "c" / "sessions"]
