"""``loomsync import`` end to end: real transcripts → local store → a real server, as a person
runs it. The server has a database of its own: imported sessions keep their real ids, which
other tests store under other owners."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.importers import import_path
from loomsync.importers.run import token_subject
from tests.client.conftest import LiveServer, Person, login, wait_for

TRANSCRIPTS = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts"
CODEX_THREAD = "T-019b7f94-51b4-7593-922e-ba12b5b73b52"  # rollout-2026-01-02T18-39-45-…
CLAUDE_SESSION = "T-e9fb405b-169f-40eb-9396-7e75076f045d"  # e9fb405b-turn-1 / turn-2
FORMAT_FOLDERS = {
    "codex": "codex-rollout",
    "claude-code": "claude-code",
    "gemini-cli": "gemini-cli",
    "aider": "aider-chat-history",
    "swe-agent": "swe-agent-traj",
    "openhands": "openhands-events",
}


@pytest.fixture
def token(settings: Settings, new_user) -> str:
    return create_token(settings, new_user("importer"), org="acme")


def owned(token: str, thread_id: str) -> str:
    """The id ``thread_id`` (a session's own) gets when imported with ``token`` (issue 15)."""
    sub = token_subject(token)
    assert sub is not None
    return str(ThreadId.owned(sub, thread_id))


def offline(person: Person, thread_id: str) -> str:
    """The id ``thread_id`` gets when ``person`` imports it not logged in (this machine's key)."""
    key = (person.paths.config_dir / "import-owner").read_text().strip()
    return str(ThreadId.owned(key, thread_id))


def search(server: LiveServer, token: str, q: str) -> list[dict[str, object]]:
    response = httpx.get(
        f"{server.url}/api/threads/search",
        params={"q": q, "limit": 50},
        headers={"Authorization": f"Bearer {token}"},
    )
    response.raise_for_status()
    hits: list[dict[str, object]] = response.json()["hits"]
    return hits


def test_import_everything_sync_search_and_show(
    person: Person, server: LiveServer, token: str
) -> None:
    assert login(person, server, token).code == 0
    codex = owned(token, CODEX_THREAD)
    created = 0
    for fmt, folder in FORMAT_FOLDERS.items():
        result = person("import", fmt, str(TRANSCRIPTS / folder), "--json")
        assert result.code == 0, result.err
        summary = json.loads(result.out)
        assert summary["files"] > 0, fmt
        assert summary["pending"] == 0, result.out
        created += len(summary["created"])
    assert created >= 30

    prompt_hits = search(server, token, "summarize purpuse and explain goals")  # a user prompt
    assert codex in [h["thread"]["id"] for h in prompt_hits]  # type: ignore[index]

    tool_hits = [h for h in search(server, token, "commitlint") if h["thread"]["id"] == codex]  # type: ignore[index]
    assert tool_hits, "a word only in a tool output is found"
    shown = json.loads(person("show", codex, "--json").out)
    assert shown["conversation"]["messages"][tool_hits[0]["message_index"]]["role"] == "tool"  # type: ignore[index]

    subagent = "lifecycle hooks and an active session registry"
    ids = {h["thread"]["id"]: h for h in search(server, token, subagent)}  # type: ignore[index]
    children = [
        i for i in ids
        if json.loads(person("show", i, "--json").out)["metadata"]["extra"].get("parent_thread_id")
    ]  # fmt: skip
    assert children, "the subagent transcript is its own thread and is found"

    transcript = person("show", codex)
    assert transcript.code == 0
    assert "what is current repository about" in transcript.out
    assert "user" in transcript.out.lower()
    assert "assistant" in transcript.out.lower()


def test_importing_twice_creates_and_sends_nothing_new(
    person: Person, server: LiveServer, token: str
) -> None:
    assert login(person, server, token).code == 0
    folder = str(TRANSCRIPTS / "codex-rollout")
    first = json.loads(person("import", "codex", folder, "--json").out)
    assert first["created"]
    assert first["pending"] == 0
    wait_for(
        lambda: sum(r.startswith("PUT") for r in server.requests()) >= len(first["created"]),
        what="PUTs logged",
    )
    before = len(server.requests())
    second = json.loads(person("import", "codex", folder, "--json").out)
    assert second["created"] == []
    assert second["updated"] == []
    assert sorted(second["unchanged"]) == sorted(first["created"])
    assert [r for r in server.requests()[before:] if not r.startswith("GET")] == []


def test_a_session_that_grew_is_synced_by_append(
    person: Person, server: LiveServer, token: str, tmp_path: Path
) -> None:
    assert login(person, server, token).code == 0
    claude = owned(token, CLAUDE_SESSION)
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    first = json.loads(person("import", "claude-code", str(live), "--json").out)
    assert claude in first["created"]
    # the server logs a request after answering it: wait for the first import's PUT to show
    wait_for(lambda: f"PUT /api/threads/{claude}" in server.requests(), what="PUT logged")
    before = len(server.requests())

    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    second = json.loads(person("import", "claude-code", str(live), "--json").out)
    assert second["updated"] == [claude]
    assert second["pending"] == 0
    writes = [r for r in server.requests_about(claude, before) if not r.startswith("GET")]
    assert writes == [f"POST /api/threads/{claude}/messages"]

    local = json.loads(person("show", claude, "--json").out)
    reference = tmp_path / "reference"
    reference.mkdir()
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", reference / session.name)
    expected = next(
        t
        for t in import_path(reference, "claude-code", owner=token_subject(token)).threads
        if str(t.id) == claude
    )

    def without_nulls(messages: list[dict[str, object]]) -> list[dict[str, object]]:
        return [{k: v for k, v in m.items() if v is not None} for m in messages]

    wanted = expected.model_dump(mode="json")["conversation"]["messages"]
    assert without_nulls(local["conversation"]["messages"]) == without_nulls(wanted)


def test_dry_run_writes_nothing_and_since_filters(person: Person, tmp_path: Path) -> None:
    folder = str(TRANSCRIPTS / "codex-rollout")
    dry = json.loads(person("import", "codex", folder, "--dry-run", "--json").out)
    assert dry["created"]
    assert person("list", "--json").out.strip() in ("[]", "")
    later = json.loads(person("import", "codex", folder, "--since", "2026-05-01", "--json").out)
    assert later["older_than_since"]
    assert later["created"]
    assert len(later["created"]) + len(later["older_than_since"]) == len(dry["created"])


def test_damaged_files_import_the_rest_and_report_it(person: Person, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    source = (
        TRANSCRIPTS
        / "codex-rollout"
        / "rollout-2026-01-02T18-39-45-019b7f94-51b4-7593-922e-ba12b5b73b52.jsonl"
    ).read_text()
    lines = source.splitlines()
    (folder / "rollout-cut.jsonl").write_text(
        "\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2]
    )
    result = person("import", "codex", str(folder))
    assert result.code == 0
    assert "Imported 1 file(s), 1 thread(s): 1 created" in result.out
    assert "Skipped damaged lines:" in result.out


def test_unknown_format_is_one_line_error(person: Person) -> None:
    result = person("import", "cobol", "/nowhere")
    assert result.code == 2  # a usage mistake (newcomer finding 13)
    assert "unknown format" in result.err


def test_a_missing_path_is_an_error(person: Person) -> None:
    result = person("import", "codex", "/nowhere/at/all")
    assert result.code == 1
    assert "no such file or folder" in result.err


def test_an_older_capture_never_shortens_a_thread(person: Person, tmp_path: Path) -> None:
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    json.loads(person("import", "claude-code", str(live), "--json").out)
    claude = offline(person, CLAUDE_SESSION)
    longer = len(json.loads(person("show", claude, "--json").out)["conversation"]["messages"])
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    again = json.loads(person("import", "claude-code", str(live), "--json").out)
    assert again["unchanged"] == [claude]
    shown = json.loads(person("show", claude, "--json").out)
    assert len(shown["conversation"]["messages"]) == longer


def test_both_captures_in_one_folder_count_once_and_keep_the_longer(person: Person) -> None:
    folder = TRANSCRIPTS / "claude-code"
    first = json.loads(person("import", "claude-code", str(folder), "--json").out)
    claude = offline(person, CLAUDE_SESSION)
    assert first["created"].count(claude) == 1
    assert claude not in first["updated"]
    again = json.loads(person("import", "claude-code", str(folder), "--json").out)
    assert again["updated"] == []
    assert again["created"] == []
