"""Numbers in an agent's own files keep their text through an import (API.md section 2).

Once, a Claude Code line whose tool input held a 5,000-digit integer was skipped as damaged
JSON, and ``1E2`` in a tool input became ``100.0``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loomsync.core.document import codec
from loomsync.importers import claude_code

SESSION = "e9fb405b-169f-40eb-9396-7e75076f045d"


@pytest.mark.parametrize("number", ["1E2", "-0", "0.50", "6" * 5000], ids=lambda n: n[:12])
def test_claude_code_tool_input_numbers_are_imported_as_written(
    tmp_path: Path, number: str
) -> None:
    head = f'"sessionId":"{SESSION}","timestamp":"2026-01-01T00:00:0'
    lines = [
        f'{{"type":"user","uuid":"u1","parentUuid":null,{head}1.000Z",'
        '"message":{"role":"user","content":"compute"}}',
        f'{{"type":"assistant","uuid":"a1","parentUuid":"u1",{head}2.000Z",'
        '"message":{"role":"assistant","id":"m1","model":"claude-test","content":'
        f'[{{"type":"tool_use","id":"t1","name":"calc","input":{{"n":{number}}}}}]}}}}',
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = claude_code.parse(path)

    assert not result.skipped
    [thread] = result.threads
    assert (
        f'"arguments_json":{{"n":{number}}}' in codec.encode_thread(thread, pretty=False).decode()
    )
