"""Qwen Code, Factory Droid and Grok Build: what the importers make of the corpus files
(Qwen's is a real CLI run against a mock model; Droid's and Grok's are labelled FIXTUREs),
that Qwen's file is not Claude Code's, and where each agent is looked for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, detect_format
from tests.importers.corpus import TRANSCRIPTS

QWEN = TRANSCRIPTS / "qwen-code" / "69f0814a-8bfc-4c8e-93d3-05757f17b96f.jsonl"
DROID = TRANSCRIPTS / "droid" / "FIXTURE-session_store_small.jsonl"
GROK = next((TRANSCRIPTS / "grok-build").glob("*/*/chat_history.jsonl"))


def test_qwen_file_is_qwen_code_not_claude_code() -> None:
    assert detect_format(QWEN) == "qwen-code"
    assert FORMATS["claude-code"].detect(QWEN) is False
    assert FORMATS["qwen-code"].discover(TRANSCRIPTS / "claude-code") == []


def test_qwen_turns_tool_pairing_and_usage() -> None:
    [thread] = FORMATS["qwen-code"].parse(QWEN).threads

    assert thread.id == "T-69f0814a-8bfc-4c8e-93d3-05757f17b96f"
    assert [(m.role, m.content) for m in thread.messages] == [
        ("user", "List the files here."),
        ("assistant", ""),
        ("tool", "Path must be absolute: ."),
        ("assistant", "Done."),
    ]
    call = thread.messages[1].tool_calls[0] if thread.messages[1].tool_calls else None
    assert call is not None
    assert (call.id, call.tool_name, call.arguments_json) == (
        "call_1",
        "list_directory",
        {"path": "."},
    )
    assert (thread.messages[2].tool_call_id, thread.messages[2].tool_name) == (
        "call_1",
        "list_directory",
    )
    # promptTokenCount 600 includes 50 cached tokens: 550 at the full input price
    assert thread.messages[3].usage == {
        "input_tokens": 550,
        "output_tokens": 5,
        "cache_read_tokens": 50,
        "reasoning_tokens": 0,
        "model": "coder-model",
        "provider": "qwen",
    }
    assert thread.messages[1].usage["input_tokens"] == 500
    dumped = thread.model_dump(mode="json")
    assert dumped["conversation"]["messages"][0]["created_at"] == "2026-06-15T14:40:22.832Z"
    assert (thread.cwd, thread.model) == ("/tmp/qwentest", "coder-model")
    assert thread.metadata.extra["source"]["version"] == "0.18.1"
    system = thread.metadata.extra["system"]
    assert [r["subtype"] for r in system] == ["attribution_snapshot"] + ["ui_telemetry"] * 3
    assert thread.messages[2].extra["toolCallResult"]["errorType"] == "invalid_tool_params"


def test_qwen_thoughts_are_kept_out_of_the_content(tmp_path: Path) -> None:
    line = json.loads(QWEN.read_text("utf-8").splitlines()[-1])
    line["message"]["parts"] = [{"text": "thinking…", "thought": True}, {"text": "Done."}]
    line["usageMetadata"]["thoughtsTokenCount"] = 7
    target = tmp_path / QWEN.name
    target.write_text(json.dumps(line) + "\n")

    [thread] = FORMATS["qwen-code"].parse(target).threads

    assert thread.messages[0].content == "Done."
    assert thread.messages[0].extra["thoughts"] == ["thinking…"]
    assert thread.messages[0].usage["output_tokens"] == 12  # candidates 5 + thoughts 7
    assert thread.messages[0].usage["reasoning_tokens"] == 7


def test_qwen_git_branch_is_taken_from_its_lines(tmp_path: Path) -> None:
    """Qwen Code writes ``gitBranch`` on each line inside a repository (the corpus file ran
    outside one): the first line's branch is the initial one, the last line's the current."""
    lines = [json.loads(text) for text in QWEN.read_text("utf-8").splitlines() if text.strip()]
    for index, line in enumerate(lines):
        line["gitBranch"] = "main" if index == 0 else "fix/retries"
    target = tmp_path / QWEN.name
    target.write_text("".join(json.dumps(line) + "\n" for line in lines))

    [thread] = FORMATS["qwen-code"].parse(target).threads

    assert (thread.git_initial_branch, thread.git_branch) == ("main", "fix/retries")


def test_droid_fixture_pairs_the_tool_result_and_keeps_the_session_start() -> None:
    [thread] = FORMATS["droid"].parse(DROID).threads

    assert [(m.role, m.id) for m in thread.messages] == [
        ("user", "m1"),
        ("assistant", "m2"),
        ("tool", "m3:0"),
    ]
    call = thread.messages[1].tool_calls[0] if thread.messages[1].tool_calls else None
    assert call is not None
    assert (call.id, call.tool_name, call.arguments_json) == (
        "tu1",
        "Execute",
        {"command": "ls /nope"},
    )
    assert (thread.messages[2].tool_call_id, thread.messages[2].tool_name) == ("tu1", "Execute")
    assert thread.messages[2].content.startswith("Error: Command failed (exit code: 1)")
    assert thread.metadata.title == "Stage0 Droid Small"
    assert thread.cwd == "/tmp"
    assert thread.metadata.extra["session_start"]["owner"] == "user"
    assert thread.model_dump(mode="json")["created_at"] == "2025-12-26T23:50:00Z"


def test_droid_does_not_take_pi_v3_message_lines(tmp_path: Path) -> None:
    # Pi v3 writes {type: "message", id, parentId, message} lines too, after its own header
    pi = tmp_path / "2026-01-01T00-00-00_0b9e3f9c.jsonl"
    lines = [
        {"type": "session", "version": 3, "id": "0b9e3f9c", "timestamp": "2026-01-01T00:00:00Z"},
        {"type": "message", "id": "a1", "parentId": None, "message": {"role": "user"}},
    ]
    pi.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert FORMATS["droid"].detect(pi) is False
    assert FORMATS["droid"].detect(DROID) is True


def test_droid_settings_sidecar_names_the_model(tmp_path: Path) -> None:
    session = tmp_path / "-tmp" / "0b9e3f9c-2d7c-4a55-9b61-3c1f1f6f7e10.jsonl"
    session.parent.mkdir()
    session.write_bytes(DROID.read_bytes())
    settings = {"model": "claude-sonnet-4-5", "tokenUsage": {"inputTokens": 10}}
    session.with_name(f"{session.stem}.settings.json").write_text(json.dumps(settings))
    importer = FORMATS["droid"]

    [thread] = importer.parse(session).threads

    assert thread.model == "claude-sonnet-4-5"
    assert thread.metadata.extra["settings"] == settings
    assert importer.unit_of is not None
    assert importer.unit_of(session.with_name(f"{session.stem}.settings.json")) == session


def test_grok_fixture_maps_every_item_kind_and_its_summary() -> None:
    [thread] = FORMATS["grok-build"].parse(GROK).threads

    assert thread.id == "T-019f6000-0000-7000-8000-000000000001"
    assert [(m.role, m.content) for m in thread.messages] == [
        ("system", "You are Grok"),
        ("system", "project policy"),
        ("user", "Review parser compatibility"),
        ("assistant", ""),
        ("assistant", "Reading the implementation."),
        ("tool", "source body"),
        ("user", "also keep interjections"),
        ("assistant", "Compatibility checked."),
    ]
    search = thread.messages[3]
    assert [c.tool_name for c in search.tool_calls or []] == ["web_search"]
    assert search.extra["backend"] is True
    assert search.extra["reasoning"][0]["id"] == "rs_1"
    read = (thread.messages[4].tool_calls or [])[0]
    assert (read.id, read.arguments_json) == (
        "call_1",
        {"target_file": "src/session/persistence.rs"},
    )
    assert (thread.messages[5].tool_call_id, thread.messages[5].tool_name) == (
        "call_1",
        "read_file",
    )
    assert thread.metadata.extra["parent_thread_id"] == "T-019f5000-0000-7000-8000-000000000000"
    assert (thread.cwd, thread.workspace_root) == (
        "/workspace/grok-worktrees/parser-audit",
        "/workspace/agentsview",
    )
    assert (thread.git_branch, thread.model) == ("feature/parser-audit", "grok-4.5")
    assert thread.metadata.title == "Audit Grok compatibility"
    assert thread.metadata.extra["signals"]["contextTokensUsed"] == 12000
    assert all(m.created_at is None for m in thread.messages)  # the history has no times
    assert thread.model_dump(mode="json")["created_at"] == "2026-07-18T10:00:00Z"


def test_grok_without_summary_takes_the_cwd_from_the_folder_name(tmp_path: Path) -> None:
    session = tmp_path / "%2Fhome%2Fme%2Fproject" / "019f6000-0000-7000-8000-00000000000a"
    session.mkdir(parents=True)
    (session / "chat_history.jsonl").write_bytes(GROK.read_bytes())

    [thread] = FORMATS["grok-build"].parse(session / "chat_history.jsonl").threads

    assert thread.id == "T-019f6000-0000-7000-8000-00000000000a"
    assert thread.cwd == "/home/me/project"
    assert "parent_thread_id" not in thread.metadata.extra


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("qwen-code", [".qwen", "projects"]),
        ("droid", [".factory", "sessions"]),
        ("grok-build", [".grok", "sessions"]),
    ],
)
def test_default_paths_are_under_home(
    fmt: str, expected: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    assert FORMATS[fmt].default_paths() == [tmp_path.joinpath(*expected)]
