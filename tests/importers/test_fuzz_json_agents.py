"""The JSON agents' importers never raise: real Pi lines, Continue / Cline / Roo documents
and opencode storage files with random values put in random places (hypothesis), and every
thread they make survives the document codec (numbers kept as written included)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loomsync.core.document import codec
from loomsync.importers import FORMATS, ImportResult
from tests.importers.corpus import TRANSCRIPTS
from tests.importers.test_fuzz import SETTINGS, _mutate

PI = [
    json.loads(line)
    for line in (TRANSCRIPTS / "pi" / "large-session.jsonl").read_text().splitlines()[:80]
]
DOCUMENTS = [
    ("continue", "continue/continuedev__continue/sessions/89004c9d-6d6f-4786-83e0-a9f61c80bf44.json", "s.json"),
    ("cline-sdk", "cline-sdk/1784094124598_rruoq/1784094124598_rruoq.messages.json", "1_a.messages.json"),
    ("roo-code", "roo-code/natural-already-condensed/api_conversation_history.json", "api_conversation_history.json"),
]  # fmt: skip
OPENCODE = TRANSCRIPTS / "opencode-storage" / "jwp23__dotfiles" / "storage"


@pytest.fixture(scope="module")
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _check(result: ImportResult) -> None:
    assert isinstance(result, ImportResult)
    for thread in result.threads:
        again = codec.decode_thread(codec.encode_thread(thread, pretty=False))
        assert again.id == thread.id
        assert len(again.messages) == len(thread.messages)


@SETTINGS
@given(data=st.data())
def test_real_pi_lines_with_random_fields_never_raise(data: st.DataObject, folder: Path) -> None:
    mutated = list(PI)
    for _ in range(data.draw(st.integers(1, 4))):
        index = data.draw(st.integers(0, len(mutated) - 1))
        mutated[index] = _mutate(data, mutated[index])
    path = folder / "pi.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in mutated), encoding="utf-8")
    _check(FORMATS["pi"].parse(path))


@pytest.mark.parametrize(("fmt", "name", "target"), DOCUMENTS, ids=[d[0] for d in DOCUMENTS])
@SETTINGS
@given(data=st.data())
def test_real_documents_with_random_fields_never_raise(
    fmt: str, name: str, target: str, data: st.DataObject, folder: Path
) -> None:
    document: Any = json.loads((TRANSCRIPTS / name).read_text(encoding="utf-8"))
    for _ in range(data.draw(st.integers(1, 4))):
        document = _mutate(data, document)
    path = folder / fmt / target
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    _check(FORMATS[fmt].parse(path))


@pytest.fixture(scope="module")
def storage(folder: Path) -> Path:
    root = folder / "opencode" / "storage"
    shutil.copytree(OPENCODE, root)
    return root


@SETTINGS
@given(data=st.data())
def test_opencode_files_with_random_fields_never_raise(data: st.DataObject, storage: Path) -> None:
    files = sorted(p for p in OPENCODE.rglob("*.json"))
    chosen = data.draw(st.lists(st.sampled_from(files), min_size=1, max_size=3, unique=True))
    for original in files:
        target = storage / original.relative_to(OPENCODE)
        value = json.loads(original.read_text(encoding="utf-8"))
        target.write_text(json.dumps(_mutate(data, value) if original in chosen else value))
    for session in FORMATS["opencode"].discover(storage):
        _check(FORMATS["opencode"].parse(session))
    for original in chosen:
        FORMATS["opencode"].unit_of(storage / original.relative_to(OPENCODE))  # type: ignore[misc]
