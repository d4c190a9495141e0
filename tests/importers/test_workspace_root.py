"""Every importer that knows a session's project folder gives it a ``workspace_root``
(newcomer finding 5), on the real files of ../shared/data/transcripts: where a thread has a
``cwd``, it has a ``workspace_root`` too (the agent's own root when it records a distinct one,
else the working folder, as Codex and Claude Code do), so ``loomsync list --workspace`` and
MCP ``list_threads`` find it. Crush and OpenCode-Go store their project folder absolute
whatever path the database was named by (finding 2).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loomsync.importers import FORMATS, import_path
from tests.importers.corpus import TRANSCRIPTS, corpus_files

PI_SESSION = TRANSCRIPTS / "pi" / "session.jsonl"


def test_every_corpus_thread_with_a_cwd_has_a_workspace_root() -> None:
    checked: dict[str, int] = {}
    missing: list[str] = []
    for fmt, path in corpus_files():
        if fmt is None:
            continue
        for thread in FORMATS[fmt].parse(path).threads:
            if not thread.cwd:
                continue
            checked[fmt] = checked.get(fmt, 0) + 1
            if not thread.workspace_root:
                missing.append(f"{fmt}: {path.name}: cwd {thread.cwd}")
    assert missing == []
    # the agents that record a working folder in the corpus, each checked at least once
    assert {"pi", "codex", "claude-code", "crush", "opencode-go", "copilot-cli"} <= set(checked)


def test_pi_gets_its_working_folder_as_workspace() -> None:
    [thread] = FORMATS["pi"].parse(PI_SESSION).threads
    assert thread.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert thread.workspace_root == thread.cwd


@pytest.mark.parametrize(
    ("folder", "fmt"), [("crush", "crush"), ("opencode-go-sqlite", "opencode-go")]
)
def test_a_store_named_by_a_relative_path_gives_an_absolute_project_folder(
    folder: str, fmt: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = Path(os.path.relpath(TRANSCRIPTS / folder, tmp_path))
    assert not relative.is_absolute()
    by_relative = import_path(relative, fmt).threads
    by_absolute = import_path((TRANSCRIPTS / folder).resolve(), fmt).threads
    assert by_relative
    roots = {t.id: (t.workspace_root, t.cwd) for t in by_relative}
    assert roots == {t.id: (t.workspace_root, t.cwd) for t in by_absolute}
    for root, cwd in roots.values():
        assert root is not None
        assert Path(root).is_absolute()
        assert root == cwd
        assert Path(root).resolve() == Path(root)  # links resolved: one workspace per project
