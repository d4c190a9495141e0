"""Property tests: whatever the bytes (garbage lines, real records with fields replaced by
random JSON, random documents), an importer returns a result and never raises, and every
thread it returns is a valid document that serialises."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomsync.core.document.model import Thread
from loomsync.importers import FORMATS, ImportResult
from tests.importers.corpus import TRANSCRIPTS

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KEYS = [
    "type", "payload", "message", "content", "role", "uuid", "parentUuid", "logicalParentUuid",
    "sessionId", "isSidechain", "isMeta", "isCompactSummary", "timestamp", "id", "name",
    "call_id", "arguments", "input", "output", "text", "tool_use_id", "tool_calls", "toolCalls",
    "messages", "summary", "leafUuid", "agentId", "cwd", "gitBranch", "version", "model",
    "namespace", "git", "commit_hash", "history", "action", "args", "observation", "source",
    "tool_call_metadata", "tool_call_id", "result", "functionResponse", "response", "startTime",
]  # fmt: skip
WORDS = [
    "user", "assistant", "developer", "message", "function_call", "function_call_output",
    "custom_tool_call", "session_meta", "response_item", "event_msg", "turn_context",
    "user_message", "agent_message", "tool_use", "tool_result", "text", "thinking", "summary",
    "gemini", "info", "u1", "u2", "u3", "call_1", "2026-01-02T16:39:45.350Z", "agent", "run",
    "finish", "system", "tool", "<environment_context>x</environment_context>",
]  # fmt: skip

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(WORDS)
)
keys = st.sampled_from(KEYS) | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=20,
)
objects = st.dictionaries(keys, json_values, max_size=8)
garbage_lines = st.one_of(
    objects.map(lambda o: json.dumps(o).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.text(max_size=40).map(str.encode),
    st.binary(max_size=40),
)


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _check(result: ImportResult) -> None:
    assert isinstance(result, ImportResult)
    for thread in result.threads:
        again = Thread.model_validate_json(thread.model_dump_json())
        assert again.id == thread.id
        assert len(again.messages) == len(thread.messages)


def _mutate(data: st.DataObject, value: Any, depth: int = 0) -> Any:
    """``value`` with one place inside it replaced by random JSON (or a key dropped)."""
    if isinstance(value, dict) and value and depth < 6 and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        if data.draw(st.integers(0, 9)) == 0:
            return {k: v for k, v in value.items() if k != key}
        return {**value, key: _mutate(data, value[key], depth + 1)}
    if isinstance(value, list) and value and depth < 6 and data.draw(st.booleans()):
        index = data.draw(st.integers(0, len(value) - 1))
        return [*value[:index], _mutate(data, value[index], depth + 1), *value[index + 1 :]]
    return data.draw(json_values)


def _real_lines(name: str) -> list[dict[str, Any]]:
    text = (TRANSCRIPTS / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


CODEX = _real_lines(
    "codex-rollout/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
)
CLAUDE = _real_lines("claude-code/e9fb405b-turn-1.jsonl") + _real_lines("claude-code/short.jsonl")


@pytest.mark.parametrize("fmt", ["codex", "claude-code"])
@SETTINGS
@given(lines=st.lists(garbage_lines, max_size=12))
def test_random_garbage_lines_never_raise(fmt: str, lines: list[bytes], folder: Path) -> None:
    path = folder / f"{fmt}.jsonl"
    path.write_bytes(b"\n".join(lines))
    _check(FORMATS[fmt].parse(path))


@pytest.mark.parametrize(("fmt", "records"), [("codex", CODEX), ("claude-code", CLAUDE)])
@SETTINGS
@given(data=st.data())
def test_real_lines_with_random_fields_never_raise(
    fmt: str, records: list[dict[str, Any]], data: st.DataObject, folder: Path
) -> None:
    mutated = list(records)
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(mutated) - 1))
        mutated[index] = _mutate(data, mutated[index])
    path = folder / f"mutated-{fmt}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in mutated), encoding="utf-8")
    _check(FORMATS[fmt].parse(path))


DOCUMENTS = [
    ("gemini-cli", "gemini-cli/session-2025-12-01T21-45-5b959dae.json"),
    ("swe-agent", "swe-agent-traj/function_calling_simple.traj"),
    ("swe-agent", "swe-agent-traj/pydicom__pydicom-1458.traj"),
    ("openhands", "openhands-events/basic_gui_mode.json"),
]


@pytest.mark.parametrize(("fmt", "name"), DOCUMENTS)
@SETTINGS
@given(data=st.data())
def test_real_documents_with_random_fields_never_raise(
    fmt: str, name: str, data: st.DataObject, folder: Path
) -> None:
    document = json.loads((TRANSCRIPTS / name).read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 4))):
        document = _mutate(data, document)
    path = folder / Path(name).name
    path.write_text(json.dumps(document), encoding="utf-8")
    _check(FORMATS[fmt].parse(path))


@pytest.mark.parametrize("fmt", list(FORMATS))
@SETTINGS
@given(content=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_random_files_never_raise(fmt: str, content: bytes, folder: Path) -> None:
    path = folder / f"random-{fmt}.json"
    path.write_bytes(content)
    _check(FORMATS[fmt].parse(path))


aider_lines = st.sampled_from(
    [
        "# aider chat started at 2025-01-01 00:00:00",
        "# aider chat started at 2025-13-45 99:99:99",
        "#### a question  ",
        "####",
        "> a note  ",
        "> a note that goes on",
        ">",
        "an answer",
        "<think>",
        "</think>",
        "<thinking-content-0a1b>",
        ">>>>>>> REPLACE",
        "",
    ]
) | st.text(max_size=30)


@SETTINGS
@given(lines=st.lists(aider_lines, max_size=30))
def test_random_aider_histories_never_raise(lines: list[str], folder: Path) -> None:
    path = folder / ".aider.chat.history.md"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    _check(FORMATS["aider"].parse(path))
