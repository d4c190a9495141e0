"""Damaged input: a bad line is skipped and counted, never fatal; a file that cannot be read
is reported and the import goes on. Damaged files are written to tmp_path from real ones."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, import_path
from tests.importers.corpus import TRANSCRIPTS, dumped, message_dicts

JSONL = [
    (
        "codex",
        "codex-rollout/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    ),
    ("claude-code", "claude-code/e9fb405b-turn-2.jsonl"),
    (
        "claude-code",
        "claude-code/fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-a93ccab.jsonl",
    ),
]
JSON_DOCUMENTS = [
    ("gemini-cli", "gemini-cli/session-2025-12-01T21-45-5b959dae.json"),
    ("swe-agent", "swe-agent-traj/function_calling_simple.traj"),
    ("openhands", "openhands-events/basic.json"),
]


def _lines(name: str) -> list[bytes]:
    return (TRANSCRIPTS / name).read_bytes().splitlines(keepends=True)


@pytest.mark.parametrize(("fmt", "name"), JSONL, ids=[n for _, n in JSONL])
def test_last_line_cut_in_half_is_skipped_and_complete_lines_import(
    fmt: str, name: str, tmp_path: Path
) -> None:
    lines = _lines(name)
    complete, cut = tmp_path / "complete" / Path(name).name, tmp_path / "cut" / Path(name).name
    complete.parent.mkdir()
    cut.parent.mkdir()
    complete.write_bytes(b"".join(lines[:-1]))
    cut.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])

    result = FORMATS[fmt].parse(cut)

    assert result.skipped == Counter({"truncated_line": 1})
    assert result.warnings == []
    assert dumped(result.threads) == dumped(FORMATS[fmt].parse(complete).threads)


@pytest.mark.parametrize(("fmt", "name"), JSONL, ids=[n for _, n in JSONL])
def test_garbage_lines_in_the_middle_are_skipped_and_counted_by_reason(
    fmt: str, name: str, tmp_path: Path
) -> None:
    lines = _lines(name)
    middle = len(lines) // 2
    garbage = [b'{"type": "user", "message": {"content": "half\n', b"\xff\xfe\x00 not utf-8\n"]
    garbage += [b"[1, 2, 3]\n", b'{"type": "assistant", "message": 5, "uuid": "x"}\n']
    damaged = tmp_path / Path(name).name
    damaged.write_bytes(b"".join(lines[:middle] + garbage + lines[middle:]))

    result = FORMATS[fmt].parse(damaged)
    clean = FORMATS[fmt].parse(TRANSCRIPTS / name)

    assert result.skipped == Counter(
        {"invalid_json": 1, "invalid_utf8": 1, "not_an_object": 1, "bad_record": 1}
    )
    assert [message_dicts(t) for t in result.threads] == [message_dicts(t) for t in clean.threads]


@pytest.mark.parametrize(("fmt", "name"), JSON_DOCUMENTS, ids=[n for _, n in JSON_DOCUMENTS])
def test_truncated_json_document_is_reported_not_raised(
    fmt: str, name: str, tmp_path: Path
) -> None:
    data = (TRANSCRIPTS / name).read_bytes()
    cut = tmp_path / Path(name).name
    cut.write_bytes(data[: len(data) // 2])

    result = FORMATS[fmt].parse(cut)

    assert result.threads == []
    assert result.skipped == Counter({"invalid_json": 1})
    assert len(result.warnings) == 1


def test_aider_line_that_is_not_utf8_is_skipped_and_the_rest_imports(tmp_path: Path) -> None:
    name = "aider-chat-history/AFI-Protocol__afi-core/.aider.chat.history.md"
    lines = _lines(name)
    damaged = tmp_path / "AFI-Protocol__afi-core" / ".aider.chat.history.md"
    damaged.parent.mkdir()
    damaged.write_bytes(b"".join([*lines[:30], b"\xc3\x28 broken\n", *lines[30:]]))

    result = FORMATS["aider"].parse(damaged)

    assert result.skipped == Counter({"invalid_utf8": 1})
    assert len(result.threads) == len(FORMATS["aider"].parse(TRANSCRIPTS / name).threads)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_folder_named_like_a_session_file_is_reported_not_raised(
    fmt: str, tmp_path: Path
) -> None:
    folder = tmp_path / "x.jsonl"
    folder.mkdir()

    result = FORMATS[fmt].parse(folder)

    assert result.threads == []
    assert len(result.warnings) == 1
    assert "x.jsonl" in result.warnings[0]


def test_unreadable_and_binary_files_are_reported_and_the_import_goes_on(tmp_path: Path) -> None:
    good = (
        TRANSCRIPTS
        / "codex-rollout"
        / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
    )
    (tmp_path / good.name).write_bytes(good.read_bytes())
    binary = tmp_path / "rollout-2026-01-01T00-00-00-00000000-0000-7000-8000-000000000000.jsonl"
    binary.write_bytes(bytes(range(128, 256)) * 64 + b"\n\x80\x81\n")
    (tmp_path / "session.json").write_bytes(b'{"sessionId": "s", "startTime": 1, "messages": [\xff')

    result = import_path(tmp_path)

    assert [t.id for t in result.threads] == ["T-019b7f94-51b4-7593-922e-ba12b5b73b52"]
    assert any(binary.name in w for w in result.warnings)
    assert any("session.json" in w for w in result.warnings)
    assert result.skipped["invalid_utf8"] >= 2


def test_a_missing_path_is_reported(tmp_path: Path) -> None:
    result = import_path(tmp_path / "nowhere")

    assert result.threads == []
    assert result.warnings == [f"{tmp_path / 'nowhere'}: no such file or folder"]


def test_a_claude_line_written_twice_is_skipped_and_counted(tmp_path: Path) -> None:
    name = "claude-code/short.jsonl"
    lines = _lines(name)
    twice = tmp_path / "short.jsonl"
    twice.write_bytes(b"".join([*lines[:5], lines[4], *lines[5:]]))

    result = FORMATS["claude-code"].parse(twice)

    assert result.skipped == Counter({"duplicate_uuid": 1})
    assert dumped(result.threads) == dumped(
        FORMATS["claude-code"].parse(TRANSCRIPTS / name).threads
    )
