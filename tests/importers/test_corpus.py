"""Every real session file of a supported format imports cleanly, and its messages by role
match counts made here, independently, from the raw file."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from loomsync.importers import FORMATS, detect_format
from tests.importers.corpus import (
    NO_SAMPLE,
    WITHOUT_SAMPLES,
    case_id,
    corpus_files,
    supported_files,
)

CODEX_PREAMBLES = (
    "# AGENTS.md instructions",
    "<environment_context>",
    "<permissions instructions>",
    "<user_instructions>",
    "<collaboration_mode>",
    "<skills_instructions>",
    "<plugins_instructions>",
)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def count_codex(path: Path) -> Counter[str]:
    """Users: response-item user messages with a non-preamble text (event user_messages only
    when there are none); assistants: assistant messages, plus one per run of tool calls not
    directly after an assistant message; tools: call outputs."""
    lines = _jsonl(path)
    items = [(line["type"], line["payload"]) for line in lines]
    has = {p.get("role") for t, p in items if t == "response_item" and p.get("type") == "message"}
    counts: Counter[str] = Counter()
    previous = ""
    for line_type, payload in items:
        kind = payload.get("type")
        if line_type == "response_item" and kind == "message" and payload["role"] == "user":
            texts = [c["text"] for c in payload["content"] if "text" in c]
            if any(not text.lstrip().startswith(CODEX_PREAMBLES) for text in texts):
                counts["user"] += 1
                previous = "user"
        elif line_type == "response_item" and kind == "message" and payload["role"] == "assistant":
            counts["assistant"] += 1
            previous = "assistant"
        elif line_type == "response_item" and kind in ("function_call", "custom_tool_call"):
            if previous not in ("assistant", "call"):
                counts["assistant"] += 1
            previous = "call"
        elif line_type == "response_item" and kind in (
            "function_call_output",
            "custom_tool_call_output",
        ):
            counts["tool"] += 1
            previous = "tool"
        elif line_type == "event_msg" and kind == "user_message" and "user" not in has:
            counts["user"] += 1
            previous = "user"
        elif line_type == "event_msg" and kind == "agent_message" and "assistant" not in has:
            counts["assistant"] += 1
            previous = "assistant"
    return counts


def count_claude(path: Path) -> Counter[str]:
    """Over all threads of the file: one assistant message per run of lines with the same
    message.id (a user line in between starts a new run); a user line is a user (or, when
    injected by the harness, system) message for its text and a tool message per
    tool_result block. Sidechain lines are a conversation of their own."""
    counts: Counter[str] = Counter()
    previous: dict[bool, object] = {}
    for line in _jsonl(path):
        side = bool(line.get("isSidechain"))
        if line.get("type") == "assistant":
            if previous.get(side) != line["message"]["id"]:
                counts["assistant"] += 1
            previous[side] = line["message"]["id"]
        elif line.get("type") == "user":
            previous[side] = None
            role = "system" if line.get("isMeta") or line.get("isCompactSummary") else "user"
            content = line["message"]["content"]
            if isinstance(content, str):
                counts[role] += 1
                continue
            counts["tool"] += sum(block["type"] == "tool_result" for block in content)
            if any(block["type"] != "tool_result" for block in content):
                counts[role] += 1
    return counts


def count_gemini(path: Path) -> Counter[str]:
    """user → user, gemini → assistant plus one tool message per tool call."""
    counts: Counter[str] = Counter()
    for message in json.loads(path.read_text(encoding="utf-8"))["messages"]:
        if message["type"] == "user":
            counts["user"] += 1
        elif message["type"] == "gemini":
            counts["assistant"] += 1
            counts["tool"] += len(message.get("toolCalls", []))
        elif message["type"] in ("info", "warning", "error"):
            counts["system"] += 1
    return counts


THINKING = re.compile(r"<(think|thinking-content-\w+)>.*?</\1>", re.DOTALL)


def count_aider(path: Path) -> Counter[str]:
    """Per session: runs of ``####`` lines are user messages, runs of aider notes (``>``,
    continued until a line ending in two spaces) system messages, and runs of other lines
    that hold more than reasoning are assistant messages; sessions without a user or an
    assistant message are not threads."""
    total: Counter[str] = Counter()
    text = path.read_text(encoding="utf-8")
    for session in re.split(r"^# aider chat started at .*$", text, flags=re.MULTILINE)[1:]:
        runs: list[tuple[str, list[str]]] = []
        in_note = False
        for line in session.split("\n"):
            if line.startswith("####"):
                role, in_note = "user", False
            elif line.startswith(">") and not line.startswith(">>>>>>>"):
                role, in_note = "system", line.strip() != ">" and not line.endswith("  ")
            elif in_note:
                role, in_note = "system", not line.endswith("  ")
            elif not line.strip():
                continue
            else:
                role = "assistant"
            if runs and runs[-1][0] == role:
                runs[-1][1].append(line)
            else:
                runs.append((role, [line]))
        counts = Counter(
            role for role, lines in runs if THINKING.sub("", "\n".join(lines)).strip(" >\n#")
        )
        if counts["user"] or counts["assistant"]:
            total.update(counts)
    return total


def count_swe_agent(path: Path) -> Counter[str]:
    """History without the demonstration; an old-style observation (a user message after an
    assistant action without tool calls) is a tool message."""
    counts: Counter[str] = Counter()
    acted = False
    for entry in json.loads(path.read_text(encoding="utf-8"))["history"]:
        if entry.get("is_demo"):
            continue
        role = entry["role"]
        if role == "user" and acted:
            role = "tool"
        counts[role] += 1
        acted = role == "assistant" and bool(entry.get("action")) and not entry.get("tool_calls")
    return counts


def count_openhands(path: Path) -> Counter[str]:
    """Message actions by source; one assistant message per model response that made tool
    calls, plus finish; one tool message per observation answering a tool call."""
    counts: Counter[str] = Counter()
    responses = set()
    for event in json.loads(path.read_text(encoding="utf-8")):
        metadata = event.get("tool_call_metadata")
        if event.get("action") == "message":
            counts["user" if event["source"] == "user" else "assistant"] += 1
        elif event.get("action") == "finish":
            counts["assistant"] += 1
        elif event.get("action") and metadata:
            responses.add(metadata["model_response"]["id"])
        elif event.get("observation") and metadata:
            counts["tool"] += 1
    counts["assistant"] += len(responses)
    return counts


def count_codex_tui(path: Path) -> Counter[str]:
    """Roles from the TUI log's events: one user message per Enter that submits typed text
    (not a slash command), one assistant message per agent_message and per command or patch
    that starts right after a tool output, one tool message per command or patch end."""
    counts: Counter[str] = Counter()
    typed, last, waiting = "", None, False
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["kind"] == "key_event" and "Press" in record["event"] and not waiting:
            if "code: Enter" in record["event"]:
                if typed.strip() and not typed.startswith("/"):
                    counts["user"] += 1
                    last = "user"
                typed = ""
            elif "code: Backspace" in record["event"]:
                typed = typed[:-1]
            elif "code: Char(" in record["event"]:
                typed += "x" if "Char('/')" not in record["event"] else "/"
        elif record["kind"] == "slash_command" and last == "user":
            counts["user"] -= 1  # the line was a command (/new), not a message
            last = None
        elif record["kind"] == "op" and record["payload"].get("type") == "exec_approval":
            waiting = False
        elif record["kind"] == "codex_event":
            kind = record["payload"]["msg"]["type"]
            if kind == "exec_approval_request":
                waiting = True
            elif kind == "agent_message":
                counts["assistant"] += 1
                last = "assistant"
            elif kind in ("exec_command_begin", "patch_apply_begin"):
                if last != "assistant":
                    counts["assistant"] += 1
                last = "assistant"
            elif kind in ("exec_command_end", "patch_apply_end"):
                counts["tool"] += 1
                last = "tool"
    return counts


def _sql(path: Path, query: str) -> list[tuple[Any, ...]]:
    """Rows of ``query`` on the database ``path`` opened in place, immutable (no side file)."""
    with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro&immutable=1", uri=True)) as db:
        return db.execute(query).fetchall()


def count_gostore(path: Path) -> Counter[str]:
    """Crush / OpenCode-Go: user and assistant rows of sessions; one tool message per
    ``tool_result`` part of the tool rows (SQLite's own JSON functions)."""
    counts: Counter[str] = Counter(
        dict(_sql(path, "SELECT role, count(*) FROM messages WHERE role != 'tool' GROUP BY role"))
    )
    counts["tool"] = _sql(
        path,
        "SELECT count(*) FROM messages, json_each(messages.parts)"
        " WHERE role = 'tool' AND json_extract(json_each.value, '$.type') = 'tool_result'",
    )[0][0]
    return counts


def count_goose(path: Path) -> Counter[str]:
    """Goose: messages by role (the corpus database has no message row at all)."""
    return Counter(dict(_sql(path, "SELECT role, count(*) FROM messages GROUP BY role")))


def count_cursor_agent(path: Path) -> Counter[str]:
    """cursor-agent: transcript lines by role (each line one message, tool calls inline);
    the fixture store's blobs (none)."""
    if path.suffix == ".db":
        return Counter({"message blob": _sql(path, "SELECT count(*) FROM blobs")[0][0]})
    return Counter(line["role"] for line in _jsonl(path))


def count_opencode(path: Path) -> Counter[str]:
    """A session's message files: user → user, assistant → assistant (a compaction summary
    → system), plus one tool message per tool part of an assistant message."""
    counts: Counter[str] = Counter()
    storage = path.parents[2]
    for file in (storage / "message" / path.stem).glob("*.json"):
        info = json.loads(file.read_text(encoding="utf-8"))
        if info["role"] == "user":
            counts["user"] += 1
            continue
        counts["system" if info.get("summary") is True else "assistant"] += 1
        for part in (storage / "part" / info["id"]).glob("*.json"):
            counts["tool"] += json.loads(part.read_text(encoding="utf-8"))["type"] == "tool"
    return counts


def _pi_entries(path: Path) -> list[dict[str, Any]]:
    """Pi lines, a line holding two entries glued together read as both."""
    entries: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        entries.extend(
            json.loads(f"[{part}]")[0] for part in re.split(r"(?<=\})(?=\{\"type\")", line)
        )
    return entries


def count_pi(path: Path) -> Counter[str]:
    """message entries by role (user and bashExecution → user, toolResult → tool, other
    roles → system), compaction and branch_summary entries → system."""
    roles = {
        "user": "user",
        "bashExecution": "user",
        "assistant": "assistant",
        "toolResult": "tool",
    }
    counts: Counter[str] = Counter()
    for entry in _pi_entries(path):
        if entry["type"] == "message":
            counts[roles.get(entry["message"]["role"], "system")] += 1
        elif entry["type"] in ("compaction", "branch_summary"):
            counts["system"] += 1
    return counts


def count_continue(path: Path) -> Counter[str]:
    """History items by message role."""
    history = json.loads(path.read_text(encoding="utf-8"))["history"]
    return Counter(item["message"]["role"] for item in history)


def count_cline_sdk(path: Path) -> Counter[str]:
    """Assistant entries → assistant; user entries → one tool message per tool_result block
    and one user message when any other block is left."""
    log = json.loads(path.with_name(path.stem + ".messages.json").read_text(encoding="utf-8"))
    counts: Counter[str] = Counter()
    for entry in log["messages"]:
        if entry["role"] == "assistant":
            counts["assistant"] += 1
            continue
        kinds = [block["type"] for block in entry["content"]]
        counts["tool"] += kinds.count("tool_result")
        counts["user"] += any(kind != "tool_result" for kind in kinds)
    return counts


def count_roo(path: Path) -> Counter[str]:
    """Assistant entries → assistant (isSummary → system); a user entry opening with
    ``[tool …] Result:`` → tool, plus user when new instructions follow; else user."""
    counts: Counter[str] = Counter()
    for entry in json.loads(path.read_text(encoding="utf-8")):
        if entry["role"] == "assistant":
            counts["system" if entry.get("isSummary") else "assistant"] += 1
            continue
        texts = [b["text"] for b in entry["content"] if not b["text"].startswith("<environment")]
        if re.match(r"\[\w+( for .*)?\] Result:", texts[0]):
            counts["tool"] += 1
            counts["user"] += any(
                t.lstrip().startswith("New instructions for task") for t in texts[1:]
            )
        else:
            counts["user"] += 1
    return counts


def count_copilot_cli(path: Path) -> Counter[str]:
    """user.message → user, assistant.message → assistant, tool.execution_complete → tool,
    session.error / session.warning → system."""
    roles = {
        "user.message": "user",
        "assistant.message": "assistant",
        "tool.execution_complete": "tool",
        "session.error": "system",
        "session.warning": "system",
    }
    return Counter(roles[line["type"]] for line in _jsonl(path) if line["type"] in roles)


def count_copilot_chat(path: Path) -> Counter[str]:
    """Per request: a user message; one assistant message per tool-call round and a tool
    message per call in it, or (no rounds) one assistant message plus a tool message per
    toolInvocationSerialized part."""
    counts: Counter[str] = Counter()
    for request in json.loads(path.read_text(encoding="utf-8"))["requests"]:
        counts["user"] += 1
        rounds = request.get("result", {}).get("metadata", {}).get("toolCallRounds")
        if rounds:
            counts["assistant"] += len(rounds)
            counts["tool"] += sum(len(r["toolCalls"]) for r in rounds)
        else:
            parts = request["response"]
            tools = sum(p.get("kind") == "toolInvocationSerialized" for p in parts)
            text = "".join(p["value"] for p in parts if "kind" not in p and "value" in p)
            counts["assistant"] += bool(text.strip() or tools)
            counts["tool"] += tools
    return counts


def count_qwen(path: Path) -> Counter[str]:
    """user → user, assistant → assistant, one tool message per functionResponse part."""
    counts: Counter[str] = Counter()
    for line in _jsonl(path):
        if line["type"] in ("user", "assistant"):
            counts[line["type"]] += 1
        elif line["type"] == "tool_result":
            counts["tool"] += sum("functionResponse" in p for p in line["message"]["parts"])
    return counts


def count_droid(path: Path) -> Counter[str]:
    """Message lines: assistant → assistant; a user line → a tool message per tool_result
    block and a user message when it has text."""
    counts: Counter[str] = Counter()
    for line in _jsonl(path):
        if line["type"] != "message":
            continue
        blocks = line["message"]["content"]
        if line["message"]["role"] == "assistant":
            counts["assistant"] += 1
            continue
        counts["tool"] += sum(b["type"] == "tool_result" for b in blocks)
        if any(b["type"] == "text" for b in blocks):
            counts["user"] += 1
    return counts


def count_grok(path: Path) -> Counter[str]:
    """system and injected project instructions → system, user → user, assistant and
    backend tool calls → assistant, tool_result → tool; reasoning is no message."""
    counts: Counter[str] = Counter()
    for line in _jsonl(path):
        kind = line["type"]
        if kind == "system" or line.get("synthetic_reason") == "project_instructions":
            counts["system"] += 1
        elif kind in ("assistant", "backend_tool_call"):
            counts["assistant"] += 1
        elif kind in ("user", "tool_result"):
            counts["user" if kind == "user" else "tool"] += 1
    return counts


COUNTERS: dict[str, Callable[[Path], Counter[str]]] = {
    "crush": count_gostore,
    "opencode-go": count_gostore,
    "goose": count_goose,
    "cursor-agent": count_cursor_agent,
    "opencode": count_opencode,
    "pi": count_pi,
    "continue": count_continue,
    "cline-sdk": count_cline_sdk,
    "roo-code": count_roo,
    "codex-tui": count_codex_tui,
    "codex": count_codex,
    "claude-code": count_claude,
    "gemini-cli": count_gemini,
    "aider": count_aider,
    "swe-agent": count_swe_agent,
    "openhands": count_openhands,
    "copilot-cli": count_copilot_cli,
    "copilot-chat": count_copilot_chat,
    "qwen-code": count_qwen,
    "droid": count_droid,
    "grok-build": count_grok,
}

SUPPORTED = supported_files()


def test_every_format_has_real_files_in_the_corpus() -> None:
    assert {fmt for fmt, _ in SUPPORTED} == set(FORMATS) - NO_SAMPLE - WITHOUT_SAMPLES
    assert NO_SAMPLE | WITHOUT_SAMPLES <= set(FORMATS)


@pytest.mark.parametrize(("expected", "path"), corpus_files(), ids=lambda v: getattr(v, "name", v))
def test_detect_format_names_the_format_of_each_corpus_file(
    expected: str | None, path: Path
) -> None:
    assert detect_format(path) == expected


@pytest.mark.parametrize(("fmt", "path"), SUPPORTED, ids=[case_id(p) for _, p in SUPPORTED])
def test_real_file_imports_cleanly_with_independently_counted_roles(fmt: str, path: Path) -> None:
    result = FORMATS[fmt].parse(path)

    assert result.warnings == []
    assert result.skipped == Counter()
    expected = +COUNTERS[fmt](path)
    assert bool(result.threads) == bool(expected)  # an empty store imports into nothing
    got = Counter(m.role for thread in result.threads for m in thread.messages)
    assert got == expected
    for thread in result.threads:
        source = thread.metadata.extra["source"]
        assert source["agent"] == fmt
        assert source["file"] == path.name
        assert thread.messages
