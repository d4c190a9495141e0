"""The ``loomsync`` command, driven as a person would: a subprocess with a fresh HOME and XDG
folders, against the real server. Each check matches what docs/client.md says it prints."""

from __future__ import annotations

import json
import stat

import pytest

from loomsync import Thread
from loomsync.core.document.ids import ThreadId
from tests.client.conftest import (
    BODY_LIMIT,
    LiveServer,
    Person,
    free_port,
    login,
    make_client,
)


def thread(title: str, text: str, **fields: object) -> Thread:
    return Thread.model_validate(
        {
            "metadata": {"title": title, "tags": ["cli"]},
            "workspace_root": "/home/me/webapp",
            "git_branch": "feature/auth",
            "conversation": {
                "messages": [
                    {"role": "user", "content": text},
                    {
                        "role": "assistant",
                        "content": "Let me look.",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "tool_name": "shell",
                                "arguments_json": {"command": ["ls"]},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "tool_call_id": "c1",
                        "tool_name": "shell",
                        "content": "login.py\nREADME.md",
                    },
                ]
            },
            **fields,
        }
    )


def lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


def test_a_session_login_sync_list_show_search_share_export(
    person: Person, live_server: LiveServer, account: str
) -> None:
    assert person("list").out == "No threads yet.\n"

    logged = login(person, live_server, account)
    assert logged.code == 0, logged.err
    claims_sub = logged.out.split(" as ", 1)[1].split(" ", 1)[0]
    assert lines(logged.out) == [
        f"Logged in to {live_server.url} as {claims_sub} (org {claims_sub.replace('alice', 'acme')}).",
        f"Token saved to {person.paths.token_file} (mode 0600).",
    ]
    assert stat.S_IMODE(person.paths.token_file.stat().st_mode) == 0o600

    agent = person.agent()
    login_bug = agent.save(
        thread("Fix the login redirect", "The login page loops on quokka tokens")
    )
    build = agent.save(thread("Speed up the build", "webpack is slow"))
    ids = {str(login_bug.id), str(build.id)}

    status = person("sync", "--status")
    assert lines(status.out)[0] == "2 pending, 0 failed."
    assert all(i in status.out for i in ids)

    synced = person("sync")
    assert (synced.code, lines(synced.out)) == (
        0,
        ["Sent 2, pulled 0, failed 0, forked 0; 0 still pending."],
    )
    assert person("sync", "--status").out == "Nothing to sync: every change is on the server.\n"

    listing = person("list")
    header = lines(listing.out)[0].split("\t")  # piped: tab-separated (issue 16 item 1)
    assert header == ["ID", "TITLE", "MSGS", "LAST ACTIVITY", "BRANCH", "SYNC"]
    rows = [line.split("\t") for line in lines(listing.out) if line.startswith("T-")]
    assert {row[0] for row in rows} == ids
    assert all(row[-1] == "synced" and row[2] == "3" for row in rows)
    as_json = json.loads(person("list", "--json").out)
    assert {(row["id"], row["sync"], row["message_count"]) for row in as_json} == {
        (i, "synced", 3) for i in ids
    }

    shown = lines(person("show", str(login_bug.id)).out)
    assert shown[:4] == [
        "Fix the login redirect",
        f"Thread: {login_bug.id}",
        "Workspace: /home/me/webapp",
        "Git: feature/auth",
    ]
    assert "The login page loops on quokka tokens" in shown
    assert any(line.startswith("#0 user ───") for line in shown)
    assert '→ shell {"command": ["ls"]}' in shown
    document = json.loads(person("show", str(login_bug.id), "--json").out)
    assert (
        document["conversation"]["messages"][0]["content"]
        == "The login page loops on quokka tokens"
    )

    found = person("search", "quokka")
    assert lines(found.out)[0] == "1 thread found on the server for 'quokka'"
    assert lines(found.out)[1].startswith(f"{login_bug.id}  Fix the login redirect  score ")
    assert lines(found.out)[2].startswith("    message 0: ")
    assert "page loops on quokka tokens" in lines(found.out)[2]

    shared = person("share", str(login_bug.id), "--visibility", "public", "--support")
    assert shared.out == (
        f"{login_bug.id}: visible to everyone (public), shared with support; synced.\n"
    )
    server_copy = make_client(live_server.url, account).get_thread(str(login_bug.id))
    assert (server_copy.visibility, server_copy.is_shared_with_support) == ("public", True)

    markdown = person("export", str(login_bug.id), "--format", "markdown").out
    assert markdown.startswith("# Fix the login redirect\n\n- **Thread:** " + str(login_bug.id))
    assert "## User\n\nThe login page loops on quokka tokens" in markdown
    assert "**Tool call** `shell`:" in markdown
    assert "## Tool result (`shell`)\n\n```\nlogin.py\nREADME.md\n```" in markdown

    assert person("logout").out == f"Logged out of {live_server.url}.\n"


def test_sync_status_shows_why_an_entry_failed(
    person: Person, live_server: LiveServer, account: str
) -> None:
    person.env.update(LOOMSYNC_SERVER_URL=live_server.url, LOOMSYNC_TOKEN=account)
    agent = person.agent()
    big = agent.save(thread("Huge tool output", "x" * BODY_LIMIT))
    small = agent.save(thread("Small", "fine"))

    synced = person("sync")
    assert synced.code == 1
    assert lines(synced.out)[0] == "Sent 1, pulled 0, failed 1, forked 0; 0 still pending."
    assert lines(synced.out)[1].startswith(f"{big.id} failed: refused by the server (413)")

    status = person("sync", "--status")
    assert lines(status.out)[0] == "0 pending, 1 failed."
    row = next(line for line in lines(status.out) if line.startswith(str(big.id)))
    assert row.split()[1:4] == ["save", "failed", "1"]
    assert "413" in status.out
    assert str(small.id) not in status.out
    entries = json.loads(person("sync", "--status", "--json").out)
    assert [(e["thread_id"], e["failed_at"] is not None) for e in entries] == [(str(big.id), True)]


def test_search_falls_back_to_this_machine_and_says_so(person: Person, account: str) -> None:
    saved = person.agent().save(thread("Offline notes", "remember the wombat"))
    away = {
        "LOOMSYNC_SERVER_URL": f"http://127.0.0.1:{free_port()}",
        "LOOMSYNC_TOKEN": account,
        "LOOMSYNC_RETRIES": "0",
    }
    result = person("search", "wombat", env=away)
    assert result.code == 0
    assert result.err.startswith("server unreachable (cannot reach http://127.0.0.1:")
    assert result.err.rstrip().endswith("searched this machine's threads instead.")
    assert lines(result.out)[0] == "1 thread found on this machine for 'wombat'"
    assert lines(result.out)[1].startswith(f"{saved.id}  Offline notes")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ["show", "T-019b0000-0000-7000-8000-00000000dead"],
            1,
            "error: no thread T-019b0000-0000-7000-8000-00000000dead on this machine (`loomsync "
            "list` shows them; log in to reach the server's: `loomsync login --server URL "
            "--token TOKEN`).",
        ),
        (
            ["show", "not-an-id"],
            2,  # a usage mistake (newcomer finding 13)
            "error: 'not-an-id' is not a thread id: give the id (T-…) or at least 4 of its first "
            "hex digits, as `loomsync list` shows",
        ),
        (["sync"], 3, "error: not logged in: run `loomsync login --server URL --token TOKEN`"),
    ],
)
def test_errors_are_one_red_line_and_their_exit_code(
    person: Person, args: list[str], code: int, message: str
) -> None:
    """1: the effect did not happen; 2: a usage mistake; 3: not logged in
    (loomsync/cli/exits.py)."""
    result = person(*args)
    assert (result.code, result.err, result.out) == (code, message + "\n", "")


def test_login_with_a_refused_token_stores_nothing(person: Person, live_server: LiveServer) -> None:
    result = login(person, live_server, "not-a-token")
    assert result.code == 3  # token refused: loomsync/cli/exits.py
    assert result.err.startswith("error: nothing saved: the server refused the token (")
    assert "(401)" not in result.err  # the code says nothing the words do not
    assert not person.paths.token_file.exists()
    assert person("--version").out == "loomsync 0.1.0\n"


def test_list_writes_a_four_digit_year(
    person: Person, live_server: LiveServer, account: str
) -> None:
    """Year 1 was shown ``1-01-01 00:00`` (strftime): the display reuses the model's format."""
    first = thread(
        "Ancient", "old", id=str(ThreadId.new()), last_activity_at="0001-01-01T00:00:00Z"
    )
    make_client(live_server.url, account).put_thread(first, base_version=0)
    assert login(person, live_server, account).code == 0
    listed = person("list", "--server")
    assert listed.code == 0, listed.err
    row = next(line for line in lines(listed.out) if line.startswith(str(first.id)))
    assert row.split("\t")[3] == "0001-01-01 00:00"


def test_a_missing_thread_on_the_server_reads_once(
    person: Person, live_server: LiveServer, account: str
) -> None:
    """Was ``… 404 Not found: No such thread. not found``: the status and title doubled."""
    assert login(person, live_server, account).code == 0
    missing = "T-00000000-0000-0000-0000-000000000000"
    result = person("show", missing)
    assert (result.code, result.out) == (1, "")
    assert result.err.count("\n") == 1
    assert (
        result.err == f"error: no thread {missing} on the server (or it is not shared with you).\n"
    )
