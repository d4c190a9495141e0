"""Codex rollouts: each message once, preambles and reasoning left out, tool calls linked,
session metadata."""

from __future__ import annotations

import json
from pathlib import Path

from loomsync.importers import codex
from tests.importers.corpus import TRANSCRIPTS

ROLLOUTS = TRANSCRIPTS / "codex-rollout"
EXEC = ROLLOUTS / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
TUI = ROLLOUTS / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
TRIMMED = ROLLOUTS / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"


def test_user_and_assistant_text_written_twice_appears_once() -> None:
    [thread] = codex.parse(TUI).threads

    users = [m.content for m in thread.messages if m.role == "user"]
    assert users == ["show tools", "let's update the defailt context compart to 90 in env var"]
    texts = [m.content for m in thread.messages if m.role == "assistant" and m.content]
    assert len(texts) == len(set(texts)) == 13


def test_instructions_and_environment_preambles_are_neither_messages_nor_title() -> None:
    [thread] = codex.parse(EXEC).threads

    assert thread.messages[0].role == "user"
    assert (
        thread.metadata.title
        == thread.messages[0].content
        == ("what is current repository about? summarize purpuse and explain goals")
    )
    assert not any("<environment_context>" in m.content for m in thread.messages)
    assert not any("# AGENTS.md instructions" in m.content for m in thread.messages)


def test_encrypted_reasoning_and_its_summaries_are_not_content() -> None:
    lines = [json.loads(line) for line in TUI.read_text(encoding="utf-8").splitlines()]
    reasoning = [line["payload"] for line in lines if line["payload"].get("type") == "reasoning"]
    secrets = [r["encrypted_content"][:64] for r in reasoning if r.get("encrypted_content")]
    [thread] = codex.parse(TUI).threads

    assert secrets
    text = "\n".join(m.content for m in thread.messages)
    assert not any(secret in text for secret in secrets)


def test_tool_calls_and_outputs_are_linked_by_call_id() -> None:
    [thread] = codex.parse(TUI).threads
    calls = {c.id: c for m in thread.messages for c in m.tool_calls or []}
    outputs = [m for m in thread.messages if m.role == "tool"]

    assert len(outputs) == len(calls) == 102
    assert all(m.tool_call_id in calls for m in outputs)
    assert all(m.tool_name == calls[m.tool_call_id].tool_name for m in outputs)
    patch = next(c for c in calls.values() if c.tool_name == "apply_patch")
    assert patch.arguments_json["input"].startswith("*** Begin Patch")
    shell = next(c for c in calls.values() if c.tool_name == "exec_command")
    assert isinstance(shell.arguments_json, dict)
    assert "cmd" in shell.arguments_json


def test_prompts_found_only_as_events_are_kept() -> None:
    [thread] = codex.parse(TRIMMED).threads

    users = [m for m in thread.messages if m.role == "user"]
    assert len(users) == 3
    assert thread.metadata.title is not None
    assert thread.metadata.title.startswith("analyze trascript and summarzie action items")


def test_session_metadata_comes_from_session_meta_and_turn_context() -> None:
    [thread] = codex.parse(EXEC).threads

    assert thread.id == "T-019b7f94-51b4-7593-922e-ba12b5b73b52"
    assert thread.git_branch == thread.git_initial_branch == "codex"
    assert thread.git_remote_url == "git@github.com:codemie-ai/codemie-code.git"
    assert thread.git_commits == ["02942347cadda24d3080fbfbc2d13295bb3a496d"]
    assert thread.model == "gpt-5-1-codex-2025-11-13"
    assert thread.provider == "preview-codex"
    assert thread.model_dump(mode="json")["created_at"] == "2026-01-02T16:39:45.349Z"
    assert thread.model_dump(mode="json")["last_activity_at"] == "2026-01-02T16:39:58.808Z"
    assert thread.metadata.extra["source"] == {
        "agent": "codex",
        "originator": "codex_exec",
        "cli_version": "0.77.0",
        "file": EXEC.name,
    }


def test_legacy_rollout_without_envelopes_imports(tmp_path: Path) -> None:
    session = "0196a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    lines = [
        {"id": session, "timestamp": "2025-05-01T10:00:00.000Z", "instructions": "be nice"},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command": ["ls"]}',
            "call_id": "c1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "README.md"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}],
        },
    ]
    path = tmp_path / f"rollout-2025-05-01T10-00-00-{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    result = codex.parse(path)

    [thread] = result.threads
    assert result.skipped == {}
    assert thread.id == f"T-{session}"
    assert [(m.role, m.content) for m in thread.messages] == [
        ("user", "hello"),
        ("assistant", ""),
        ("tool", "README.md"),
        ("assistant", "hi"),
    ]
    assert thread.messages[1].tool_calls is not None
    assert thread.messages[1].tool_calls[0].arguments_json == {"command": ["ls"]}


def test_arguments_that_are_not_json_are_kept_as_raw_text() -> None:
    path = ROLLOUTS / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
    [thread] = codex.parse(path).threads
    call = next(c for m in thread.messages for c in m.tool_calls or [])

    assert call.arguments_json == {"raw": "[REDACTED_ARGUMENTS len=46 sha=4cb9a2fc]"}


def test_a_shell_command_the_user_ran_is_a_message_but_not_the_title(tmp_path: Path) -> None:
    def item(role: str, text: str) -> dict[str, object]:
        payload = {
            "type": "message",
            "role": role,
            "content": [{"type": "input_text", "text": text}],
        }
        return {
            "timestamp": "2026-01-01T00:00:00.000Z",
            "type": "response_item",
            "payload": payload,
        }

    lines = [
        item("user", "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
        item("user", "<user_shell_command>\n<command>ls</command>\n</user_shell_command>"),
        item("user", "now fix the bug"),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    [thread] = codex.parse(path).threads

    assert [m.content[:20] for m in thread.messages] == ["<user_shell_command>", "now fix the bug"]
    assert thread.metadata.title == "now fix the bug"
