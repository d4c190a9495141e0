"""Claude Code transcripts: the tree of lines, merged assistant lines, what is content,
titles and the subagent / sidechain threads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from loomsync.core.document.ids import ThreadId
from loomsync.importers import claude_code
from tests.importers.corpus import TRANSCRIPTS, TURN_2

CLAUDE = TRANSCRIPTS / "claude-code"
SESSION = "e9fb405b-169f-40eb-9396-7e75076f045d"


def _line(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("message_id"), model="claude-test")
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": f"2026-01-01T00:00:{len(uuid):02d}.000Z",
        "message": message,
        **extra,
    }


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_branch_abandoned_by_a_rewind_is_left_out(tmp_path: Path) -> None:
    path = _write(
        tmp_path / f"{SESSION}.jsonl",
        [
            _line("u1", None, "user", "first question"),
            _line(
                "a1", "u1", "assistant", [{"type": "text", "text": "first answer"}], message_id="m1"
            ),
            _line("u2", "a1", "user", "abandoned question"),
            _line(
                "a2", "u2", "assistant", [{"type": "text", "text": "abandoned"}], message_id="m2"
            ),
            _line("u2b", "a1", "user", "edited question"),
            _line("a2b", "u2b", "assistant", [{"type": "text", "text": "kept"}], message_id="m3"),
        ],
    )

    [thread] = claude_code.parse(path).threads

    assert [m.content for m in thread.messages] == [
        "first question",
        "first answer",
        "edited question",
        "kept",
    ]


def test_parallel_tool_results_hanging_off_the_path_are_kept(tmp_path: Path) -> None:
    call = {"type": "tool_use", "name": "Read", "input": {"file_path": "x"}}
    result = {"type": "tool_result", "content": "ok"}
    path = _write(
        tmp_path / f"{SESSION}.jsonl",
        [
            _line("u1", None, "user", "read two files"),
            _line("a1", "u1", "assistant", [{**call, "id": "t1"}], message_id="m1"),
            _line("a2", "a1", "assistant", [{**call, "id": "t2"}], message_id="m1"),
            _line("r1", "a1", "user", [{**result, "tool_use_id": "t1"}]),
            _line("r2", "a2", "user", [{**result, "tool_use_id": "t2"}]),
            _line("a3", "r2", "assistant", [{"type": "text", "text": "done"}], message_id="m2"),
        ],
    )

    [thread] = claude_code.parse(path).threads

    assert [(m.role, m.tool_call_id) for m in thread.messages] == [
        ("user", None),
        ("assistant", None),
        ("tool", "t1"),
        ("tool", "t2"),
        ("assistant", None),
    ]
    assert [c.id for c in thread.messages[1].tool_calls or []] == ["t1", "t2"]
    assert thread.messages[2].tool_name == "Read"


def test_compaction_keeps_the_conversation_before_the_boundary() -> None:
    [thread] = claude_code.parse(CLAUDE / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl").threads

    assert thread.messages[0].content.startswith("Work on bead spotter-a0y")
    summary = [
        m for m in thread.messages if m.content.startswith("This session is being continued")
    ]
    assert [m.role for m in summary] == ["system"]
    assert thread.messages.index(summary[0]) > 100


def test_assistant_lines_of_one_response_become_one_message_with_all_its_tool_calls() -> None:
    [thread] = claude_code.parse(TURN_2).threads
    message = next(
        m for m in thread.messages if m.content.startswith("Let me analyze the existing")
    )

    assert [c.tool_name for c in message.tool_calls or []] == ["Read", "Glob", "Read"]
    assert str(message.created_at) == "2026-01-14 19:26:47.878000+00:00"


def test_thinking_and_signatures_are_not_content() -> None:
    raw = [json.loads(line) for line in TURN_2.read_text(encoding="utf-8").splitlines()]
    thoughts = [
        block["thinking"]
        for line in raw
        if line.get("type") == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "thinking" and block["thinking"]
    ]
    [thread] = claude_code.parse(TURN_2).threads

    assert thoughts
    text = "\n".join(m.content for m in thread.messages)
    assert not any(thought[:200] in text for thought in thoughts)


def test_session_metadata_comes_from_the_lines() -> None:
    [thread] = claude_code.parse(TURN_2).threads

    assert thread.id == f"T-{SESSION}"
    assert thread.metadata.title == "Metrics Calculations Verification and Discrepancy Analysis"
    assert thread.cwd == thread.workspace_root == "/Users/User/repo/codemie-ai/codemie-code"
    assert thread.git_branch == "hooks"
    assert (thread.provider, thread.model) == ("anthropic", "claude-sonnet-4-5-20250929")
    assert thread.metadata.extra["source"] == {
        "agent": "claude-code",
        "version": "2.1.7",
        "file": "e9fb405b-turn-2.jsonl",
        "session_id": SESSION,
    }


def test_subagent_file_is_its_own_thread_pointing_at_the_session() -> None:
    path = CLAUDE / "e9fb405b-turn-2" / "subagents" / "agent-a485154.jsonl"
    [thread] = claude_code.parse(path).threads

    assert thread.id != f"T-{SESSION}"
    assert ThreadId.parse(str(thread.id)).uuid.version == 5
    assert thread.metadata.extra["parent_thread_id"] == f"T-{SESSION}"
    assert thread.metadata.extra["source"]["agent_id"] == "a485154"
    assert thread.messages[0].role == "user"


def test_old_style_agent_file_beside_the_session_points_at_it() -> None:
    [thread] = claude_code.parse(CLAUDE / "-tmp-private" / "agent-36541525.jsonl").threads

    assert thread.metadata.extra["parent_thread_id"] == "T-4c2ddfdc-b619-4525-8d03-1950fb1b0257"
    assert thread.metadata.title == "Warmup"


def test_sidechains_inside_a_session_file_become_threads_of_their_own() -> None:
    threads = claude_code.parse(CLAUDE / "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl").threads
    main, sidechains = threads[0], threads[1:]

    assert main.id == "T-fe5e1c67-53e7-4862-81ae-d0e013e3270b"
    assert len(sidechains) == 5
    assert {t.metadata.extra["parent_thread_id"] for t in sidechains} == {main.id}
    assert all(t.messages[0].role == "user" for t in sidechains)
    prompts = {t.messages[0].content for t in sidechains}
    assert not prompts & {m.content for m in main.messages}


def test_a_summary_naming_another_session_still_titles_a_file_without_its_own() -> None:
    [thread] = claude_code.parse(CLAUDE / "5c187f31.jsonl").threads

    assert thread.metadata.title == "Fixed Backspace Hotkey Conflict in CLI"


def test_a_session_opened_by_a_slash_command_is_titled_by_it() -> None:
    [thread, *_] = claude_code.parse(CLAUDE / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl").threads

    assert (
        thread.metadata.title == "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"
    )


RESUMED = "5d1a0c6e-3b7f-4e2a-9c1d-8f0e6a2b4c13"


def test_a_resumed_session_is_its_own_thread_linked_to_the_one_it_continues(
    tmp_path: Path,
) -> None:
    """``claude --resume`` (issue 15, item 5): a new file under the new session id, opening
    with the history it continues (those lines keep the old ``sessionId``), then new turns."""
    history = [
        _line("u1", None, "user", "first question"),
        _line("a1", "u1", "assistant", [{"type": "text", "text": "first answer"}], message_id="m1"),
    ]
    original = _write(tmp_path / f"{SESSION}.jsonl", history)
    resumed = _write(
        tmp_path / f"{RESUMED}.jsonl",
        [
            *history,
            {**_line("u2", "a1", "user", "and then?"), "sessionId": RESUMED},
            {
                **_line(
                    "a2", "u2", "assistant", [{"type": "text", "text": "more"}], message_id="m2"
                ),
                "sessionId": RESUMED,
            },
        ],
    )

    [first] = claude_code.parse(original).threads
    [second] = claude_code.parse(resumed).threads

    assert str(first.id) == f"T-{SESSION}"
    assert "resumed_from" not in (first.metadata.extra or {})
    assert str(second.id) == f"T-{RESUMED}"
    assert second.metadata.extra["resumed_from"] == f"T-{SESSION}"
    assert second.metadata.extra["source"]["session_id"] == RESUMED
    # the copied history is the first thread's alone (issue 27, item 9)
    assert [m.content for m in second.messages] == ["and then?", "more"]
    original.unlink()  # the original gone: the resumed file is the only copy and keeps it all
    [alone] = claude_code.parse(resumed).threads
    assert alone.metadata.extra["resumed_from"] == f"T-{SESSION}"
    assert [m.content for m in alone.messages] == [
        "first question", "first answer", "and then?", "more"
    ]  # fmt: skip


def test_owner_keyed_ids_rekey_the_links_too(tmp_path: Path) -> None:
    from loomsync.importers import import_path

    path = _write(
        tmp_path / f"{RESUMED}.jsonl",
        [
            _line("u1", None, "user", "first question"),
            {**_line("u2", "u1", "user", "again"), "sessionId": RESUMED},
        ],
    )
    [plain] = import_path(path).threads
    [alice] = import_path(path, owner="alice").threads
    [bob] = import_path(path, owner="bob").threads

    assert str(plain.id) == f"T-{RESUMED}"  # no owner: the file's own ids, as before
    assert len({plain.id, alice.id, bob.id}) == 3
    assert alice.id == ThreadId.owned("alice", f"T-{RESUMED}")
    assert alice.metadata.extra["resumed_from"] == ThreadId.owned("alice", f"T-{SESSION}")
    assert alice.metadata.extra["source"]["session_thread_id"] == f"T-{RESUMED}"
    assert import_path(path, owner="alice").threads[0] == alice  # same owner, same document


def test_a_sidechain_copied_into_a_resumed_session_keeps_its_thread(tmp_path: Path) -> None:
    """A subagent's lines copied by ``claude --resume`` keep the ``sessionId`` they ran in: the
    resumed file gives the thread the original file gives, not a duplicate (issue 15, item 5)."""
    history = [
        _line("u1", None, "user", "first question"),
        {**_line("s1", None, "user", "subagent task"), "isSidechain": True},
        {
            **_line("s2", "s1", "assistant", [{"type": "text", "text": "done"}], message_id="m9"),
            "isSidechain": True,
        },
    ]
    original = _write(tmp_path / f"{SESSION}.jsonl", history)
    resumed = _write(
        tmp_path / f"{RESUMED}.jsonl",
        [*history, {**_line("u2", "u1", "user", "and then?"), "sessionId": RESUMED}],
    )
    _, side = claude_code.parse(original).threads
    [session] = claude_code.parse(resumed).threads  # the sidechain is the original file's
    assert str(session.id) == f"T-{RESUMED}"
    assert [m.content for m in session.messages] == ["and then?"]
    original.unlink()  # the original gone: the copy gives the same sidechain thread
    session, copied = claude_code.parse(resumed).threads
    assert copied.id == side.id
    assert copied.metadata.extra["parent_thread_id"] == f"T-{SESSION}"
