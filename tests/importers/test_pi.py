"""Pi coding agent sessions: the two real files of ../shared/data (v1 layout, a torn line, a
compaction, a model switch) and v3 files with ids written here from Pi's format."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS
from loomsync.importers.common import ImportResult, jsonl_records
from loomsync.importers.pi import default_paths, detect, from_records, parse
from tests.importers.corpus import TRANSCRIPTS, assert_extends, dumped

SESSION = TRANSCRIPTS / "pi" / "session.jsonl"
LARGE = TRANSCRIPTS / "pi" / "large-session.jsonl"


def _calls_and_results(path: Path) -> tuple[set[str | None], list[str | None]]:
    [thread] = parse(path).threads
    calls = {c.id for m in thread.messages for c in m.tool_calls or []}
    return calls, [m.tool_call_id for m in thread.messages if m.role == "tool"]


def test_the_torn_line_gives_both_of_its_entries() -> None:
    line_440 = SESSION.read_bytes().split(b"\n")[439]
    assert b'}{"type":"message"' in line_440
    result = parse(SESSION)
    [thread] = result.threads

    assert (result.warnings, result.skipped) == ([], Counter())
    assert Counter(m.role for m in thread.messages) == {
        "user": 45,
        "assistant": 220,
        "tool": 189,
        "system": 1,
    }
    stamps = {m.created_at.isoformat(): m for m in thread.messages if m.created_at}
    glued = stamps["2025-12-17T21:20:35.055000+00:00"]  # the second object of line 440
    assert (glued.role, glued.content) == ("user", "ok")


def test_the_real_session_keeps_ids_times_usage_and_its_compaction() -> None:
    [thread] = parse(SESSION).threads

    assert str(thread.id) == "T-5fd1e58c-9635-410e-a644-133a96057c90"
    assert thread.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert (thread.model, thread.provider) == ("claude-opus-4-5", "anthropic")
    assert all(m.created_at is not None for m in thread.messages)
    first = next(m for m in thread.messages if m.role == "assistant")
    assert first.usage == {  # type: ignore[attr-defined]
        "input_tokens": 3,
        "output_tokens": 88,
        "cache_read_tokens": 0,
        "cache_write_tokens": 4442,
        "model": "claude-opus-4-5",
        "provider": "anthropic",
    }
    assert first.extra["usage"]["cost"]["total"] == 0.029977500000000004  # type: ignore[attr-defined]
    assert sum(1 for m in thread.messages if getattr(m, "usage", None)) == 220
    [summary] = [m for m in thread.messages if m.role == "system"]
    assert summary.content.startswith("# Context Checkpoint")
    [compaction] = thread.metadata.extra["compactions"]
    assert (compaction["tokensBefore"], compaction["firstKeptEntryIndex"]) == (186045, 355)
    levels = [e for e in thread.metadata.extra["events"] if e["type"] == "thinking_level_change"]
    assert len(levels) == 8
    bash = next(m for m in thread.messages if m.content.startswith("!npm run check"))
    assert bash.role == "user"
    assert bash.extra["exitCode"] == 0


def test_every_tool_result_answers_a_call_of_its_session() -> None:
    calls, results = _calls_and_results(SESSION)
    assert len(calls) == len(results) == 189
    assert set(results) == calls

    calls, results = _calls_and_results(LARGE)
    assert len(results) == len(set(results)) == 373
    assert set(results) <= calls  # 18 calls were aborted before a result
    [thread] = parse(LARGE).threads
    aborted = [m for m in thread.messages if getattr(m, "extra", {}).get("stopReason") == "aborted"]
    assert aborted


def test_a_model_switch_is_seen_per_message_and_on_the_thread() -> None:
    [thread] = parse(LARGE).threads
    answers = [m for m in thread.messages if m.role == "assistant"]

    assert len(answers) == 453
    assert (answers[0].usage["model"], answers[0].usage["provider"]) == (  # type: ignore[attr-defined]
        "gpt-5.1-codex",
        "openai",
    )
    assert answers[-1].usage["model"] == "claude-sonnet-4-5"  # type: ignore[attr-defined]
    assert (thread.model, thread.provider) == ("claude-sonnet-4-5", "anthropic")
    events = Counter(e["type"] for e in thread.metadata.extra["events"])
    assert events == {"thinking_level_change": 103, "model_change": 1}


@pytest.mark.parametrize("path", [SESSION, LARGE], ids=["session", "large"])
def test_a_session_cut_at_any_line_is_extended_by_the_full_import(
    path: Path, tmp_path: Path
) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    [full] = parse(path).threads
    cut = tmp_path / path.name
    for end in range(1, len(lines), max(1, len(lines) // 40)):
        cut.write_bytes(b"".join(lines[:end]))
        for thread in parse(cut).threads:
            assert thread.id == full.id
            assert_extends(thread.messages, full.messages)


def test_appended_lines_read_from_an_offset_give_the_same_thread() -> None:
    data = SESSION.read_bytes()
    middle = data.index(b"\n", len(data) // 2) + 1
    result = ImportResult()
    records = jsonl_records(data[:middle], result) + jsonl_records(data[middle:], result)
    from_records(SESSION, records, result)

    assert dumped(result.threads) == dumped(parse(SESSION).threads)
    assert FORMATS["pi"].live == "append"
    assert FORMATS["pi"].from_records is from_records


def _v3(tmp_path: Path, entries: list[dict[str, Any]], header: dict[str, Any]) -> Path:
    path = tmp_path / "2026-06-05T05-24-28-246Z_019e963d-6bd6-7ade-8a49-256ac3391bdd.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [header, *entries]) + "\n")
    return path


def _msg(entry_id: str, parent: str | None, role: str, text: str, **more: Any) -> dict[str, Any]:
    body = {"role": role, "content": [{"type": "text", "text": text}], "timestamp": 1780637068253}
    body.update(more)
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "2026-06-05T05:24:28.254Z",
        "message": body,
    }


def test_a_v3_tree_imports_the_branch_that_was_last_written(tmp_path: Path) -> None:
    header = {
        "type": "session",
        "version": 3,
        "id": "019e963d-6bd6-7ade-8a49-256ac3391bdd",
        "timestamp": "2026-06-05T05:24:28.246Z",
        "cwd": "/tmp/work",
        "parentSession": "/home/u/.pi/agent/sessions/--tmp-work--/2026-06-01T00-00-00-000Z_11111111-2222-4333-8444-555555555555.jsonl",
        "shinyNewHeaderField": True,
    }
    entries = [
        {
            "type": "session_info",
            "id": "s1",
            "parentId": None,
            "timestamp": "2026-06-05T05:24:28.246Z",
            "name": "smoke",
        },
        _msg("u1", "s1", "user", "first question"),
        _msg(
            "a1",
            "u1",
            "assistant",
            "first answer",
            provider="openai-codex",
            model="gpt-5.5",
            usage={"input": 433, "output": 9, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 442},
        ),
        _msg("u2", "a1", "user", "abandoned follow-up"),
        _msg("a2", "u2", "assistant", "abandoned answer"),
        _msg("u3", "a1", "user", "rewound follow-up"),
        {
            "type": "a_future_entry",
            "id": "f1",
            "parentId": "u3",
            "timestamp": "2026-06-05T05:25:00.000Z",
            "payload": 1,
        },
    ]
    [thread] = parse(_v3(tmp_path, entries, header)).threads

    assert [m.content for m in thread.messages] == [
        "first question",
        "first answer",
        "rewound follow-up",
    ]
    assert thread.metadata.title == "smoke"
    assert [e["id"] for e in thread.metadata.extra["branches"]] == ["u2", "a2"]
    assert thread.metadata.extra["forked_from"] == "T-11111111-2222-4333-8444-555555555555"
    assert thread.metadata.extra["header"]["shinyNewHeaderField"] is True
    assert [e["type"] for e in thread.metadata.extra["events"]] == [
        "session_info",
        "a_future_entry",
    ]
    assert thread.messages[1].usage == {  # type: ignore[attr-defined]
        "input_tokens": 433,
        "output_tokens": 9,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "model": "gpt-5.5",
        "provider": "openai-codex",
    }
    assert thread.messages[1].extra["parentId"] == "u1"  # type: ignore[attr-defined]


def test_unknown_fields_of_a_newer_pi_are_kept(tmp_path: Path) -> None:
    lines = SESSION.read_text().splitlines()[:30]
    changed = []
    for line in lines:
        for part in line.replace('}{"type"', '}\n{"type"').split("\n"):
            entry = json.loads(part)
            entry["newTopLevel"] = 1
            if isinstance(entry.get("message"), dict):
                entry["message"]["newInMessage"] = "x"
            changed.append(json.dumps(entry))
    path = tmp_path / SESSION.name
    path.write_text("\n".join(changed) + "\n")

    [thread] = parse(path).threads

    assert all(m.extra["newInMessage"] == "x" for m in thread.messages)  # type: ignore[attr-defined]
    assert all(m.extra["newTopLevel"] == 1 for m in thread.messages)  # type: ignore[attr-defined]


def test_a_torn_last_line_and_garbage_lose_only_themselves(tmp_path: Path) -> None:
    lines = LARGE.read_bytes().splitlines(keepends=True)
    complete = tmp_path / "complete" / LARGE.name
    complete.parent.mkdir()
    complete.write_bytes(b"".join(lines[:-1]))
    damaged = tmp_path / LARGE.name
    garbage = [b'{"type": "message", "message": {"ro\n', b"\xff\xfe broken\n", b"[1]\n"]
    damaged.write_bytes(b"".join(lines[:500] + garbage + lines[500:-1]) + lines[-1][:40])

    result = parse(damaged)

    assert result.skipped == Counter(
        {"invalid_json": 1, "invalid_utf8": 1, "not_an_object": 1, "truncated_line": 1}
    )
    assert dumped(result.threads) == dumped(parse(complete).threads)


def test_detect_takes_pi_headers_only(tmp_path: Path) -> None:
    assert detect(SESSION)
    assert detect(LARGE)
    codex = next((TRANSCRIPTS / "codex-rollout").glob("*.jsonl"))
    assert not detect(codex)
    other = tmp_path / "x.jsonl"
    other.write_text('{"type": "session", "id": "1"}\n')
    assert not detect(other)


def test_default_paths_honour_pi_coding_agent_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    assert default_paths() == [tmp_path / ".pi" / "agent" / "sessions"]
    monkeypatch.setenv("PI_CODING_AGENT_DIR", str(tmp_path / "pi"))
    assert default_paths() == [tmp_path / "pi" / "sessions"]
    monkeypatch.setenv("PI_CODING_AGENT_SESSION_DIR", str(tmp_path / "elsewhere"))
    assert default_paths() == [tmp_path / "elsewhere"]
