"""The provenance index and its queries over HTTP (issue 32 items 1 and 2): written on PUT,
append and fork, answered by commit, file and line, never naming a thread the caller may
not read (API.md section 4)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from app.provenance.backfill import backfill_sync
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory

REPO = "github.com/team/project"
ROOT = "/home/alice/project"


def _edit_call(path: str, old: str, new: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "editing",
        "tool_calls": [
            {
                "id": "c1",
                "tool_name": "Edit",
                "arguments_json": {"file_path": path, "old_string": old, "new_string": new},
            }
        ],
    }


def _shell_call(command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c2", "tool_name": "exec_command", "arguments_json": {"cmd": command}}
        ],
    }


def _thread(
    messages: list[dict[str, Any]], commits: list[str], visibility: str = "private", **extra: Any
) -> dict[str, Any]:
    return {
        "version": 0,
        "visibility": visibility,
        "workspace_root": ROOT,
        "git_remote_url": REPO,
        "git_commits": commits,
        "conversation": {"messages": messages},
        **extra,
    }


async def _put(client: httpx.AsyncClient, headers: dict[str, str], doc: dict[str, Any]) -> str:
    tid = str(ThreadId.new())
    answer = await client.put(f"/api/threads/{tid}", json=doc, headers=headers)
    assert answer.status_code == 201, answer.text
    return tid


def _ids(body: dict[str, Any]) -> list[str]:
    return [hit["thread"]["id"] for hit in body["hits"]]


async def test_commit_file_and_line_with_visibility(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    org = f"org-{uuid.uuid4().hex[:8]}"
    alice = auth(new_user("alice"), org=org)
    bob = auth(new_user("bob"), org=org)
    sha = uuid.uuid4().hex + "abcdef01"
    wrote = await _put(
        client,
        alice,
        _thread(
            [
                {"role": "user", "content": "add a greeting"},
                _edit_call(f"{ROOT}/src/app.py", "pass", "print('hello from alice')"),
                _shell_call("sed -i 's/hello/hi/' src/util.py && echo done > notes/out.txt"),
            ],
            [sha],
            "organization",
        ),
    )
    secret = await _put(  # bob's private thread observed the same commit and edited the file
        client,
        bob,
        _thread([_edit_call(f"{ROOT}/src/app.py", "x", "print('hello from alice')")], [sha]),
    )
    # by commit: alice sees her thread only; bob sees both (his own private one and the org one)
    seen = (await client.get(f"/api/provenance/commits/{sha[:7]}", headers=alice)).json()
    assert _ids(seen) == [wrote]
    assert seen["hits"][0]["commits"] == [sha]
    assert {t["path"] for t in seen["hits"][0]["touches"]} == {
        "src/app.py",
        "src/util.py",
        "notes/out.txt",
    }
    assert sorted(_ids((await client.get(f"/api/provenance/commits/{sha}", headers=bob)).json()))
    assert set(_ids((await client.get(f"/api/provenance/commits/{sha}", headers=bob)).json())) == {
        wrote,
        secret,
    }
    # by file, with the touching message; sed -i found through the shell
    by_file = await client.get(
        "/api/provenance/files", params={"path": "src/util.py", "repository": REPO}, headers=alice
    )
    assert _ids(by_file.json()) == [wrote]
    assert by_file.json()["hits"][0]["touches"] == [
        {"path": "src/util.py", "message_index": 2, "action": "edit", "via": "shell"}
    ]
    app_py = await client.get("/api/provenance/files", params={"path": "src/app.py"}, headers=alice)
    assert _ids(app_py.json()) == [wrote]  # bob's private thread is not named, not even counted
    # by line: the edit holding the text first
    line = await client.get(
        "/api/provenance/lines",
        params={"path": "src/app.py", "text": "    print('hello from alice')", "commit": sha[:10]},
        headers=alice,
    )
    assert line.status_code == 200, line.text
    assert [(h["thread"]["id"], h["match"], h["message_index"]) for h in line.json()["hits"]] == [
        (wrote, "line", 1)
    ]
    # a stranger sees nothing at all
    stranger = auth(new_user("eve"))
    for url, params in (
        (f"/api/provenance/commits/{sha}", {}),
        ("/api/provenance/files", {"path": "src/app.py"}),
        ("/api/provenance/lines", {"path": "src/app.py", "text": "hello from alice"}),
    ):
        answer = await client.get(url, params=params, headers=stranger)
        assert answer.status_code == 200
        assert answer.json()["hits"] == []
    assert (await client.get(f"/api/threads/{secret}/provenance", headers=alice)).status_code == 404


async def test_line_after_a_rebase_and_ranking(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    alice = auth(new_user("alice"))
    old_sha, new_sha = uuid.uuid4().hex + "00000000", uuid.uuid4().hex + "11111111"
    editor = await _put(
        client, alice, _thread([_edit_call("lib/x.go", "a", "func Rebased() {}")], [old_sha])
    )
    observer = await _put(client, alice, _thread([{"role": "user", "content": "hi"}], [new_sha]))
    answer = await client.get(
        "/api/provenance/lines",
        params={"path": "lib/x.go", "text": "func Rebased() {}", "commit": new_sha},
        headers=alice,
    )
    hits = answer.json()["hits"]
    assert [(h["thread"]["id"], h["match"]) for h in hits] == [
        (editor, "line"),
        (observer, "commit"),
    ]


async def test_append_replace_fork_and_backfill(
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    database_url: str,
) -> None:
    alice = auth(new_user("alice"))
    tid = await _put(client, alice, _thread([{"role": "user", "content": "start"}], []))
    appended = await client.post(
        f"/api/threads/{tid}/messages",
        json={"messages": [_shell_call("cat > docs/new.md <<EOF\n# Title\nEOF")]},
        headers={**alice, "If-Match": '"1"'},
    )
    assert appended.status_code == 200, appended.text
    mine = await client.get(f"/api/threads/{tid}/provenance", headers=alice)
    assert mine.json()["touches"] == [
        {"path": "docs/new.md", "message_index": 1, "action": "write", "via": "shell"}
    ]
    fork = await client.post(f"/api/threads/{tid}/fork", json={}, headers=alice)
    fork_id = fork.json()["id"]
    assert (await client.get(f"/api/threads/{fork_id}/provenance", headers=alice)).json()[
        "touches"
    ] == mine.json()["touches"]
    doc = _thread([_edit_call("b.py", "", "x = 1")], [])
    doc["version"] = 2
    replaced = await client.put(f"/api/threads/{tid}", json=doc, headers=alice)
    assert replaced.status_code == 200, replaced.text
    after = (await client.get(f"/api/threads/{tid}/provenance", headers=alice)).json()
    assert [t["path"] for t in after["touches"]] == ["b.py"]
    # the backfill rebuilds rows of threads stored without them
    engine = create_async_engine(database_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(
                text("DELETE FROM thread_files WHERE thread_id = CAST(:id AS uuid)"),
                {"id": ThreadId.parse(tid).uuid},
            )
            threads, _ = await conn.run_sync(lambda c: backfill_sync(c, again=True))
            assert threads >= 1
    finally:
        await engine.dispose()
    rebuilt = (await client.get(f"/api/threads/{tid}/provenance", headers=alice)).json()
    assert rebuilt["touches"] == after["touches"]


async def test_bad_input_is_problem_json(client: httpx.AsyncClient, owner: dict[str, str]) -> None:
    for url, params in (
        ("/api/provenance/commits/abc", {}),
        ("/api/provenance/commits/zzzzzzzz", {}),
        ("/api/provenance/files", {"path": "  "}),
        ("/api/provenance/files", {"path": "a.py", "cursor": "bogus"}),
        ("/api/provenance/lines", {"path": "a.py", "text": "x", "commit": "nothex!"}),
    ):
        answer = await client.get(url, params=params, headers=owner)
        assert answer.status_code == 400, (url, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json")
    assert (await client.get("/api/provenance/files", params={"path": "a"})).status_code == 401
    missing = await client.get("/api/provenance/files", headers=owner)
    assert missing.status_code == 422
    outside = await client.get("/api/provenance/files", params={"path": "../x"}, headers=owner)
    assert outside.status_code == 200
    assert outside.json()["hits"] == []


async def test_pages_by_file(client: httpx.AsyncClient, owner: dict[str, str]) -> None:
    made = [
        await _put(client, owner, _thread([_edit_call("paged.txt", "", f"v{i}")], []))
        for i in range(5)
    ]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"path": "paged.txt", "limit": "2", **({"cursor": cursor} if cursor else {})}
        page = (await client.get("/api/provenance/files", params=params, headers=owner)).json()
        seen += _ids(page)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(made)
    assert len(seen) == 5
    other = await client.get(
        "/api/provenance/files", params={"path": "other.txt", "cursor": cursor or ""}, headers=owner
    )
    assert other.status_code == 200


async def test_backfill_command(
    client: httpx.AsyncClient, owner: dict[str, str], database_url: str
) -> None:
    tid = await _put(client, owner, _thread([_edit_call("cmd.py", "", "y = 2")], []))
    engine = create_async_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text("DELETE FROM thread_files WHERE thread_id = CAST(:id AS uuid)"),
                {"id": ThreadId.parse(tid).uuid},
            )
    finally:
        await engine.dispose()
    command = [
        str(Path(sys.executable).parent / "loomsync-server"),
        "provenance-backfill",
        "--again",
    ]
    env = {**os.environ, "LOOMSYNC_DATABASE_URL": database_url}
    done = await asyncio.to_thread(
        subprocess.run, command, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "file touches indexed" in done.stdout
    found = (await client.get(f"/api/threads/{tid}/provenance", headers=owner)).json()
    assert [t["path"] for t in found["touches"]] == ["cmd.py"]


#: Spellings of one remote that agents record as they found them (Codex's ``repository_url``,
#: a clone over SSH, a port, a trailing slash), and other remotes that must not match.
SPELLINGS = (
    "https://github.com/Team/Remote-Spelling.git",
    "git@github.com:team/remote-spelling.git",
    "ssh://git@github.com:22/team/remote-spelling.git/",
    "https://ci-bot@github.com/team/remote-spelling",
    "github.com/team/remote-spelling",
)
OTHERS = ("https://github.com/team/remote-spelling-2.git", "git@gitlab.com:team/remote-spelling")


async def test_repository_matches_any_spelling_of_the_remote(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    sha = uuid.uuid4().hex
    line = "print('spelled many ways')"
    spelled = {
        url: await _put(
            client,
            owner,
            _thread([_edit_call("spell.py", "", line)], [sha], git_remote_url=url),
        )
        for url in (*SPELLINGS, *OTHERS)
    }
    unknown = await _put(
        client, owner, _thread([_edit_call("spell.py", "", line)], [sha], git_remote_url=None)
    )
    wanted = {spelled[url] for url in SPELLINGS}
    for repository in ("github.com/team/remote-spelling", "git@github.com:team/remote-spelling"):
        params = {"repository": repository}
        commits = await client.get(f"/api/provenance/commits/{sha}", params=params, headers=owner)
        # a commit names itself: threads that recorded no remote are kept
        assert set(_ids(commits.json())) == wanted | {unknown}
        files = await client.get(
            "/api/provenance/files", params={"path": "spell.py", **params}, headers=owner
        )
        assert set(_ids(files.json())) == wanted  # a path alone could be any repository's
        lines = await client.get(
            "/api/provenance/lines",
            params={"path": "spell.py", "text": line, **params},
            headers=owner,
        )
        assert {h["thread"]["id"] for h in lines.json()["hits"]} == wanted | {unknown}


async def test_remote_key_is_the_clients_normalisation(database_url: str) -> None:
    """The SQL spelling-folding equals loomsync.git.normalize_remote_url, case folded."""
    from sqlalchemy import select

    from app.provenance.queries import remote_key
    from loomsync.git import normalize_remote_url

    urls = (
        *SPELLINGS,
        *OTHERS,
        "https://gitlab.example.com:8443/group/sub/project.git",
        "git@host.example:123org/repo.git",
        "file:///srv/git/project.git",
        "/srv/git/project.git/",
        "https://github.com/a/b///",
    )
    engine = create_async_engine(database_url)
    try:
        async with engine.connect() as conn:
            for url in urls:
                folded = await conn.scalar(select(remote_key(url)))
                assert folded == normalize_remote_url(url).lower(), url
    finally:
        await engine.dispose()


async def test_nul_in_a_query_finds_nothing(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    """No stored text holds NUL (PostgreSQL ``text`` cannot): an empty answer, never a 5xx."""
    for url, params in (
        ("/api/provenance/files", {"path": "app\x00.py"}),
        ("/api/provenance/files", {"path": "app.py", "repository": "\x00"}),
        ("/api/provenance/lines", {"path": "app\x00.py", "text": "abc"}),
        ("/api/provenance/lines", {"path": "app.py", "text": "a\x00bc", "commit": "abcdef1"}),
        ("/api/provenance/commits/abcdef1", {"repository": "\x00"}),
    ):
        answer = await client.get(url, params=params, headers=owner)
        assert answer.status_code == 200, (url, params, answer.text)
        assert answer.json()["hits"] == []
