"""Imported ids are per owner (issue 15, item 5): two people importing the same transcript
each get a thread of their own on one real server, the same person gets the same ids on every
machine, a session UUID someone learnt blocks nobody, an offline import keeps its ids once
logged in, and a re-import never narrows a visibility widened since."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.importers.run import token_subject
from tests.client.conftest import LiveServer, Person, login
from tests.client.test_import import CLAUDE_SESSION, CODEX_THREAD, TRANSCRIPTS
from tests.homes import home_env

CODEX = str(TRANSCRIPTS / "codex-rollout")


@pytest.fixture
def someone(tmp_path: Path) -> Callable[[str], Person]:
    """``someone("alice")``: a person with a HOME of their own (a machine)."""

    def make(name: str) -> Person:
        home = tmp_path / name
        home.mkdir()
        env = home_env(home, COLUMNS="120", LOOMSYNC_RETRIES="1")
        return Person(home, env)

    return make


def owned(token: str, thread_id: str) -> str:
    sub = token_subject(token)
    assert sub is not None
    return str(ThreadId.owned(sub, thread_id))


def get(server: LiveServer, token: str, thread_id: str) -> httpx.Response:
    return httpx.get(
        f"{server.url}/api/threads/{thread_id}", headers={"Authorization": f"Bearer {token}"}
    )


def imported(person: Person, *args: str) -> dict[str, object]:
    result = person("import", *args, "--json")
    assert result.code == 0, result.out + result.err
    summary: dict[str, object] = json.loads(result.out)
    return summary


def test_two_people_import_one_transcript_and_each_owns_a_copy(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    alice, bob = someone("alice"), someone("bob")
    alice_token = create_token(settings, new_user("alice"), org="acme")
    bob_token = create_token(settings, new_user("bob"), org="acme")
    assert login(alice, server, alice_token).code == 0
    assert login(bob, server, bob_token).code == 0

    first = imported(alice, "codex", CODEX)
    second = imported(bob, "codex", CODEX)  # refused (403/404) forever before issue 15
    assert first["pending"] == second["pending"] == 0
    assert owned(alice_token, CODEX_THREAD) in first["created"]  # type: ignore[operator]
    assert owned(bob_token, CODEX_THREAD) in second["created"]  # type: ignore[operator]
    assert not set(first["created"]) & set(second["created"])  # type: ignore[arg-type]
    assert CODEX_THREAD not in first["created"]  # type: ignore[operator]

    mine = get(server, bob_token, owned(bob_token, CODEX_THREAD))
    assert mine.status_code == 200
    assert mine.json()["metadata"]["extra"]["source"]["session_thread_id"] == CODEX_THREAD
    assert get(server, bob_token, owned(alice_token, CODEX_THREAD)).status_code == 404


def test_the_same_person_gets_the_same_ids_on_every_machine(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    token = create_token(settings, new_user("alice"), org="acme")
    laptop, desktop = someone("laptop"), someone("desktop")
    assert login(laptop, server, token).code == 0
    assert login(desktop, server, token).code == 0
    here = imported(laptop, "codex", CODEX)
    there = imported(desktop, "codex", CODEX)
    assert sorted(there["created"]) == sorted(here["created"])  # type: ignore[type-var]
    assert there["pending"] == 0
    listed = httpx.get(
        f"{server.url}/api/threads",
        params={"limit": 200},
        headers={"Authorization": f"Bearer {token}"},
    ).json()["threads"]
    assert sorted(t["id"] for t in listed) == sorted(here["created"])  # type: ignore[type-var]  # no forks


def test_a_session_uuid_someone_learnt_blocks_nobody(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    mallory_token = create_token(settings, new_user("mallory"), org="acme")
    squat = {"conversation": {"messages": [{"role": "user", "content": "mine now"}]}}
    created = httpx.put(
        f"{server.url}/api/threads/{CODEX_THREAD}",
        json=squat,
        headers={"Authorization": f"Bearer {mallory_token}"},
    )
    assert created.status_code == 201
    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    summary = imported(alice, "codex", CODEX)
    assert summary["pending"] == 0
    assert get(server, token, owned(token, CODEX_THREAD)).status_code == 200


def test_an_offline_import_keeps_its_ids_after_login(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    alice = someone("alice")
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    offline = imported(alice, "claude-code", str(live))
    ids: list[str] = offline["created"]  # type: ignore[assignment]
    assert ids
    assert CLAUDE_SESSION not in ids  # a key of this machine, not the bare session id

    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    online = imported(alice, "claude-code", str(live))
    assert online["created"] == []  # the grown session updates the offline thread
    assert online["updated"]
    assert set(online["updated"]) <= set(ids)  # type: ignore[arg-type]
    assert online["pending"] == 0
    for thread_id in ids:
        assert get(server, token, thread_id).status_code == 200


def test_a_reimport_never_narrows_a_visibility_widened_on_the_server(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    assert imported(alice, "claude-code", str(live))["pending"] == 0
    thread_id = owned(token, CLAUDE_SESSION)

    # widen it on the server, as the README tour's PUT does
    stored = get(server, token, thread_id)
    document = {**stored.json(), "visibility": "organization"}
    widened = httpx.put(
        f"{server.url}/api/threads/{thread_id}",
        json=document,
        headers={"Authorization": f"Bearer {token}", "If-Match": stored.headers["ETag"]},
    )
    assert widened.status_code == 200, widened.text

    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    again = imported(alice, "claude-code", str(live))
    assert again["updated"] == [thread_id]
    assert again["pending"] == 0
    after = get(server, token, thread_id).json()
    assert after["visibility"] == "organization"
    shown = json.loads(alice("show", thread_id, "--json").out)
    assert shown["visibility"] == "organization"


def test_a_reimport_keeps_a_visibility_widened_with_share(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    imported(alice, "claude-code", str(live))
    thread_id = owned(token, CLAUDE_SESSION)
    shared = alice("share", thread_id, "--visibility", "organization")
    assert shared.code == 0, shared.out + shared.err
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    imported(alice, "claude-code", str(live))
    assert get(server, token, thread_id).json()["visibility"] == "organization"


def test_an_import_on_a_second_machine_keeps_the_visibility_the_first_widened(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    token = create_token(settings, new_user("alice"), org="acme")
    laptop, desktop = someone("laptop"), someone("desktop")
    assert login(laptop, server, token).code == 0
    assert login(desktop, server, token).code == 0
    imported(laptop, "codex", CODEX)
    thread_id = owned(token, CODEX_THREAD)
    shared = laptop("share", thread_id, "--visibility", "organization")
    assert shared.code == 0, shared.out + shared.err
    assert get(server, token, thread_id).json()["visibility"] == "organization"

    summary = imported(desktop, "codex", CODEX)  # a new local copy, "private" by default
    assert summary["pending"] == 0
    assert get(server, token, thread_id).json()["visibility"] == "organization"
    shown = json.loads(desktop("show", thread_id, "--json").out)
    assert shown["visibility"] == "organization"


def test_a_session_imported_before_per_owner_ids_keeps_its_id(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    from loomsync.importers import import_path

    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    store = alice.agent()
    for thread in import_path(TRANSCRIPTS / "codex-rollout").threads:  # as the old client did
        store.save(thread)
    store.close()
    again = imported(alice, "codex", CODEX)
    assert again["created"] == []
    assert CODEX_THREAD in again["unchanged"]  # type: ignore[operator]


def _session_lines(session: str, *turns: tuple[str, str | None, str]) -> str:
    """Claude Code lines: ``(uuid, parent uuid, text)`` user turns of ``session``."""
    return "".join(
        json.dumps(
            {
                "type": "user",
                "uuid": uuid_,
                "parentUuid": parent,
                "sessionId": session,
                "timestamp": f"2026-01-01T00:00:0{n}.000Z",
                "message": {"role": "user", "content": text},
            }
        )
        + "\n"
        for n, (uuid_, parent, text) in enumerate(turns)
    )


RESUMED = "5d1a0c6e-3b7f-4e2a-9c1d-8f0e6a2b4c13"


def test_a_logged_out_import_finds_the_copies_stored_under_the_login(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    ids = imported(alice, "claude-code", str(live))["created"]
    assert owned(token, CLAUDE_SESSION) in ids  # type: ignore[operator]
    assert alice("logout").code == 0

    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    offline = imported(alice, "claude-code", str(live))
    assert offline["created"] == []  # machine-key duplicates before the fix
    assert owned(token, CLAUDE_SESSION) in offline["updated"]  # type: ignore[operator]


def test_the_login_copy_wins_over_a_machine_key_copy(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    from loomsync.importers import import_path

    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    session = live / "e9fb405b-169f-40eb-9396-7e75076f045d.jsonl"
    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-1.jsonl", session)
    machine = "machine:0b9e2c61-5f3a-4d1e-8a7b-2c4d6e8f0a1b"
    alice.paths.config_dir.mkdir(parents=True)
    (alice.paths.config_dir / "import-owner").write_text(machine + "\n")
    store = alice.agent()  # both copies, as an older client left them
    for key in (machine, token_subject(token)):
        for thread in import_path(session, owner=key).threads:
            store.save(thread)
    store.close()
    assert login(alice, server, token).code == 0

    shutil.copyfile(TRANSCRIPTS / "claude-code" / "e9fb405b-turn-2.jsonl", session)
    again = imported(alice, "claude-code", str(live))
    assert owned(token, CLAUDE_SESSION) in again["updated"]  # type: ignore[operator]
    assert str(ThreadId.owned(machine, CLAUDE_SESSION)) not in again["updated"]  # type: ignore[operator]


def test_a_reimport_on_a_second_machine_is_unchanged(
    server: LiveServer, settings: Settings, new_user, someone
) -> None:
    token = create_token(settings, new_user("alice"), org="acme")
    laptop, desktop = someone("laptop"), someone("desktop")
    assert login(laptop, server, token).code == 0
    assert login(desktop, server, token).code == 0
    imported(laptop, "codex", CODEX)
    first = imported(desktop, "codex", CODEX)
    again = imported(desktop, "codex", CODEX)
    assert again["updated"] == []
    assert again["created"] == []
    assert sorted(again["unchanged"]) == sorted(first["created"])  # type: ignore[type-var]


def test_a_resumed_session_links_to_the_copy_stored_under_another_key(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    alice = someone("alice")
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    (live / f"{CLAUDE_SESSION[2:]}.jsonl").write_text(
        _session_lines(CLAUDE_SESSION[2:], ("u1", None, "first question"))
    )
    [original] = imported(alice, "claude-code", str(live))["created"]  # type: ignore[misc]
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    resumed = _session_lines(CLAUDE_SESSION[2:], ("u1", None, "first question"))
    resumed += _session_lines(RESUMED, ("u2", "u1", "and then?"))
    (live / f"{RESUMED}.jsonl").write_text(resumed)
    imported(alice, "claude-code", str(live))
    shown = json.loads(alice("show", owned(token, f"T-{RESUMED}"), "--json").out)
    link = shown["metadata"]["extra"]["resumed_from"]
    assert link == original  # the machine-key copy, not a login-key id nobody stored
    assert alice("show", link, "--json").code == 0


def test_a_resumed_session_links_to_a_copy_under_its_bare_id(
    server: LiveServer, settings: Settings, new_user, someone, tmp_path: Path
) -> None:
    from loomsync.importers import import_path

    alice = someone("alice")
    token = create_token(settings, new_user("alice"), org="acme")
    assert login(alice, server, token).code == 0
    live = tmp_path / "projects" / "-home-me-app"
    live.mkdir(parents=True)
    first = live / f"{CLAUDE_SESSION[2:]}.jsonl"
    first.write_text(_session_lines(CLAUDE_SESSION[2:], ("u1", None, "first question")))
    store = alice.agent()  # as a client before issue 15 stored it
    for thread in import_path(first).threads:
        store.save(thread)
    store.close()
    resumed = _session_lines(CLAUDE_SESSION[2:], ("u1", None, "first question"))
    resumed += _session_lines(RESUMED, ("u2", "u1", "and then?"))
    (live / f"{RESUMED}.jsonl").write_text(resumed)
    imported(alice, "claude-code", str(live))
    shown = json.loads(alice("show", owned(token, f"T-{RESUMED}"), "--json").out)
    assert shown["metadata"]["extra"]["resumed_from"] == CLAUDE_SESSION
