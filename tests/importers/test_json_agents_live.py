"""Copilot CLI, Qwen Code, Droid and Grok Build (JSON Lines, ``live="append"``): a file that
grows the way the agent writes it is captured turn by turn without duplicates, both by a fresh
``parse`` and by ``from_records`` over the lines read so far (what ``loomsync watch`` does);
lines from a newer agent version with unknown fields still import, and damaged lines lose only
themselves. The real files are copied to tmp_path (with their session folder's sidecars)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS
from loomsync.importers.common import ImportResult, jsonl_records
from loomsync.importers.copilot_cli import EVENTS
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped, message_dicts

COPILOT = "copilot-cli/session-state/07c40cd0-ff51-4d6e-bdcd-ac2f90877203/events.jsonl"
GROK = (
    "grok-build/%2Fworkspace%2Fgrok-worktrees%2Fparser-audit/"
    "019f6000-0000-7000-8000-000000000001/chat_history.jsonl"
)
APPENDING = [
    ("copilot-cli", COPILOT),
    ("copilot-cli", "copilot-cli/session-state/cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl"),
    ("qwen-code", "qwen-code/69f0814a-8bfc-4c8e-93d3-05757f17b96f.jsonl"),
    ("droid", "droid/FIXTURE-session_store_small.jsonl"),
    ("grok-build", GROK),
]
IDS = [name.split("/")[0] + "/" + Path(name).name for _, name in APPENDING]


def _copy(name: str, tmp_path: Path) -> tuple[Path, list[bytes]]:
    """An empty session file at tmp_path with the sidecars of its folder beside it (a session
    folder is copied whole), and the lines of the real file."""
    source = TRANSCRIPTS / name
    if source.name in (EVENTS, "chat_history.jsonl"):
        folder = tmp_path / source.parent.name
        shutil.copytree(source.parent, folder)
        target = folder / source.name
    else:
        target = tmp_path / source.parent.name / source.name
        target.parent.mkdir()
    target.write_bytes(b"")
    lines = source.read_bytes().splitlines(keepends=True)
    return target, [line for line in lines if line.strip()]


@pytest.mark.parametrize(("fmt", "name"), APPENDING, ids=IDS)
def test_a_growing_file_gives_the_new_turns_without_duplicates(
    fmt: str, name: str, tmp_path: Path
) -> None:
    importer = FORMATS[fmt]
    target, lines = _copy(name, tmp_path)
    full = importer.parse(TRANSCRIPTS / name).threads
    step = max(1, len(lines) // 40)
    previous: list[Any] = []
    for end in range(step, len(lines) + step, step):
        with target.open("ab") as handle:  # the agent appends whole lines
            handle.write(b"".join(lines[end - step : end]))
        threads = importer.parse(target).threads
        if not threads:
            continue
        [thread] = threads
        assert thread.id == full[0].id
        ids = [m.id for m in thread.messages if m.id is not None]
        assert len(ids) == len(set(ids)), f"duplicate message after line {end}"
        assert_extends(previous, thread.messages)
        assert_extends(thread.messages, full[0].messages)
        previous = thread.messages
    assert dumped(importer.parse(target).threads) == dumped(full)


@pytest.mark.parametrize(("fmt", "name"), APPENDING, ids=IDS)
def test_from_records_over_the_lines_read_so_far_equals_a_fresh_parse(
    fmt: str, name: str, tmp_path: Path
) -> None:
    importer = FORMATS[fmt]
    assert importer.from_records is not None
    assert importer.live == "append"
    target, lines = _copy(name, tmp_path)
    records: list[dict[str, Any]] = []
    offset = 0
    for chunk in (lines[: len(lines) // 3], lines[len(lines) // 3 :]):
        with target.open("ab") as handle:
            handle.write(b"".join(chunk))
        data = target.read_bytes()
        records += jsonl_records(data[offset:], ImportResult())  # only the new lines
        offset = len(data)
        watched = ImportResult()
        importer.from_records(target, records, watched)
        assert dumped(watched.threads) == dumped(importer.parse(target).threads)


def _newer(line: dict[str, Any]) -> dict[str, Any]:
    """A line as a later agent version might write it: an unknown member at the top and in
    each nested object of the line's payload."""
    line = {**line, "futureTopLevel": {"rev": 2}}
    for key in ("data", "message"):
        if isinstance(line.get(key), dict):
            line[key] = {**line[key], "futureNested": [1, 2]}
    return line


@pytest.mark.parametrize(("fmt", "name"), APPENDING, ids=IDS)
def test_lines_with_unknown_fields_and_types_still_import_and_keep_them(
    fmt: str, name: str, tmp_path: Path
) -> None:
    importer = FORMATS[fmt]
    target, lines = _copy(name, tmp_path)
    newer = [json.dumps(_newer(json.loads(line))).encode() + b"\n" for line in lines]
    unknown = {"type": "future.kind", "id": "f-1", "data": {"x": 1}, "timestamp": None}
    newer.insert(len(newer) // 2, json.dumps(unknown).encode() + b"\n")
    target.write_bytes(b"".join(newer))

    result = importer.parse(target)
    [clean] = importer.parse(TRANSCRIPTS / name).threads
    [thread] = result.threads

    def shape(messages: list[Any]) -> list[tuple[Any, ...]]:
        return [
            (m.role, m.content, m.tool_call_id, [c.model_dump() for c in m.tool_calls or []])
            for m in messages
        ]

    assert shape(thread.messages) == shape(clean.messages)
    assert result.warnings == []
    assert "futureTopLevel" in json.dumps(thread.model_dump(mode="json"))
    # an unknown line type is either kept in metadata.extra or counted as skipped, never lost
    kept = "future.kind" in json.dumps(thread.metadata.extra)
    assert kept or result.skipped == Counter({"bad_record": 1})


@pytest.mark.parametrize(("fmt", "name"), APPENDING, ids=IDS)
def test_damaged_lines_lose_only_themselves(fmt: str, name: str, tmp_path: Path) -> None:
    importer = FORMATS[fmt]
    target, lines = _copy(name, tmp_path)
    middle = len(lines) // 2
    garbage = [b'{"type": "user", "message": {"parts": "half\n', b"\xff\xfe not utf-8\n"]
    garbage += [b"[1, 2, 3]\n"]
    cut = lines[-1][: len(lines[-1]) // 2]
    target.write_bytes(b"".join(lines[:middle] + garbage + lines[middle:-1]) + cut)
    complete = tmp_path / "complete"
    complete.mkdir()
    reference, _ = _copy(name, complete)
    reference.write_bytes(b"".join(lines[:-1]))

    result = importer.parse(target)

    assert result.skipped == Counter(
        {"invalid_json": 1, "invalid_utf8": 1, "not_an_object": 1, "truncated_line": 1}
    )
    assert [message_dicts(t) for t in result.threads] == [
        message_dicts(t) for t in importer.parse(reference).threads
    ]
