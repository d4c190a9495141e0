"""The registry: default paths, discovery, detection and importing a whole folder."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import loomsync.importers
from loomsync.importers import FORMATS, detect_format, import_path
from tests.importers.corpus import TRANSCRIPTS, supported_files


def test_registry_names_every_format_once() -> None:
    assert list(FORMATS) == [
        "codex",
        "qwen-code",
        "claude-code",
        "gemini-cli",
        "amp",
        "aider",
        "copilot-cli",
        "crush",
        "opencode-go",
        "goose",
        "cursor-agent",
        "cursor",
        "copilot-chat",
        "zed",
        "droid",
        "swe-agent",
        "grok-build",
        "openhands",
        "codex-tui",
        "opencode",
        "pi",
        "cline-sdk",
        "roo-code",
        "continue",
    ]
    assert all(importer.name == name for name, importer in FORMATS.items())


def test_importing_the_importers_never_imports_the_server() -> None:
    code = (
        "import sys, loomsync.importers; "
        "print(sorted(m for m in sys.modules if m == 'app' or m.startswith('app.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)

    assert done.stdout.strip() == "[]"
    assert loomsync.importers.__all__ == [
        "BROKEN",
        "FORMATS",
        "ImportResult",
        "Importer",
        "detect_format",
        "import_path",
        "parse_file",
    ]


def test_default_paths_are_expanded_from_home_at_call_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)

    assert FORMATS["codex"].default_paths() == [
        tmp_path / ".codex" / "sessions",
        tmp_path / ".codex" / "archived_sessions",
    ]
    assert FORMATS["claude-code"].default_paths() == [tmp_path / ".claude" / "projects"]
    assert FORMATS["gemini-cli"].default_paths() == [tmp_path / ".gemini" / "tmp"]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_discover_finds_exactly_the_files_of_its_format_under_a_folder(fmt: str) -> None:
    expected = sorted(path for name, path in supported_files() if name == fmt)

    assert FORMATS[fmt].discover(TRANSCRIPTS) == expected


def test_discover_returns_a_named_file_and_nothing_for_a_missing_path(tmp_path: Path) -> None:
    path = TRANSCRIPTS / "claude-code" / "short.jsonl"

    assert FORMATS["claude-code"].discover(path) == [path]
    assert FORMATS["claude-code"].discover(tmp_path / "missing") == []


def test_a_file_of_no_known_format_is_not_detected_and_is_reported(tmp_path: Path) -> None:
    unknown = tmp_path / "events.jsonl"
    unknown.write_text('{"event": "click", "at": 1}\n')

    assert detect_format(unknown) is None
    assert detect_format(tmp_path) is None
    result = import_path(unknown)
    assert result.threads == []
    assert result.warnings == [f"{unknown}: not a session file of a known format"]


def test_importing_the_whole_corpus_folder_reads_each_file_once() -> None:
    result = import_path(TRANSCRIPTS)
    one_by_one = [t for fmt, path in supported_files() for t in FORMATS[fmt].parse(path).threads]

    assert result.warnings == []
    assert result.skipped == Counter()
    assert sorted(str(t.id) for t in result.threads) == sorted(str(t.id) for t in one_by_one)
    duplicated = [i for i, n in Counter(t.id for t in result.threads).items() if n > 1]
    # Both captures of the e9fb405b session carry its id: a store keeps the longer one.
    assert duplicated == ["T-e9fb405b-169f-40eb-9396-7e75076f045d"]


def test_import_path_with_a_format_reads_only_that_format() -> None:
    result = import_path(TRANSCRIPTS, format="gemini-cli")

    assert [t.id for t in result.threads] == ["T-5b959dae-8655-4cd1-b10f-720b8c336ea2"]
