"""docs/agents.md's table is what the agents' real files give (issue 28: "filled from the
tests, not from hopes"), and every importer declares in ``records`` what its files show.

The table is computed by tests/importers/agents_table.py from ../shared/data/transcripts
(each registered importer over its corpus folders); regenerate it with
``python -m tests.importers.agents_table --write``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loomsync.importers import FORMATS
from tests.importers import agents_table
from tests.importers.agents_table import BUILT, DOC, block, built, capabilities, corpus_folders

ROOT = Path(__file__).resolve().parents[2]
WORDS = ("messages", "tool calls", "usage", "git", "subagents", "lineage")


def test_the_table_in_docs_agents_md_is_the_one_the_real_files_give() -> None:
    document = DOC.read_text(encoding="utf-8")
    assert block() in document, (
        "docs/agents.md is out of date: run `python -m tests.importers.agents_table --write`"
    )


def test_every_registered_importer_has_a_row() -> None:
    missing = [name for name in FORMATS if not corpus_folders(name) and name not in BUILT]
    assert missing == [], "set its corpus folder in tests/importers/corpus.py FOLDER_FORMATS"


@pytest.mark.parametrize("name", list(FORMATS))
def test_records_declares_exactly_what_the_files_show(name: str) -> None:
    importer = FORMATS[name]
    shown = capabilities(importer).records()
    proved = {word for word in WORDS if built(name, word)}
    assert set(importer.records) <= set(WORDS)
    assert set(importer.records) == shown | proved


def test_each_capability_proved_on_built_files_names_a_test_that_exists() -> None:
    for test in BUILT.values():
        assert (ROOT / test).is_file(), test


def test_a_generated_table_replaces_the_old_block_and_keeps_the_rest() -> None:
    old = f"intro\n{agents_table.BEGIN}\n| stale |\n{agents_table.END}\noutro\n"
    new = agents_table.written(old)
    assert new.startswith("intro\n")
    assert new.endswith("\noutro\n")
    assert "| stale |" not in new
    assert agents_table.HEADER in new
