"""Sourcegraph Amp threads. No real Amp thread with a usable licence exists in the corpus, so
these tests build thread files in the shape public readers of the format document
(kenn-io/agentsview's Amp parser and tests; see loomsync/importers/amp.py): a thread with a
handoff parent, tool calls answered in Amp's ``run`` shape and in the canonical one, usage of
an Anthropic and of a ``gpt-*`` model, and the file rewritten in place as the thread grows."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS, detect_format, import_path
from tests.importers.corpus import TRANSCRIPTS, assert_extends

THREAD_ID = "T-019b9d03-62e3-772f-9780-3e637f90eaec"
PARENT_ID = "T-019b9c00-0000-7000-8000-000000000001"

THREAD: dict[str, Any] = {
    "v": 14,
    "id": THREAD_ID,
    "created": 1767865803494,
    "title": "Fix the flaky upload test",
    "agentMode": "smart",
    "env": {
        "initial": {
            "trees": [
                {
                    "displayName": "uploader",
                    "uri": "file:///home/dev/src/uploader",
                    "repository": {
                        "type": "git",
                        "url": "https://github.com/example/uploader",
                        "ref": "refs/heads/fix-flaky",
                        "sha": "4f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f",
                    },
                }
            ],
            "platform": {"os": "linux", "client": "CLI", "clientVersion": "0.0.1767"},
        }
    },
    "relationships": [{"type": "handoff", "role": "child", "threadID": PARENT_ID}],
    "messages": [
        {
            "role": "user",
            "messageId": 0,
            "content": [{"type": "text", "text": "The upload test fails one run in ten."}],
            "meta": {"sentAt": 1767865810000},
        },
        {
            "role": "assistant",
            "messageId": 1,
            "content": [
                {"type": "thinking", "thinking": "Look at the retry loop first."},
                {"type": "text", "text": "Let me read the test."},
                {
                    "type": "tool_use",
                    "complete": True,
                    "id": "toolu_01",
                    "name": "Read",
                    "input": {"path": "tests/test_upload.py"},
                },
                {
                    "type": "tool_use",
                    "complete": True,
                    "id": "toolu_02",
                    "name": "Bash",
                    "input": {"cmd": "pytest -q tests/test_upload.py"},
                },
            ],
            "state": {"type": "complete", "stopReason": "tool_use"},
            "usage": {
                "model": "claude-sonnet-4-5",
                "inputTokens": 12,
                "outputTokens": 230,
                "cacheCreationInputTokens": 5000,
                "cacheReadInputTokens": 18000,
                "totalInputTokens": 23012,
                "timestamp": "2026-01-08T09:50:14.000Z",
            },
        },
        {
            "role": "user",
            "messageId": 2,
            "content": [
                {
                    "type": "tool_result",
                    "toolUseID": "toolu_01",
                    "run": {"status": "done", "result": {"content": "def test_upload(): ..."}},
                },
                {
                    "type": "tool_result",
                    "toolUseID": "toolu_02",
                    "run": {"status": "error", "error": {"message": "exit status 1"}},
                },
            ],
        },
        {
            "role": "assistant",
            "messageId": 3,
            "content": [{"type": "text", "text": "The retry sleeps on a shared clock; fixed."}],
            "state": {"type": "complete", "stopReason": "end_turn"},
            "usage": {
                "model": "gpt-5",
                "inputTokens": 0,
                "outputTokens": 40,
                "cacheCreationInputTokens": 900,
                "cacheReadInputTokens": 23000,
                "timestamp": "2026-01-08T09:51:02.000Z",
            },
        },
    ],
    "meta": {"traces": [{"name": "inference", "endTime": "2026-01-08T09:51:02.000Z"}]},
}


def _write(tmp_path: Path, document: Any, name: str = f"{THREAD_ID}.json") -> Path:
    path = tmp_path / "threads" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document, indent=2))
    return path


def test_a_thread_maps_roles_tool_results_usage_and_times(tmp_path: Path) -> None:
    path = _write(tmp_path, THREAD)

    result = FORMATS["amp"].parse(path)
    [thread] = result.threads

    assert (result.warnings, result.skipped) == ([], Counter())
    assert thread.id == THREAD_ID
    assert [(m.role, m.content) for m in thread.messages] == [
        ("user", "The upload test fails one run in ten."),
        ("assistant", "Let me read the test."),
        ("tool", "def test_upload(): ..."),
        ("tool", "exit status 1"),
        ("assistant", "The retry sleeps on a shared clock; fixed."),
    ]
    calls = thread.messages[1].tool_calls or []
    assert [(c.id, c.tool_name, c.arguments_json) for c in calls] == [
        ("toolu_01", "Read", {"path": "tests/test_upload.py"}),
        ("toolu_02", "Bash", {"cmd": "pytest -q tests/test_upload.py"}),
    ]
    assert [(m.tool_call_id, m.tool_name) for m in thread.messages[2:4]] == [
        ("toolu_01", "Read"),
        ("toolu_02", "Bash"),
    ]
    assert thread.messages[3].extra["run"]["status"] == "error"
    assert thread.messages[1].extra["thinking"] == ["Look at the retry loop first."]
    assert thread.messages[1].usage == {
        "input_tokens": 12,
        "output_tokens": 230,
        "cache_read_tokens": 18000,
        "cache_write_tokens": 5000,
        "model": "claude-sonnet-4-5",
        "provider": "amp",
    }
    # gpt-* threads file the uncached prompt as cache creation: it is input
    assert thread.messages[4].usage == {
        "input_tokens": 900,
        "output_tokens": 40,
        "cache_read_tokens": 23000,
        "model": "gpt-5",
        "provider": "amp",
    }
    times = [m.model_dump(mode="json")["created_at"] for m in thread.messages]
    assert times[0] == "2026-01-08T09:50:10Z"
    assert times[1] == "2026-01-08T09:50:14Z"
    assert thread.model_dump(mode="json")["created_at"] == "2026-01-08T09:50:03.494Z"


def test_workspace_git_title_and_handoff_lineage(tmp_path: Path) -> None:
    [thread] = FORMATS["amp"].parse(_write(tmp_path, THREAD)).threads

    assert thread.cwd == thread.workspace_root == "/home/dev/src/uploader"
    assert thread.git_remote_url == "https://github.com/example/uploader"
    assert thread.git_branch == "fix-flaky"
    assert thread.git_commits == ["4f2a9c1d0e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f"]
    assert thread.metadata.title == "Fix the flaky upload test"
    assert thread.metadata.extra["resumed_from"] == PARENT_ID
    assert thread.metadata.extra["thread"]["relationships"] == THREAD["relationships"]
    assert (thread.provider, thread.model) == ("amp", "gpt-5")


def test_rewritten_in_place_each_version_extends_the_last(tmp_path: Path) -> None:
    seen: list[Any] = []
    path = tmp_path
    for count in range(1, len(THREAD["messages"]) + 1):
        grown = {**THREAD, "messages": THREAD["messages"][:count]}
        path = _write(tmp_path, grown)
        [thread] = FORMATS["amp"].parse(path).threads
        assert thread.id == THREAD_ID
        assert_extends(seen, thread.messages)
        seen = thread.messages
    assert len(seen) == 5
    assert FORMATS["amp"].parse(path).threads == FORMATS["amp"].parse(path).threads


def test_unknown_fields_import_and_are_kept(tmp_path: Path) -> None:
    newer = copy.deepcopy(THREAD)
    newer["futureThreadField"] = {"x": 1}
    newer["messages"][0]["futureMessageField"] = [1]
    newer["messages"][1]["content"].append({"type": "future_block", "data": 2})

    [thread] = FORMATS["amp"].parse(_write(tmp_path, newer)).threads
    [clean] = FORMATS["amp"].parse(_write(tmp_path, THREAD, "T-clean.json")).threads

    assert [m.content for m in thread.messages] == [m.content for m in clean.messages]
    assert thread.metadata.extra["thread"]["futureThreadField"] == {"x": 1}
    assert thread.messages[0].extra["futureMessageField"] == [1]


def test_damage_loses_only_what_is_damaged(tmp_path: Path) -> None:
    broken = copy.deepcopy(THREAD)
    broken["messages"].insert(2, "not a message")
    result = FORMATS["amp"].parse(_write(tmp_path, broken))

    assert result.skipped == Counter({"bad_record": 1})
    assert len(result.threads[0].messages) == 5
    cut = _write(tmp_path, THREAD, "T-cut.json")
    cut.write_bytes(cut.read_bytes()[:700])
    truncated = FORMATS["amp"].parse(cut)
    assert (truncated.threads, truncated.skipped) == ([], Counter({"invalid_json": 1}))
    assert len(truncated.warnings) == 1


def test_detection_and_discovery_take_only_amp_threads(tmp_path: Path) -> None:
    path = _write(tmp_path, THREAD)
    (tmp_path / "threads" / "notes.json").write_text(json.dumps({"id": "T-1", "messages": []}))

    assert detect_format(path) == "amp"
    assert FORMATS["amp"].discover(tmp_path) == [path]
    assert [str(t.id) for t in import_path(tmp_path).threads] == [THREAD_ID]
    for other in (TRANSCRIPTS / "copilot-chat-vscode").rglob("*.json"):
        assert FORMATS["amp"].detect(other) is False


def test_default_paths_honour_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr("sys.platform", "linux")

    paths = FORMATS["amp"].default_paths()
    assert paths[0] == tmp_path / ".local" / "share" / "amp" / "threads"
    legacy = tmp_path / ".config" / "Code" / "User" / "globalStorage" / "sourcegraph.amp"
    assert legacy / "threads3" in paths
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert FORMATS["amp"].default_paths()[0] == tmp_path / "data" / "amp" / "threads"
