"""``loomsync watch`` captures the JSON agents' sessions as they are written (issue 28): a
Copilot CLI session folder, a Qwen Code recording and a Grok Build history, each appended line
by line as the agent does (sidecars in place), in a folder ``[watch] folders`` names, reach
the local store complete and without duplicates; and a Copilot Chat session rewritten in place
is read again. Real files, the real CLI, a real server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.client.conftest import LiveServer, Person, login, wait_for
from tests.client.test_watch import (
    Watch,
    copy_lines,
    expected,
    local_counts,
    server_counts,
    watches,  # noqa: F401  (the fixture that stops the watches)
)

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts"
COPILOT = TRANSCRIPTS / "copilot-cli" / "session-state" / "07c40cd0-ff51-4d6e-bdcd-ac2f90877203"
QWEN = TRANSCRIPTS / "qwen-code" / "69f0814a-8bfc-4c8e-93d3-05757f17b96f.jsonl"
GROK = next((TRANSCRIPTS / "grok-build").glob("*/*/chat_history.jsonl"))
CHAT = (
    TRANSCRIPTS
    / "copilot-chat-vscode"
    / "chatSessions"
    / "f56f201a-672e-4cc5-ada9-4736258cc586.json"
)


def test_json_agents_written_line_by_line_reach_the_store_and_the_server(
    person: Person,
    live_server: LiveServer,
    account: str,
    watches: list[Watch],  # noqa: F811
) -> None:
    assert login(person, live_server, account).code == 0
    config = person.paths.config_file
    config.write_text(config.read_text() + '\n[watch]\nfolders = ["agents"]\n')
    watches.append(watch := Watch(person))
    agents = person.home / "agents"
    session = agents / "copilot" / COPILOT.name
    session.mkdir(parents=True)
    shutil.copy(COPILOT / "workspace.yaml", session)
    shutil.copytree(COPILOT / "rewind-snapshots", session / "rewind-snapshots")
    qwen = agents / "qwen" / "chats" / QWEN.name
    grok = agents / "grok" / GROK.parent.parent.name / GROK.parent.name / GROK.name
    grok.parent.mkdir(parents=True)

    copy_lines(COPILOT / "events.jsonl", session / "events.jsonl", pause=0.002)
    copy_lines(QWEN, qwen)
    copy_lines(GROK, grok)
    for sidecar in ("summary.json", "signals.json"):  # Grok rewrites them as the chat goes on
        shutil.copy(GROK.parent / sidecar, grok.parent)
    want = {
        **expected("copilot-cli", session / "events.jsonl", account),
        **expected("qwen-code", qwen, account),
        **expected("grok-build", grok, account),
    }
    assert sorted(want.values()) == [4, 8, 173]
    wait_for(lambda: local_counts(person) == want, timeout=20, what="the local store")
    wait_for(lambda: server_counts(live_server, account, list(want)) == want, timeout=20,
             what="the server")  # fmt: skip
    assert not watch.lines("ignored "), watch.text()


def test_a_copilot_chat_session_rewritten_in_place_is_read_again(
    person: Person,
    watches: list[Watch],  # noqa: F811
) -> None:
    config = person.paths.config_file
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[watch]\nfolders = ["vscode"]\n')
    document = json.loads(CHAT.read_text("utf-8"))
    target = person.home / "vscode" / "workspaceStorage" / "abc" / "chatSessions" / CHAT.name
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps({**document, "requests": document["requests"][:1]}))
    watches.append(Watch(person))
    [first] = expected("copilot-chat", target, None).values()  # ids: the machine's key
    wait_for(lambda: list(local_counts(person).values()) == [first], what="the first request")

    replacement = target.with_suffix(".tmp")
    replacement.write_text(json.dumps(document))
    replacement.replace(target)  # VS Code writes the whole file again
    [count] = expected("copilot-chat", target, None).values()
    assert count > first
    wait_for(lambda: list(local_counts(person).values()) == [count], what="the rewritten one")
