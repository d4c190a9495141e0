"""``loomsync import`` of the JSON agents (issue 28: Copilot CLI and Chat, Qwen Code, Droid,
Grok Build) end to end: the real files, the real CLI, a real server. Each folder is given as
``auto`` would see it (a session folder copied from another machine included), and what the
server keeps has the usage and the agent's extra members the importer wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.importers.run import token_subject
from tests.client.conftest import LiveServer, Person, login, wait_for

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts"
FOLDERS = {
    "copilot-cli": ("copilot-cli", 3),
    "copilot-chat": ("copilot-chat-vscode", 2),
    "qwen-code": ("qwen-code", 1),
    "droid": ("droid", 1),
    "grok-build": ("grok-build", 1),
}
COPILOT = "T-07c40cd0-ff51-4d6e-bdcd-ac2f90877203"


@pytest.fixture
def token(settings: Settings, new_user) -> str:
    return create_token(settings, new_user("json-agents"), org="acme")


def owned(token: str, thread_id: str) -> str:
    sub = token_subject(token)
    assert sub is not None
    return str(ThreadId.owned(sub, thread_id))


def test_each_json_agent_imports_and_syncs_with_usage_and_extras(
    person: Person, server: LiveServer, token: str
) -> None:
    assert login(person, server, token).code == 0
    for fmt, (folder, sessions) in FOLDERS.items():
        result = person("import", fmt, str(TRANSCRIPTS / folder), "--json")
        assert result.code == 0, result.err
        summary = json.loads(result.out)
        assert len(summary["created"]) == sessions, (fmt, result.out)
        assert summary["pending"] == 0, result.out

    copilot = owned(token, COPILOT)
    wait_for(lambda: f"PUT /api/threads/{copilot}" in server.requests(), what="PUT logged")
    response = httpx.get(
        f"{server.url}/api/threads/{copilot}", headers={"Authorization": f"Bearer {token}"}
    )
    response.raise_for_status()
    document = response.json()
    messages = document["conversation"]["messages"]
    assert len(messages) == 173
    usages = [m["usage"] for m in messages if "usage" in m]
    assert len(usages) == 75
    assert sum(u["output_tokens"] for u in usages) == 22185
    users = [m for m in messages if m["role"] == "user"]
    assert users[0]["extra"]["git"]["branch"] == "007-agent-engineering-refactor"
    assert document["git_branch"] == "007-agent-engineering-refactor"


def test_auto_recognises_a_copilot_session_folder_copied_from_another_machine(
    person: Person, tmp_path: Path
) -> None:
    copied = tmp_path / "from-laptop" / "07c40cd0-ff51-4d6e-bdcd-ac2f90877203"
    shutil.copytree(TRANSCRIPTS / "copilot-cli" / "session-state" / copied.name, copied)
    qwen = tmp_path / "from-laptop" / "qwen" / "chats"
    qwen.mkdir(parents=True)
    shutil.copy(next((TRANSCRIPTS / "qwen-code").glob("*.jsonl")), qwen)

    result = person("import", "auto", str(tmp_path / "from-laptop"), "--json")

    assert result.code == 0, result.err
    summary = json.loads(result.out)
    assert len(summary["created"]) == 2, result.out
    key = (person.paths.config_dir / "import-owner").read_text().strip()
    assert str(ThreadId.owned(key, COPILOT)) in summary["created"]
