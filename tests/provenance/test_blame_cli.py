"""``loomsync blame``, ``why`` and ``hooks install`` on real git repositories made here, with
a real server, two people (two tokens) and two agents' sessions (Claude Code's Edit and
Bash, Codex's apply_patch): blame of a line finds the session that wrote it, across a rebase
and through a ``sed -i``; another user's private thread is never named; the hook's trailer
is read first (issue 32 "Done means")."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from app.auth import create_token
from app.config import Settings
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from tests.client.conftest import LOOMSYNC, LiveServer, Person, make_person

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}
REMOTE = "github.com/team/webapp"


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        env={**os.environ, **GIT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def commit_all(repo: Path, message: str, env: dict[str, str] | None = None) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, env=env)
    return git(repo, "rev-parse", "HEAD")


def claude_edit(path: Path, old: str, new: str) -> dict[str, Any]:
    args = {"file_path": str(path), "old_string": old, "new_string": new}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "e", "tool_name": "Edit", "arguments_json": json.dumps(args)}],
    }


def claude_bash(command: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "b", "tool_name": "Bash", "arguments_json": {"command": command}}],
    }


def codex_patch(path: str, added: str) -> dict[str, Any]:
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@\n+{added}\n*** End Patch\n"
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "p", "tool_name": "apply_patch", "arguments_json": patch}],
    }


def session(
    repo: Path, messages: list[dict[str, Any]], commits: list[str], visibility: str
) -> dict[str, Any]:
    return {
        "id": str(ThreadId.new()),
        "version": 0,
        "visibility": visibility,
        "workspace_root": str(repo),
        "git_remote_url": REMOTE,
        "git_commits": commits,
        "last_activity_at": datetime.now(UTC).isoformat(),
        "metadata": {"title": "session"},
        "conversation": {"messages": [{"role": "user", "content": "please"}, *messages]},
    }


def upload(url: str, token: str, doc: dict[str, Any]) -> str:
    answer = httpx.put(
        f"{url}/api/threads/{doc['id']}",
        json=doc,
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert answer.status_code == 201, answer.text
    return str(doc["id"])


def blamed(person: Person, target: str, *extra: str) -> list[dict[str, Any]]:
    done = person("blame", target, "--json", *extra)
    assert done.code == 0, done.err
    lines: list[dict[str, Any]] = json.loads(done.out)["lines"]
    return lines


def named(lines: list[dict[str, Any]]) -> set[str]:
    return {t["thread_id"] for line in lines for t in line["threads"]}


def test_blame_finds_the_session_across_users_rebase_and_sed(
    tmp_path: Path, live_server: LiveServer, settings: Settings
) -> None:
    org = f"team-{uuid.uuid4().hex[:8]}"
    alice_token = create_token(settings, f"alice-{uuid.uuid4().hex[:8]}", org=org)
    bob_token = create_token(settings, f"bob-{uuid.uuid4().hex[:8]}", org=org)
    repo = tmp_path / "webapp"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://{REMOTE}.git")
    app_py = repo / "app.py"
    app_py.write_text("import os\n")
    base = commit_all(repo, "start")

    # alice's Claude Code session writes greet() and commits it; then a sed -i renames it
    greet = "def greet():\n    return 'hi alice'\n"
    app_py.write_text("import os\n" + greet)
    greet_sha = commit_all(repo, "greet")
    subprocess.run(["sed", "-i", "s/hi alice/hello alice/", str(app_py)], check=True)
    sed_sha = commit_all(repo, "sed")
    alice_thread = upload(
        live_server.url,
        alice_token,
        session(
            repo,
            [
                claude_edit(app_py, "import os\n", "import os\n" + greet),
                claude_bash("sed -i 's/hi alice/hello alice/' app.py"),
            ],
            [base, greet_sha, sed_sha],
            "organization",
        ),
    )
    # bob's Codex session adds shout() (organization) ...
    app_py.write_text(app_py.read_text() + "def shout():\n    return 'HEY'\n")
    shout_sha = commit_all(repo, "shout")
    bob_thread = upload(
        live_server.url,
        bob_token,
        session(repo, [codex_patch("app.py", "def shout():")], [shout_sha], "organization"),
    )
    # ... and a private session of bob's that claims alice's line and commit: never named
    bob_private = upload(
        live_server.url,
        bob_token,
        session(
            repo,
            [claude_edit(app_py, "x", "def greet():")],
            [greet_sha, sed_sha, shout_sha],
            "private",
        ),
    )

    alice = make_person(tmp_path / "alice")
    assert alice("login", "--server", live_server.url, "--token", alice_token).code == 0
    lines = blamed(alice, f"{app_py}:2-5")
    assert [line["commit"] for line in lines] == [greet_sha, sed_sha, shout_sha, shout_sha]
    greet_line, sed_line, shout_line = lines[0], lines[1], lines[2]
    assert greet_line["threads"][0] == {
        "thread_id": alice_thread,
        "match": "line",
        "message_index": 1,
        "commits": [greet_sha],
        "title": "session",
        "files": [],
    }
    assert sed_line["threads"][0]["thread_id"] == alice_thread  # found through the sed -i
    assert sed_line["threads"][0]["match"] == "file"
    assert sed_line["threads"][0]["message_index"] == 2
    assert shout_line["threads"][0]["thread_id"] == bob_thread
    assert shout_line["threads"][0]["match"] == "line"
    assert bob_private not in named(lines)
    # the tab-separated form, piped
    piped = alice("blame", f"{app_py}:2")
    assert piped.out.split("\t")[:4] == [greet_sha, alice_thread, "line", "1"]
    # why: bob sees his private thread, alice does not
    bob = make_person(tmp_path / "bob")
    assert bob("login", "--server", live_server.url, "--token", bob_token).code == 0
    why_alice = json.loads(alice("why", greet_sha, "--json").out)
    assert {t["thread_id"] for t in why_alice["threads"]} == {alice_thread}
    why_bob = json.loads(bob("why", greet_sha, "--json").out)
    assert {t["thread_id"] for t in why_bob["threads"]} == {alice_thread, bob_private}

    # a rebase changes greet's SHA: the line's text still finds alice's session
    git(repo, "checkout", "-q", "-b", "feature", base)
    feature_py = repo / "feature.py"
    feature_py.write_text("FEATURE = 'rebased flag'\n")
    feature_sha = commit_all(repo, "feature")
    feature_thread = upload(
        live_server.url,
        alice_token,
        session(
            repo,
            [claude_edit(feature_py, "", "FEATURE = 'rebased flag'")],
            [feature_sha],
            "organization",
        ),
    )
    git(repo, "rebase", "-q", "main")
    rebased = blamed(alice, f"{feature_py}:1")[0]
    assert rebased["commit"] != feature_sha
    assert rebased["threads"][0]["thread_id"] == feature_thread
    assert rebased["threads"][0]["match"] == "line"

    # offline, from alice's own machine: her local copy answers
    alice.agent().save(
        Thread.model_validate(
            session(repo, [claude_edit(app_py, "", greet)], [greet_sha], "private")
        )
    )
    offline = blamed(alice, f"{app_py}:2", "--offline")[0]
    assert offline["threads"][0]["match"] == "line"


def test_hook_writes_the_trailer_and_blame_reads_it_first(
    tmp_path: Path, live_server: LiveServer
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    person = make_person(tmp_path / "me")
    hook = subprocess.run(
        [str(LOOMSYNC), "hooks", "install"],
        cwd=repo,
        env=person.env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert hook.returncode == 0, hook.stderr
    live = Thread.model_validate(
        session(repo, [claude_edit(repo / "a.txt", "", "alpha line")], [], "private")
    )
    live_id = str(person.agent().save(live).id)
    (repo / "a.txt").write_text("alpha line\n")
    sha = commit_all(repo, "add a", env=person.env)
    message = git(repo, "log", "-1", "--format=%B")
    assert f"Loomsync-Thread: {live_id}" in message
    lines = blamed(person, f"{repo / 'a.txt'}:1", "--offline")
    assert lines[0]["commit"] == sha
    assert lines[0]["threads"][0]["thread_id"] == live_id
    assert lines[0]["threads"][0]["match"] == "trailer"
    # a stale session (outside the live window) adds nothing
    (repo / "b.txt").write_text("b\n")
    commit_all(repo, "add b", env={**person.env, "LOOMSYNC_LIVE_MINUTES": "0.0000001"})
    assert "Loomsync-Thread" not in git(repo, "log", "-1", "--format=%B")


def test_blame_and_why_online_match_the_remote_as_the_agent_recorded_it(
    tmp_path: Path, live_server: LiveServer, settings: Settings
) -> None:
    """Codex records ``repository_url`` as git printed it (``git@…:….git``), the work tree's
    origin is ``https://….git``: the server still names the thread (a newcomer's finding)."""
    token = create_token(settings, f"carol-{uuid.uuid4().hex[:8]}")
    repo = tmp_path / "spelled"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "https://github.com/Team/Spelled.git")
    (repo / "app.py").write_text("def hello():\n    return 'spelled'\n")
    sha = commit_all(repo, "hello")
    doc = session(repo, [codex_patch("app.py", "def hello():")], [sha], "private")
    recorded = upload(
        live_server.url,
        token,
        {
            **doc,
            "git_remote_url": "git@github.com:team/spelled.git",
            "workspace_root": "/elsewhere",
        },
    )
    carol = make_person(tmp_path / "carol")
    assert carol("login", "--server", live_server.url, "--token", token).code == 0
    online = json.loads(carol("blame", f"{repo / 'app.py'}:1", "--json").out)
    assert online["source"] == "server"
    assert [t["thread_id"] for t in online["lines"][0]["threads"]] == [recorded]
    why = json.loads(carol("why", sha, "--json").out)
    assert [t["thread_id"] for t in why["threads"]] == [recorded]
    # and offline, from this machine's copy (pulled by the same spelling-blind match)
    assert carol("sync").code == 0
    offline = json.loads(carol("blame", f"{repo / 'app.py'}:1", "--json", "--offline").out)
    assert [t["thread_id"] for t in offline["lines"][0]["threads"]] == [recorded]


def test_targets_that_look_odd(tmp_path: Path) -> None:
    """A file named like a target (``a:1``) is that file; a symlink leading out of the work
    tree is blamed as the link, never a traceback; line 0 is refused in words."""
    repo = tmp_path / "odd"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "a:1").write_text("colon file\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("not in git\n")
    (repo / "link.txt").symlink_to(outside)
    commit_all(repo, "odd names")
    person = make_person(tmp_path / "me")
    named_like_target = person("blame", str(repo / "a:1"), "--json", "--offline")
    assert named_like_target.code == 0, named_like_target.err
    assert json.loads(named_like_target.out)["file"] == "a:1"
    link = person("blame", str(repo / "link.txt"), "--json", "--offline")
    assert link.code == 0, link.err
    assert json.loads(link.out)["file"] == "link.txt"
    zero = person("blame", f"{repo / 'a:1'}:0")
    assert zero.code == 2
    assert "LINE starts at 1" in zero.err
    assert "Traceback" not in zero.err + link.err


def test_hook_stamps_no_replayed_commit_and_no_future_session(
    tmp_path: Path, live_server: LiveServer
) -> None:
    """A rebase replays commits written earlier: none gets the live session's trailer; a
    session dated ten years ahead is no live session."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    person = make_person(tmp_path / "me")
    for n in range(3):
        (repo / f"f{n}.txt").write_text(f"{n}\n")
        commit_all(repo, f"before {n}")
    install = subprocess.run(
        [str(LOOMSYNC), "hooks", "install"], cwd=repo, env=person.env, capture_output=True
    )
    assert install.returncode == 0
    future = session(repo, [claude_edit(repo / "x.txt", "", "x")], [], "private")
    future["last_activity_at"] = datetime(2036, 1, 1, tzinfo=UTC).isoformat()
    person.agent().save(Thread.model_validate(future))
    (repo / "g.txt").write_text("g\n")
    commit_all(repo, "while a future-dated session exists", env=person.env)
    assert "Loomsync-Thread" not in git(repo, "log", "-1", "--format=%B")
    live = session(repo, [claude_edit(repo / "y.txt", "", "y")], [], "private")
    live_id = str(person.agent().save(Thread.model_validate(live)).id)
    editor = {"GIT_SEQUENCE_EDITOR": "sed -i '1s/^pick/reword/'", "GIT_EDITOR": "true"}
    git(repo, "rebase", "-q", "-i", "--root", env={**person.env, **editor})
    history = git(repo, "log", "--format=%(trailers:key=Loomsync-Thread,valueonly)")
    assert live_id not in history
    (repo / "h.txt").write_text("h\n")
    commit_all(repo, "the live session's own commit", env=person.env)
    assert f"Loomsync-Thread: {live_id}" in git(repo, "log", "-1", "--format=%B")
