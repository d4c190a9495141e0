"""The real session files of ../shared/data/transcripts (read in place, never copied) and
helpers the importer tests share."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loomsync.core.document.model import Message, Thread
from loomsync.importers import FORMATS

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts"
REFERENCE_THREADS = TRANSCRIPTS.parent / "threads"

#: The format each folder of the corpus holds (None: not a conversation format we import).
FOLDER_FORMATS: dict[str, str | None] = {
    "codex-rollout": "codex",
    "claude-code": "claude-code",
    "gemini-cli": "gemini-cli",
    "aider-chat-history": "aider",
    "swe-agent-traj": "swe-agent",
    "openhands-events": "openhands",
    "codex-tui-session-log": "codex-tui",
    # issue 28: each importer that lands sets its folder's format here
    "cline-sdk": "cline-sdk",
    "continue": "continue",
    "copilot-chat-vscode": "copilot-chat",
    "copilot-cli": "copilot-cli",
    "crush": "crush",
    "cursor-agent": "cursor-agent",
    "droid": "droid",
    "goose": "goose",
    "grok-build": "grok-build",
    "opencode-go-sqlite": "opencode-go",
    "opencode-storage": "opencode",
    "pi": "pi",
    "qwen-code": "qwen-code",
    "roo-code": "roo-code",
}

#: Importers whose agent left no sample file in the corpus: their tests build files from the
#: agent's published format (said in each importer's docstring and in docs/agents.md).
NO_SAMPLE: set[str] = {"cursor", "zed"}

#: Formats with no sample file in the corpus: learned from the agents' public sources, tested
#: on files their tests build (issue 28 item 1, "beyond them").
WITHOUT_SAMPLES = frozenset({"amp"})

TURN_1 = TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl"
TURN_2 = TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl"


def is_sibling(fmt: str | None, path: Path) -> bool:
    """True for a file that is part of a session but not the one ``parse`` is given (an
    opencode part, a Roo task's ``ui_messages.json``, Continue's index): its format's
    ``unit_of`` names another file, or none."""
    if fmt is None or fmt not in FORMATS or FORMATS[fmt].unit_of is None:
        return False
    unit_of = FORMATS[fmt].unit_of
    return unit_of is not None and unit_of(path) != path


def corpus_files() -> list[tuple[str | None, Path]]:
    """``(expected format, path)`` for every session file of the corpus, sorted (the sibling
    files of a multi-file session are left out: :func:`sibling_files`)."""
    files = [
        (FOLDER_FORMATS[p.relative_to(TRANSCRIPTS).parts[0]], p)
        for p in TRANSCRIPTS.rglob("*")
        if p.is_file() and p.parent != TRANSCRIPTS
    ]
    return sorted(
        ((fmt, path) for fmt, path in files if not is_sibling(fmt, path)), key=lambda i: i[1]
    )


def sibling_files(fmt: str) -> list[Path]:
    """The files of ``fmt``'s corpus folders that belong to a session without being the
    file ``parse`` is given, sorted."""
    return sorted(
        p
        for folder, name in FOLDER_FORMATS.items()
        if name == fmt
        for p in (TRANSCRIPTS / folder).rglob("*")
        if p.is_file() and is_sibling(fmt, p)
    )


def is_unit(fmt: str, path: Path) -> bool:
    """True when ``path`` is a file its format's ``parse`` is meant for: not a sidecar of a
    session folder that ``unit_of`` maps to another file (``workspace.yaml`` →
    ``events.jsonl``)."""
    from loomsync.importers import FORMATS

    unit_of = FORMATS[fmt].unit_of
    return unit_of is None or unit_of(path) in (None, path)


def supported_files() -> list[tuple[str, Path]]:
    """``(format, path)`` for the corpus files of a supported format, sidecars left out
    (they are read with their session file)."""
    return [(fmt, path) for fmt, path in corpus_files() if fmt is not None and is_unit(fmt, path)]


def case_id(path: Path) -> str:
    """A short test id for a corpus file."""
    return str(path.relative_to(TRANSCRIPTS))


def dumped(threads: list[Thread]) -> list[dict[str, Any]]:
    """The dict form of threads, for comparing whole documents (Python mode: a number kept as
    written, a JsonNumber, compares by its text and has no JSON-mode form)."""
    return [t.model_dump() for t in threads]


def message_dicts(thread: Thread) -> list[dict[str, Any]]:
    """The dict form of a thread's messages (see :func:`dumped`)."""
    return [m.model_dump() for m in thread.messages]


def assert_extends(old: list[Message], new: list[Message]) -> None:
    """``new`` continues ``old``: every message of ``old`` is in ``new`` unchanged, except that
    the last one may have grown (an assistant message cut in the middle of its turn gains
    text or tool calls when the rest of the turn arrives)."""
    assert len(new) >= len(old)
    if not old:
        return
    assert [m.model_dump() for m in new[: len(old) - 1]] == [m.model_dump() for m in old[:-1]]
    before, after = old[-1], new[len(old) - 1]
    if before.model_dump() == after.model_dump():
        return
    assert before.role == after.role == "assistant"
    assert before.created_at == after.created_at
    assert after.content.startswith(before.content)
    calls_before = [c.model_dump() for c in before.tool_calls or []]
    calls_after = [c.model_dump() for c in after.tool_calls or []]
    assert calls_after[: len(calls_before)] == calls_before
