"""Gemini CLI, aider, SWE-agent and OpenHands: the shape of what each importer produces."""

from __future__ import annotations

import json
from pathlib import Path

from loomsync.core.document.ids import ThreadId
from loomsync.importers import aider, gemini_cli, openhands, swe_agent
from tests.importers.corpus import TRANSCRIPTS

GEMINI = TRANSCRIPTS / "gemini-cli" / "session-2025-12-01T21-45-5b959dae.json"
AIDER = TRANSCRIPTS / "aider-chat-history"
SWE = TRANSCRIPTS / "swe-agent-traj"
OPENHANDS = TRANSCRIPTS / "openhands-events"


def test_gemini_tool_calls_are_followed_by_their_results() -> None:
    [thread] = gemini_cli.parse(GEMINI).threads

    assert thread.id == "T-5b959dae-8655-4cd1-b10f-720b8c336ea2"
    calls = [m for m in thread.messages if m.tool_calls]
    first = calls[0].tool_calls[0] if calls[0].tool_calls else None
    assert first is not None
    assert first.tool_name == "list_directory"
    assert first.arguments_json == {
        "dir_path": "/Users/Jane_Smith/Documents/projects/epm-cdme/assistants/"
    }
    result = thread.messages[thread.messages.index(calls[0]) + 1]
    assert (result.role, result.tool_call_id) == ("tool", first.id)
    assert result.content.startswith("Directory listing for /Users/Jane_Smith")


def test_gemini_thoughts_are_not_content_and_metadata_is_kept() -> None:
    [thread] = gemini_cli.parse(GEMINI).threads

    text = "\n".join(m.content for m in thread.messages)
    assert "Assessing the Prompt's Intent" not in text
    assert thread.metadata.title == "hi"
    assert (thread.provider, thread.model) == ("google", "gemini-3-pro-image-preview")
    assert thread.model_dump(mode="json")["created_at"] == "2025-12-01T21:45:34.362Z"
    assert thread.model_dump(mode="json")["last_activity_at"] == "2025-12-01T21:50:10.837Z"


def test_aider_history_is_one_thread_per_session_with_stable_distinct_ids() -> None:
    path = AIDER / "AFI-Protocol__afi-core" / ".aider.chat.history.md"
    threads = aider.parse(path).threads

    assert len(threads) == 8
    assert len({t.id for t in threads}) == 8
    assert all(ThreadId.parse(str(t.id)).uuid.version == 5 for t in threads)
    second = threads[1]
    assert second.metadata.extra["source"] == {
        "agent": "aider",
        "version": "0.85.1",
        "file": ".aider.chat.history.md",
        "started_at": "2025-07-15 14:53:34",
    }
    assert second.model == "gpt-4o"
    assert second.git_commits == ["dde0244"]
    assert [m.role for m in second.messages[:3]] == ["system", "user", "assistant"]
    assert second.messages[1].content == "chmod +x ~/AFI_Modular_Repos/*.sh"


def test_aider_reasoning_tags_are_not_content() -> None:
    path = AIDER / "Aquaticat__Monochromatic" / ".aider.chat.history.md"
    threads = aider.parse(path).threads

    text = "\n".join(m.content for t in threads for m in t.messages if m.role == "assistant")
    assert "thinking-content" not in text
    assert "You haven't shared the full contents of any files" in text


def test_aider_multi_line_notes_stay_out_of_the_assistant_reply() -> None:
    path = AIDER / "AFI-Protocol__afi-core" / ".aider.chat.history.md"
    messages = [m for t in aider.parse(path).threads for m in t.messages]

    [note] = [m for m in messages if "SearchReplaceNoExactMatch" in m.content]
    assert note.role == "system"
    assert note.content.startswith("Tokens: 11k sent")


def test_aider_user_input_over_several_lines_is_one_message() -> None:
    path = AIDER / "Aquaticat__Monochromatic" / ".aider.chat.history.md"
    users = [m.content for t in aider.parse(path).threads for m in t.messages if m.role == "user"]

    assert (
        "add markdown file conventions to CONVENTIONS.md\n"
        "Ensure each sentence or long phrase is on its own line.\n"
    ) in "\n".join(users) + "\n"


def test_swe_agent_function_calling_trajectory_links_calls_and_observations() -> None:
    [thread] = swe_agent.parse(SWE / "marshmallow-code__marshmallow-1867.traj").threads

    assert [m.role for m in thread.messages[:4]] == ["system", "user", "assistant", "tool"]
    call = (thread.messages[2].tool_calls or [])[0]
    assert (call.tool_name, call.arguments_json) == ("bash", {"command": "ls -F"})
    assert thread.messages[3].tool_call_id == call.id
    assert (
        thread.metadata.title
        == "marshmallow-code__marshmallow-1867: TimeDelta serialization precision"
    )
    assert thread.metadata.extra["source"]["exit_status"] == "submitted"


def test_swe_agent_old_trajectory_actions_become_tool_calls_and_the_demo_is_left_out() -> None:
    [thread] = swe_agent.parse(SWE / "pydicom__pydicom-1458.traj").threads

    assert not any("--- DEMONSTRATION ---" in m.content for m in thread.messages)
    assistant, observation = thread.messages[2], thread.messages[3]
    call = (assistant.tool_calls or [])[0]
    assert (call.id, call.tool_name) == ("action-3", "create")
    assert (observation.role, observation.tool_call_id) == ("tool", "action-3")
    assert observation.content.startswith("[File: /pydicom__pydicom/reproduce_bug.py")


def test_openhands_actions_and_observations_become_calls_and_results() -> None:
    [thread] = openhands.parse(OPENHANDS / "basic_gui_mode.json").threads

    assert [m.role for m in thread.messages] == ["user"] + ["assistant", "tool"] * 4 + ["assistant"]
    first = (thread.messages[1].tool_calls or [])[0]
    assert (first.tool_name, first.arguments_json) == (
        "execute_bash",
        {"command": "mkdir -p /workspace/todo-app"},
    )
    assert thread.messages[1].content.startswith("I'll help you create a Vue.js application")
    assert thread.messages[2].tool_call_id == first.id
    assert thread.model == "claude-3-5-sonnet-20241022"


def test_openhands_finish_is_the_last_assistant_message() -> None:
    [thread] = openhands.parse(OPENHANDS / "basic_interactions.json").threads

    assert [m.role for m in thread.messages] == ["user", "assistant"] * 3
    assert thread.messages[-1].content == "All done! What's next on the agenda?"


def test_name_based_ids_depend_on_the_file_identity(tmp_path: Path) -> None:
    source = OPENHANDS / "basic.json"
    elsewhere = tmp_path / "openhands-events" / "basic.json"
    other = tmp_path / "other-run" / "basic.json"
    for path in (elsewhere, other):
        path.parent.mkdir()
        path.write_bytes(source.read_bytes())

    [original] = openhands.parse(source).threads
    [moved] = openhands.parse(elsewhere).threads
    [different] = openhands.parse(other).threads

    assert moved.id == original.id
    assert different.id != original.id


def test_swe_agent_trajectory_without_history_is_read_from_its_steps(tmp_path: Path) -> None:
    steps = [
        {"thought": "Look around.", "action": "ls -F\n", "observation": "setup.py\nsrc/"},
        {"response": "Done.", "action": "submit", "observation": "diff --git a/x b/x"},
    ]
    path = tmp_path / "run" / "demo__demo-1.traj"
    path.parent.mkdir()
    path.write_text(json.dumps({"trajectory": steps, "info": {"exit_status": "submitted"}}))

    [thread] = swe_agent.parse(path).threads

    assert [(m.role, m.content) for m in thread.messages] == [
        ("assistant", "Look around."),
        ("tool", "setup.py\nsrc/"),
        ("assistant", "Done."),
        ("tool", "diff --git a/x b/x"),
    ]
    assert [c.tool_name for m in thread.messages for c in m.tool_calls or []] == ["ls", "submit"]
    assert thread.metadata.title == "demo__demo-1"
