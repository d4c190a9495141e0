"""Importing is deterministic: the same bytes give the same ids and documents, and a session
that grew gives a document whose messages extend the earlier import's."""

from __future__ import annotations

from pathlib import Path

import pytest

from loomsync.importers import FORMATS
from tests.importers.corpus import (
    TRANSCRIPTS,
    TURN_1,
    TURN_2,
    assert_extends,
    case_id,
    dumped,
    message_dicts,
    supported_files,
)

SUPPORTED = supported_files()


@pytest.mark.parametrize(("fmt", "path"), SUPPORTED, ids=[case_id(p) for _, p in SUPPORTED])
def test_importing_twice_gives_identical_ids_and_documents(fmt: str, path: Path) -> None:
    first = FORMATS[fmt].parse(path)
    second = FORMATS[fmt].parse(path)

    assert [t.id for t in first.threads] == [t.id for t in second.threads]
    assert len({t.id for t in first.threads}) == len(first.threads)
    assert dumped(first.threads) == dumped(second.threads)


def test_turn_1_messages_are_a_prefix_of_turn_2_messages_under_the_same_id() -> None:
    assert TURN_2.read_bytes().startswith(TURN_1.read_bytes())
    [earlier] = FORMATS["claude-code"].parse(TURN_1).threads
    [later] = FORMATS["claude-code"].parse(TURN_2).threads

    assert earlier.id == later.id == "T-e9fb405b-169f-40eb-9396-7e75076f045d"
    old, new = message_dicts(earlier), message_dicts(later)
    assert 0 < len(old) < len(new)
    assert new[: len(old)] == old


def test_the_same_session_copied_elsewhere_keeps_its_id(tmp_path: Path) -> None:
    copy = tmp_path / TURN_2.name
    copy.write_bytes(TURN_2.read_bytes())

    original = FORMATS["claude-code"].parse(TURN_2).threads
    copied = FORMATS["claude-code"].parse(copy).threads

    assert dumped(copied) == dumped(original)


GROWING = [
    (
        "codex",
        "codex-rollout/rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl",
    ),
    (
        "codex",
        "codex-rollout/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl",
    ),
    (
        "codex",
        "codex-rollout/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl",
    ),
    ("claude-code", "claude-code/e9fb405b-turn-2.jsonl"),
    ("claude-code", "claude-code/tool_heavy.jsonl"),
    ("claude-code", "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"),
    (
        "claude-code",
        "claude-code/fa812bfe-b295-4cca-9c2f-fdf01028cb46/subagents/agent-a93ccab.jsonl",
    ),
]


@pytest.mark.parametrize(("fmt", "name"), GROWING, ids=[n for _, n in GROWING])
def test_a_session_cut_at_any_line_is_extended_by_the_full_import(
    fmt: str, name: str, tmp_path: Path
) -> None:
    lines = (TRANSCRIPTS / name).read_bytes().splitlines(keepends=True)
    full = {t.id: t for t in FORMATS[fmt].parse(TRANSCRIPTS / name).threads}
    cut = tmp_path / Path(name).name
    step = max(1, len(lines) // 60)
    for end in range(1, len(lines), step):
        cut.write_bytes(b"".join(lines[:end]))
        for thread in FORMATS[fmt].parse(cut).threads:
            assert thread.id in full, f"cut after line {end}: unknown thread {thread.id}"
            assert_extends(thread.messages, full[thread.id].messages)
