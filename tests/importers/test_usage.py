"""Token usage per message (issue 28 item 5) for the existing importers, on the real files of
../shared/data/transcripts, in the one shape of loomsync/importers/usage.py.

Each agent's figures are checked against what its file says by another route: Codex's
per-call ``last_token_usage`` must add up to its own running ``total_token_usage``; Claude
Code's per-response ``message.usage`` (the last line of each response) to ours; Gemini CLI's
``tokens`` message by message.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS
from loomsync.importers.usage import COUNTS, of
from tests.importers.corpus import TRANSCRIPTS

ROLLOUTS = sorted((TRANSCRIPTS / "codex-rollout").glob("*.jsonl"))
GEMINI = next((TRANSCRIPTS / "gemini-cli").glob("*.json"))


def _lines(path: Path) -> list[dict[str, Any]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def _sums(path: Path, name: str) -> Counter[str]:
    total: Counter[str] = Counter()
    for thread in FORMATS[name].parse(path).threads:
        for message in thread.messages:
            found = of(message)
            if found is not None:
                assert message.role == "assistant"
                assert set(found) <= {*COUNTS, "model", "provider"}
                total.update({k: v for k, v in found.items() if k in COUNTS})
    return total


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[:30])
def test_codex_usage_per_message_adds_up_to_the_rollouts_running_total(path: Path) -> None:
    last_total: dict[str, int] | None = None
    for record in _lines(path):
        payload = record.get("payload") or {}
        if payload.get("type") == "token_count" and payload.get("info"):
            last_total = payload["info"]["total_token_usage"]
    ours = _sums(path, "codex")
    if last_total is None:  # a trimmed rollout without token_count events: no usage at all
        assert ours == Counter()
        return
    assert ours["input_tokens"] + ours["cache_read_tokens"] == last_total["input_tokens"]
    assert ours["cache_read_tokens"] == last_total["cached_input_tokens"]
    assert ours["output_tokens"] == last_total["output_tokens"]
    assert ours["reasoning_tokens"] == last_total["reasoning_output_tokens"]


def test_codex_usage_names_the_model_and_provider_of_the_turn() -> None:
    [thread] = FORMATS["codex"].parse(ROLLOUTS[1]).threads
    found = [of(m) for m in thread.messages if of(m) is not None]
    assert len(found) > 100
    assert {(u["model"], u["provider"]) for u in found if u} == {(thread.model, thread.provider)}


@pytest.mark.parametrize(
    "name", ["tool_heavy.jsonl", "5c187f31.jsonl", "b68cb16e.jsonl", "session-624a4a58.jsonl"]
)
def test_claude_code_usage_is_each_responses_last_line_counted_once_even_when_split(
    name: str,
) -> None:
    path = TRANSCRIPTS / "claude-code" / name
    last: dict[str, dict[str, Any]] = {}
    for record in _lines(path):
        message = record.get("message") or {}
        if record.get("type") == "assistant" and isinstance(message.get("usage"), dict):
            last[message.get("id") or record["uuid"]] = message["usage"]
    want = Counter(
        {
            "input_tokens": sum(u["input_tokens"] for u in last.values()),
            "output_tokens": sum(u["output_tokens"] for u in last.values()),
            "cache_read_tokens": sum(u["cache_read_input_tokens"] for u in last.values()),
            "cache_write_tokens": sum(u["cache_creation_input_tokens"] for u in last.values()),
        }
    )
    assert _sums(path, "claude-code") == +want


def test_a_claude_response_split_by_a_tool_result_is_counted_once() -> None:
    path = TRANSCRIPTS / "claude-code" / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
    threads = FORMATS["claude-code"].parse(path).threads
    assistants = [m for t in threads for m in t.messages if m.role == "assistant"]
    with_usage = [m for m in assistants if of(m) is not None]
    inputs = [m for m in with_usage if "input_tokens" in (of(m) or {})]
    assert 0 < len(inputs) < len(with_usage) <= len(assistants)  # later parts: output only
    assert all((of(m) or {}).get("model", "").startswith("claude") for m in with_usage)


def test_gemini_usage_is_each_messages_tokens_in_the_shared_shape() -> None:
    document = json.loads(GEMINI.read_text())
    tokens = [m["tokens"] for m in document["messages"] if m.get("tokens")]
    [thread] = FORMATS["gemini-cli"].parse(GEMINI).threads
    found = [u for m in thread.messages if (u := of(m)) is not None]
    assert len(found) == len(tokens)
    for ours, theirs in zip(found, tokens, strict=True):
        assert ours["input_tokens"] + ours["cache_read_tokens"] == theirs["input"]
        assert ours["output_tokens"] == theirs["output"] + theirs["thoughts"]
        assert ours["reasoning_tokens"] == theirs["thoughts"]
        assert ours["provider"] == "google"


def test_a_message_without_recorded_usage_has_none_rather_than_zeros() -> None:
    path = (
        TRANSCRIPTS
        / "codex-rollout"
        / "rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"
    )
    [thread] = FORMATS["codex"].parse(path).threads
    assert [of(m) for m in thread.messages] == [None] * len(thread.messages)
