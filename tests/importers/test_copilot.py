"""GitHub Copilot CLI and Copilot Chat (VS Code): what the importers make of the real files,
counted here from the raw files; the Chat session rewritten in place; where they look."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS, detect_format, import_path
from loomsync.importers.common import ImportResult
from tests.importers.corpus import TRANSCRIPTS, assert_extends, message_dicts

CLI = TRANSCRIPTS / "copilot-cli" / "session-state"
FOLDER = CLI / "07c40cd0-ff51-4d6e-bdcd-ac2f90877203"
CHAT = TRANSCRIPTS / "copilot-chat-vscode"
AGENT_MODE = CHAT / "chatSessions" / "f56f201a-672e-4cc5-ada9-4736258cc586.json"
EMPTY_WINDOW = (
    CHAT / "globalStorage" / "emptyWindowChatSessions" / "2f3d7ea4-d68a-4680-9455-029304241c6b.json"
)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]


def _paired(messages: list[Any]) -> tuple[int, int]:
    """(tool calls, tool messages answering a call made earlier in the thread)."""
    calls: set[str] = set()
    answered = 0
    for message in messages:
        calls |= {c.id for c in message.tool_calls or []}
        answered += message.role == "tool" and message.tool_call_id in calls
    return len(calls), answered


def test_copilot_cli_folder_session_maps_every_event_kind() -> None:
    events = _events(FOLDER / "events.jsonl")
    [thread] = FORMATS["copilot-cli"].parse(FOLDER / "events.jsonl").threads

    assert thread.id == "T-07c40cd0-ff51-4d6e-bdcd-ac2f90877203"
    assert len(thread.messages) == 173
    assert Counter(m.role for m in thread.messages) == {
        "tool": 86,
        "assistant": 75,
        "user": 9,
        "system": 3,
    }
    assert _paired(thread.messages) == (86, 86)
    requests = [r["toolCallId"] for e in events for r in e["data"].get("toolRequests", [])]
    assert [c.id for m in thread.messages for c in m.tool_calls or []] == requests
    # every event that is not a message is kept, in order
    mapped = ("user.message", "assistant.message", "tool.execution_complete")
    others = [e for e in events if e["type"] not in (*mapped, "session.error", "session.warning")]
    assert thread.metadata.extra["events"] == others
    first = thread.model_dump(mode="json")["conversation"]["messages"][0]
    assert first["created_at"] == "2026-03-20T20:47:00.120Z"


def test_copilot_cli_usage_is_the_output_tokens_of_each_assistant_message() -> None:
    events = _events(FOLDER / "events.jsonl")
    [thread] = FORMATS["copilot-cli"].parse(FOLDER / "events.jsonl").threads
    usages = [m.usage for m in thread.messages if m.role == "assistant"]

    assert [u["output_tokens"] for u in usages] == [
        e["data"]["outputTokens"] for e in events if e["type"] == "assistant.message"
    ]
    assert sum(u["output_tokens"] for u in usages) == 22185
    assert usages[0] == {
        "output_tokens": 178,
        "model": "claude-opus-4.6",
        "provider": "github-copilot",
    }
    assert usages[-1]["model"] == "claude-sonnet-4.6"  # after /model
    assert (thread.provider, thread.model) == ("github-copilot", "claude-sonnet-4.6")


def test_copilot_cli_git_cwd_and_title_come_from_the_session_and_its_sidecars() -> None:
    [thread] = FORMATS["copilot-cli"].parse(FOLDER / "events.jsonl").threads
    index = json.loads((FOLDER / "rewind-snapshots" / "index.json").read_text("utf-8"))
    commit = "8f29996c702c5312afd4a2be93c06ede2f0552c5"

    assert thread.cwd == thread.workspace_root == "D:\\Source\\GitHub\\agent-engram"
    assert thread.git_remote_url == "https://github.com/softwaresalt/agent-engram"
    assert thread.git_branch == thread.git_initial_branch == "007-agent-engineering-refactor"
    assert thread.git_commits == [commit]
    assert thread.metadata.title == "Break Down Feature 007"  # workspace.yaml summary
    users = [m for m in thread.messages if m.role == "user"]
    assert [m.extra["git"]["snapshot_id"] for m in users] == [
        s["snapshotId"] for s in index["snapshots"]
    ]
    assert {m.extra["git"]["commit"] for m in users} == {commit}
    assert thread.metadata.extra["workspace"]["summary"] == "Break Down Feature 007"
    assert "index.md" in thread.metadata.extra["checkpoints"]


def test_copilot_cli_flat_files_of_the_older_cli() -> None:
    [one] = FORMATS["copilot-cli"].parse(CLI / "2acc594f-590b-4c79-9fcc-c1b1ea774875.jsonl").threads
    [two] = FORMATS["copilot-cli"].parse(CLI / "cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl").threads

    assert [(m.role, m.content) for m in two.messages] == [
        ("user", "what is 1+1"),
        ("assistant", "1 + 1 = 2"),
        ("user", "what is 2+2"),
        ("assistant", "2 + 2 = 4"),
    ]
    assert one.id == "T-2acc594f-590b-4c79-9fcc-c1b1ea774875"
    assert one.metadata.extra["source"]["version"] == "0.0.354"
    assert one.metadata.extra["source"]["layout"] == "flat"
    assert one.model_dump(mode="json")["created_at"] == "2025-11-07T00:34:38.028Z"
    assert not any(getattr(m, "usage", None) for m in one.messages)  # 0.0.354 records none


@pytest.mark.parametrize(
    "sidecar", ["workspace.yaml", "rewind-snapshots/index.json", "checkpoints/index.md"]
)
def test_copilot_cli_sidecar_names_its_session(sidecar: str) -> None:
    importer = FORMATS["copilot-cli"]
    assert importer.unit_of is not None

    assert importer.unit_of(FOLDER / sidecar) == FOLDER / "events.jsonl"
    assert detect_format(FOLDER / sidecar) == "copilot-cli"
    assert importer.discover(FOLDER / sidecar) == [FOLDER / "events.jsonl"]


def test_copilot_cli_session_folder_without_sidecars_still_imports(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    shutil.copy(FOLDER / "events.jsonl", tmp_path / "s" / "events.jsonl")
    [bare] = FORMATS["copilot-cli"].parse(tmp_path / "s" / "events.jsonl").threads
    [full] = FORMATS["copilot-cli"].parse(FOLDER / "events.jsonl").threads

    assert [m.content for m in bare.messages] == [m.content for m in full.messages]
    assert bare.git_branch == "007-agent-engineering-refactor"  # session.start context
    assert "workspace" not in bare.metadata.extra


def test_copilot_chat_agent_mode_rounds_become_calls_paired_with_results() -> None:
    document = json.loads(AGENT_MODE.read_text("utf-8"))
    [thread] = FORMATS["copilot-chat"].parse(AGENT_MODE).threads

    assert thread.id == "T-f56f201a-672e-4cc5-ada9-4736258cc586"
    assert Counter(m.role for m in thread.messages) == {"user": 3, "assistant": 11, "tool": 13}
    assert _paired(thread.messages) == (13, 13)
    assert all(m.content for m in thread.messages if m.role == "tool")
    first_call = thread.messages[1].tool_calls[0] if thread.messages[1].tool_calls else None
    assert first_call is not None
    assert (first_call.tool_name, first_call.arguments_json) == (
        "grep_search",
        {"query": "debug", "isRegexp": False},
    )
    assert thread.messages[2].content.startswith(
        '20 matches (more results are available)<match path="/home/sample/workspace/splitrail/'
        'src/analyzers/kilo_code.rs" line=24>\n#[derive(Debug, Clone, Serialize, Deserialize)]\n'
    )
    assert [m.content for m in thread.messages if m.role == "user"] == [
        r["message"]["text"] for r in document["requests"]
    ]
    assert thread.metadata.title == "Adding a debug option to the application"
    assert (thread.provider, thread.model) == (
        "generic-copilot",
        "litellm/anthropic/claude-haiku-4.5",
    )
    dumped_thread = thread.model_dump(mode="json")
    assert dumped_thread["created_at"] == "2025-11-11T17:45:09.992Z"
    assert dumped_thread["conversation"]["messages"][0]["created_at"] == "2025-11-11T17:54:20.019Z"
    assert (
        thread.messages[0].extra["result"]["timings"]
        == document["requests"][0]["result"]["timings"]
    )


def test_copilot_chat_empty_window_session_keeps_its_edit_state() -> None:
    [thread] = FORMATS["copilot-chat"].parse(EMPTY_WINDOW).threads
    state = next(CHAT.glob("workspaceStorage/*/chatEditingSessions/*/state.json"))

    assert [(m.role, m.content[:31]) for m in thread.messages] == [
        ("user", "Set up Copilot."),
        ("assistant", "Copilot setup finished successf"),
        ("user", "Set up Copilot."),
        ("assistant", "To set up GitHub Copilot in VS "),
    ]
    assert thread.metadata.extra["editing_state"] == json.loads(state.read_text("utf-8"))
    assert thread.messages[0].extra["agent"]["id"] == "setup.agent"
    assert FORMATS["copilot-chat"].parse(state).threads[0].id == thread.id


def test_copilot_chat_rewritten_in_place_gives_the_new_request(tmp_path: Path) -> None:
    document = json.loads(AGENT_MODE.read_text("utf-8"))
    folder = tmp_path / "chatSessions"
    folder.mkdir()
    target = folder / AGENT_MODE.name
    seen: list[Any] = []
    for count in range(1, len(document["requests"]) + 1):  # VS Code rewrites the whole file
        target.write_text(json.dumps({**document, "requests": document["requests"][:count]}))
        [thread] = FORMATS["copilot-chat"].parse(target).threads
        assert_extends(seen, thread.messages)
        seen = thread.messages
    [copied] = FORMATS["copilot-chat"].parse(target).threads
    [original] = FORMATS["copilot-chat"].parse(AGENT_MODE).threads
    assert (copied.id, message_dicts(copied)) == (original.id, message_dicts(original))


def test_copilot_chat_unknown_fields_import_and_damage_loses_only_the_damaged(
    tmp_path: Path,
) -> None:
    document = json.loads(AGENT_MODE.read_text("utf-8"))
    document["futureField"] = 1
    document["requests"][1]["futureRequestField"] = {"a": 1}
    document["requests"].insert(1, "not a request")
    target = tmp_path / AGENT_MODE.name
    target.write_text(json.dumps(document))

    result = FORMATS["copilot-chat"].parse(target)
    [clean] = FORMATS["copilot-chat"].parse(AGENT_MODE).threads

    assert result.skipped == Counter({"bad_record": 1})
    assert [m.content for m in result.threads[0].messages] == [m.content for m in clean.messages]
    assert result.threads[0].metadata.extra["session"]["futureField"] == 1
    cut = tmp_path / "cut" / AGENT_MODE.name
    cut.parent.mkdir()
    cut.write_bytes(AGENT_MODE.read_bytes()[:5000])
    damaged = FORMATS["copilot-chat"].parse(cut)
    assert (damaged.threads, damaged.skipped) == ([], Counter({"invalid_json": 1}))
    assert len(damaged.warnings) == 1


def test_importing_the_copilot_folders_reads_each_session_once() -> None:
    result = import_path(TRANSCRIPTS / "copilot-cli")
    chat = import_path(CHAT)

    assert sorted(str(t.id) for t in result.threads) == [
        "T-07c40cd0-ff51-4d6e-bdcd-ac2f90877203",
        "T-2acc594f-590b-4c79-9fcc-c1b1ea774875",
        "T-cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba",
    ]
    assert sorted(str(t.id) for t in chat.threads) == [
        "T-2f3d7ea4-d68a-4680-9455-029304241c6b",
        "T-f56f201a-672e-4cc5-ada9-4736258cc586",
    ]
    assert result.warnings == chat.warnings == []


def test_default_paths_honour_copilot_home_and_each_vs_code_product(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setattr("sys.platform", "linux")

    assert FORMATS["copilot-cli"].default_paths()[0] == tmp_path / ".copilot" / "session-state"
    chat = FORMATS["copilot-chat"].default_paths()
    assert tmp_path / ".config" / "Code" / "User" / "workspaceStorage" in chat
    assert (
        tmp_path / ".config" / "Cursor" / "User" / "globalStorage" / "emptyWindowChatSessions"
        in chat
    )
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cop"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    cli = FORMATS["copilot-cli"].default_paths()
    assert cli[0] == tmp_path / "cop" / "session-state"
    assert tmp_path / "xdg" / ".copilot" / "session-state" in cli
    assert tmp_path / "xdg" / "Code - Insiders" / "User" / "workspaceStorage" in (
        FORMATS["copilot-chat"].default_paths()
    )
    monkeypatch.setattr("sys.platform", "darwin")
    mac = tmp_path / "Library" / "Application Support" / "VSCodium" / "User" / "workspaceStorage"
    assert mac in FORMATS["copilot-chat"].default_paths()


def test_a_result_collects_nothing_from_a_copilot_file_of_another_agent() -> None:
    qwen = next((TRANSCRIPTS / "qwen-code").glob("*.jsonl"))
    result: ImportResult = FORMATS["copilot-cli"].parse(qwen)

    assert result.threads == []
    assert FORMATS["copilot-cli"].detect(qwen) is False
    assert (
        FORMATS["copilot-chat"].detect(
            TRANSCRIPTS
            / "gemini-cli"
            / next(p.name for p in (TRANSCRIPTS / "gemini-cli").iterdir())
        )
        is False
    )


def test_copilot_cli_assistant_usage_events_complete_the_turns_usage(tmp_path: Path) -> None:
    # assistant.usage is the Copilot SDK's per-call event (not in the sample files): its shape
    # is the SDK's documented one
    lines = _events(CLI / "cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl")
    first_answer = next(i for i, e in enumerate(lines) if e["type"] == "assistant.message")
    usage_event = {
        "type": "assistant.usage",
        "data": {
            "model": "gpt-5-mini",
            "inputTokens": 900,
            "outputTokens": 12,
            "cacheReadTokens": 4000,
            "cacheWriteTokens": 0,
        },
        "id": "usage-1",
        "timestamp": "2025-11-07T00:53:50.800Z",
        "parentId": lines[first_answer]["id"],
    }
    lines.insert(first_answer + 1, usage_event)
    path = tmp_path / "cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    [thread] = FORMATS["copilot-cli"].parse(path).threads
    answers = [m for m in thread.messages if m.role == "assistant"]

    assert answers[0].usage == {
        "input_tokens": 900,
        "output_tokens": 12,
        "cache_read_tokens": 4000,
        "cache_write_tokens": 0,
        "model": "gpt-5-mini",
        "provider": "github-copilot",
    }
    assert getattr(answers[1], "usage", None) is None  # its turn had no usage event
    assert thread.model == "gpt-5-mini"
    assert usage_event in thread.metadata.extra["events"]


def _log_of(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The mutation log newer VS Code builds append for ``document`` (VS Code's
    ObjectMutationLog entries): the session with its first request, then each later request
    pushed, a result set on the first one, the title set last."""
    requests = document["requests"]
    first = {**requests[0], "result": {}}
    initial = {**{k: v for k, v in document.items() if k != "customTitle"}, "requests": [first]}
    entries: list[dict[str, Any]] = [{"kind": 0, "v": initial}]
    entries.append({"kind": 1, "k": ["requests", 0, "result"], "v": requests[0]["result"]})
    entries += [{"kind": 2, "k": ["requests"], "v": [r]} for r in requests[1:]]
    entries.append({"kind": 1, "k": ["customTitle"], "v": document["customTitle"]})
    return entries


def test_copilot_chat_mutation_log_replays_to_the_same_session(tmp_path: Path) -> None:
    document = json.loads(AGENT_MODE.read_text("utf-8"))
    folder = tmp_path / "workspaceStorage" / "abc" / "chatSessions"
    folder.mkdir(parents=True)
    log = folder / f"{document['sessionId']}.jsonl"
    entries = _log_of(document)
    # a request still running (its result not set yet) shows what its response parts hold
    log.write_text(json.dumps(entries[0]) + "\n")
    [running] = FORMATS["copilot-chat"].parse(log).threads
    assert [m.role for m in running.messages][:2] == ["user", "assistant"]
    seen: list[Any] = []
    for count in range(2, len(entries) + 1):  # VS Code appends entries as the chat goes on
        log.write_text("".join(json.dumps(e) + "\n" for e in entries[:count]))
        assert detect_format(log) == "copilot-chat"
        [thread] = FORMATS["copilot-chat"].parse(log).threads
        assert_extends(seen, thread.messages)
        seen = thread.messages
    [original] = FORMATS["copilot-chat"].parse(AGENT_MODE).threads
    [replayed] = FORMATS["copilot-chat"].parse(log).threads

    assert message_dicts(replayed) == message_dicts(original)
    assert replayed.metadata.title == original.metadata.title
    assert FORMATS["copilot-chat"].discover(tmp_path) == [log]


def test_copilot_chat_mutation_log_cut_and_deleted_entries(tmp_path: Path) -> None:
    document = json.loads(AGENT_MODE.read_text("utf-8"))
    entries = _log_of(document)
    entries.append({"kind": 2, "k": ["requests"], "i": 1})  # the chat was cut after request 1
    entries.append({"kind": 3, "k": ["customTitle"]})
    entries.append({"kind": 1, "k": ["requests", 7, "result"], "v": {}})  # no such request
    log = tmp_path / "chatSessions" / "s.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps(e) + "\n" for e in entries) + '{"kind": 1, "k": [')

    result = FORMATS["copilot-chat"].parse(log)

    assert result.skipped == Counter({"bad_record": 1, "truncated_line": 1})
    [thread] = result.threads
    assert [m.content for m in thread.messages if m.role == "user"] == [
        document["requests"][0]["message"]["text"]
    ]
    assert thread.metadata.title == "Does this application have a debug option"
