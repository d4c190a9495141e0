"""The Codex TUI session log (issue 16, item 8): the real recording in
../shared/data/transcripts/codex-tui-session-log, read in place."""

from __future__ import annotations

from pathlib import Path

from loomsync.importers import FORMATS, codex_tui, detect_format
from loomsync.importers.common import owned_by, refusal
from tests.importers.corpus import TRANSCRIPTS

LOG = TRANSCRIPTS / "codex-tui-session-log" / "binary-size-log.jsonl"


def test_the_log_is_recognised_as_codex_tui_and_by_no_other_format() -> None:
    assert detect_format(LOG) == "codex-tui"
    assert [name for name, importer in FORMATS.items() if importer.detect(LOG)] == ["codex-tui"]


def test_each_session_of_the_log_is_a_thread_with_what_was_typed_and_said() -> None:
    result = codex_tui.parse(LOG)
    assert (result.warnings, dict(result.skipped)) == ([], {})
    first, second = result.threads
    assert str(first.id) == "T-d126e3d0-80ed-480a-be8c-09d97ff602cf"
    assert str(second.id) == "T-c7df96da-daec-4fe9-aed9-3cd19b7a6192"  # after /new
    assert first.metadata.title == "complete the merge"  # key presses, releases not doubled
    assert second.metadata.title == "Why are the binaries produced by this project so large?"
    assert (first.model, first.cwd) == ("gpt-5-codex", "/Users/easong/code/codex/codex-rs")
    assert [m.role for m in first.messages[:3]] == ["user", "assistant", "tool"]
    call = first.messages[1].tool_calls[0]  # type: ignore[index]
    assert call.tool_name == "shell"
    assert first.messages[2].tool_call_id == call.id
    assert first.messages[2].content.startswith("## re-add-markdown")
    assert first.messages[-1].role == "assistant"
    assert first.messages[-1].content.startswith("I resolved the Rust-side merge conflict")
    assert all(
        "/new" not in m.content for m in first.messages + second.messages if m.role == "user"
    )


def test_ids_are_per_owner_like_the_other_importers() -> None:
    thread = codex_tui.parse(LOG).threads[0]
    alice, bob = owned_by(thread, "alice"), owned_by(thread, "bob")
    assert len({str(thread.id), str(alice.id), str(bob.id)}) == 3
    assert alice.metadata.extra["source"]["session_thread_id"] == str(thread.id)  # type: ignore[index]


def test_parsing_twice_gives_the_same_documents() -> None:
    assert codex_tui.parse(LOG).threads == codex_tui.parse(LOG).threads


def test_another_file_is_refused_with_why(tmp_path: Path) -> None:
    other = tmp_path / "notes.jsonl"
    other.write_text('{"a": 1}\n')
    assert refusal(codex_tui.IMPORTER, other) == (
        f'{other}: not a Codex TUI session log (expected JSON Lines of {{"ts", "dir", "kind"}} '
        "records, in a .jsonl file)"
    )
    assert refusal(codex_tui.IMPORTER, LOG) is None
