"""Issue 16, items 2 and 3: exit codes that tell the truth, and a refused token that is not
"offline". The ``loomsync`` CLI as a subprocess with a fresh HOME at 80 columns (piped, and on
a pseudo terminal where it asks), against a real server: refusals (a thread another user
owns: 403), an expired, garbage or foreign-signed token (401), a stopped server. The codes are
loomsync/cli/exits.py's table (docs/client.md "Exit codes")."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from pydantic import SecretStr

from app.auth import create_token
from app.config import Settings
from loomsync.cli import messages
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Thread
from tests.client.conftest import (
    LiveServer,
    Person,
    login,
    make_client,
    on_a_terminal_answering,
)
from tests.importers.corpus import TRANSCRIPTS

TUI_LOG = TRANSCRIPTS / "codex-tui-session-log" / "binary-size-log.jsonl"

ANSI = re.compile(r"\x1b\[[0-9;]*m")
REFUSED_BY_OWNER = "refused by the server (403): Only the thread's owner or an admin may change it"


def _notes(title: str = "Wombat notes", **fields: object) -> Thread:
    return Thread.model_validate(
        {
            "id": str(ThreadId.new()),
            "metadata": {"title": title},
            "conversation": {"messages": [{"role": "user", "content": f"about {title.lower()}"}]},
            **fields,
        }
    )


@pytest.fixture
def narrow(person: Person) -> Person:
    """The person at 80 columns."""
    person.env["COLUMNS"] = "80"
    return person


@pytest.fixture
def bobs_thread(live_server: LiveServer, settings: Settings) -> str:
    """A public thread of another user (bob) on the shared server: readable, not changeable."""
    suffix = uuid.uuid4().hex[:10]
    bob = create_token(settings, f"bob-{suffix}", org=f"other-{suffix}")
    thread = _notes("Bob's public notes", visibility="public")
    make_client(live_server.url, bob).put_thread(thread, base_version=0)
    return str(thread.id)


def _tokens(settings: Settings) -> dict[str, str]:
    suffix = uuid.uuid4().hex[:10]
    other = settings.model_copy(update={"jwt_secret": SecretStr("another-secret-" + "x" * 32)})
    return {
        "expired": create_token(settings, f"alice-{suffix}", org="acme", ttl_seconds=-60),
        "garbage": "not-a-token",
        "another key": create_token(other, f"alice-{suffix}", org="acme"),
    }


# -- item 2: a refusal is exit code 1, counted, and can be dropped ------------------------------


def test_a_refused_share_exits_1_and_sync_counts_and_drops_it(
    narrow: Person, live_server: LiveServer, account: str, bobs_thread: str
) -> None:
    person = narrow
    assert login(person, live_server, account).code == 0
    shared = person("share", bobs_thread, "--visibility", "private")
    assert (shared.code, shared.out) == (1, "")
    assert shared.err == (
        f"error: {bobs_thread}: visible to only you (private), not shared with support; done on "
        f"this machine only: {REFUSED_BY_OWNER}. The change waits in the sync queue as failed: "
        f"`loomsync sync --retry-failed` tries it again, `loomsync sync --drop {bobs_thread}` "
        "drops it.\n"
    )

    synced = person("sync", "--no-pull")  # the failed entry is counted, not "failed 0"
    assert synced.code == 1, synced.err
    assert synced.out.splitlines() == [
        "Sent 0, pulled 0, failed 1, forked 0; 0 still pending.",
        f"{bobs_thread} failed (patch): {REFUSED_BY_OWNER}.",
        "`loomsync sync --retry-failed` tries the failed entries again; `loomsync sync --drop "
        "ID` (or --discard-failed) drops them, the threads here stay as they are.",
    ]
    assert person("sync", "--status").out.splitlines()[0] == "0 pending, 1 failed."
    as_json = json.loads(person("sync", "--no-pull", "--json").out)
    assert (as_json["failed"], as_json["pending"], as_json["exit_code"]) == (1, 0, 1)

    short = bobs_thread[2:10]
    piped = person("sync", "--drop", short)  # stdin is not a terminal: nothing could ask
    assert piped.code == 1
    assert piped.out == (
        f"{bobs_thread} (patch) failed: {REFUSED_BY_OWNER}. Dropping it: the server does not "
        "get this change (visibility); the thread on this machine keeps it, and stays as it "
        "is.\n"
    )
    assert piped.err == (
        "error: nothing dropped: add --yes to drop the 1 failed sync entry (stdin is not a "
        "terminal)\n"
    )
    dropped = person("sync", "--drop", short, "--yes")
    assert dropped.code == 0, dropped.err
    assert dropped.out.splitlines()[-1] == (
        "Dropped 1 failed sync entry; the threads on this machine are unchanged (saving one "
        "again queues it again)."
    )
    after = person("sync", "--no-pull")  # the dropped change is not queued again by a rescan
    assert (after.code, after.out) == (
        0,
        "Sent 0, pulled 0, failed 0, forked 0; 0 still pending.\n",
    )
    kept = json.loads(person("show", short, "--json").out)
    assert kept["visibility"] == "private"  # the local thread stays as it is
    server = make_client(live_server.url, account).get_thread(bobs_thread)
    assert server.visibility == "public"


def test_archive_and_delete_refused_by_the_server_exit_1(
    narrow: Person, live_server: LiveServer, account: str, bobs_thread: str
) -> None:
    person = narrow
    assert login(person, live_server, account).code == 0
    archived = person("archive", bobs_thread)
    assert (archived.code, archived.out) == (1, "")
    assert archived.err.startswith(
        f"error: Archived {bobs_thread}; done on this machine only: {REFUSED_BY_OWNER}."
    )
    deleted = person("delete", bobs_thread, "--yes")
    assert (deleted.code, deleted.out) == (1, "")
    assert deleted.err.startswith(
        f"error: Deleted {bobs_thread}; done on this machine only: {REFUSED_BY_OWNER}."
    )
    status = person("sync", "--status")
    assert status.out.splitlines()[0] == "0 pending, 1 failed."  # the delete replaced the patch
    discarded = person("sync", "--discard-failed", "--yes")
    assert discarded.code == 0, discarded.err
    assert discarded.out.splitlines()[0] == (
        f"{bobs_thread} (delete) failed: {REFUSED_BY_OWNER}. Dropping it: the server keeps its "
        "copy of the thread (it stays deleted on this machine)."
    )
    assert person("sync", "--status").out == "Nothing to sync: every change is on the server.\n"
    assert person("sync", "--discard-failed", "--yes").out == (
        "No failed sync entries: nothing to drop.\n"
    )


def test_drop_asks_on_a_terminal(
    narrow: Person, live_server: LiveServer, account: str, bobs_thread: str
) -> None:
    person = narrow
    assert login(person, live_server, account).code == 0
    assert person("archive", bobs_thread).code == 1
    code, out = on_a_terminal_answering(person, "sync", "--drop", bobs_thread, answer="n")
    assert code == 1
    asked = ANSI.sub("", out.decode()).replace("\r\n", "\n")  # the terminal's colours
    assert f"{bobs_thread} (patch) failed: {REFUSED_BY_OWNER}. Dropping it: " in asked
    assert "Drop the 1 failed sync entry? [y/N]:" in asked
    assert asked.rstrip().endswith("Nothing dropped.")
    assert person("sync", "--status").out.splitlines()[0] == "0 pending, 1 failed."
    code, out = on_a_terminal_answering(person, "sync", "--drop", bobs_thread, answer="y")
    assert code == 0, out
    assert "Dropped 1 failed sync entry;" in ANSI.sub("", out.decode())
    assert person("sync", "--status").out == (  # the archive here is not on the server
        "Nothing queued, but not sent: 1 thread whose failed change was dropped, saved here "
        f"only (saving one again queues it): {bobs_thread}.\n"
    )


def test_drop_names_only_threads_with_a_failed_entry(narrow: Person) -> None:
    person = narrow
    saved = person.agent().save(_notes())
    missing = person("sync", "--drop", str(saved.id)[2:10], "--yes")
    assert missing.code == 1
    assert missing.err == (
        f"error: no failed sync entry's thread id starts with {str(saved.id)[2:10]} (`loomsync "
        "sync --status` lists them); nothing dropped\n"
    )
    whole = person("sync", "--drop", str(saved.id), "--yes")
    assert whole.code == 1
    assert whole.err == (
        f"error: {saved.id} has no failed sync entry to drop (`loomsync sync --status` lists "
        "them); nothing dropped\n"
    )
    assert person("sync", "--status").out.splitlines()[0] == "1 pending, 0 failed."
    usage = person("sync", "--status", "--discard-failed")
    assert usage.code == 2


# -- item 3: a refused token is not "offline" -------------------------------------------------


@pytest.mark.parametrize("kind", ["expired", "garbage", "another key"])
def test_a_refused_token_says_log_in_and_exits_3(
    narrow: Person, live_server: LiveServer, account: str, settings: Settings, kind: str
) -> None:
    person = narrow
    bad = _tokens(settings)[kind]
    noted = person("login", "--server", live_server.url, "--token", bad)
    assert noted.code == 3  # checked: refused, nothing stored
    assert not person.paths.token_file.exists()
    stored = person("login", "--server", live_server.url, "--token", bad, "--no-verify")
    assert stored.code == 0, stored.err
    saved = person.agent().save(_notes())
    refused = messages.token_refused(live_server.url)
    said = refused.split(" (", 1)[0]  # "the server refused the token"
    login_hint = f"run `loomsync login --server {live_server.url} --token TOKEN` with a new token"

    shared = person("share", str(saved.id), "--visibility", "private")
    assert (shared.code, shared.out) == (3, "")
    assert shared.err.startswith(
        f"error: {saved.id}: visible to only you (private), not shared with support; saved "
        f"locally, not sent: {said} ("
    )
    assert login_hint in shared.err
    assert "reachable" not in shared.err

    found = person("search", "wombat")
    assert found.code == 3
    assert found.out.splitlines()[0] == "1 thread found on this machine for 'wombat'"
    assert found.err.startswith(f"error: {said} (")
    assert found.err.endswith(f"{login_hint}; searched this machine's threads instead.\n")
    as_json = person("search", "wombat", "--json")
    assert as_json.code == 3
    assert json.loads(as_json.out)["token_refused"] is True

    listed = person("list", "--server")
    assert (listed.code, listed.out) == (3, "")
    assert listed.err.startswith(f"error: {said} (")
    assert listed.err.endswith(f"{login_hint}.\n")

    synced = person("sync", "--no-pull")
    assert synced.code == 3
    lines = synced.out.splitlines()
    assert lines[0] == "Sent 0, pulled 0, failed 0, forked 0; 1 still pending."
    assert lines[1].startswith(f"{saved.id} waiting for a new login: {said} (")
    assert synced.err.endswith(f"{login_hint}; the changes wait here.\n")
    status = person("sync", "--status")
    assert status.out.splitlines()[0] == "1 pending (1 waiting for a new login), 0 failed."

    assert login(person, live_server, account).code == 0  # a new login: the entry goes
    again = person("sync", "--no-pull")
    assert (again.code, again.out) == (
        0,
        "Sent 1, pulled 0, failed 0, forked 0; 0 still pending.\n",
    )
    server = make_client(live_server.url, account).get_thread(str(saved.id))
    assert server.visibility == "private"


def test_an_import_whose_sync_meets_a_refused_token_exits_3(
    narrow: Person, live_server: LiveServer, settings: Settings
) -> None:
    person = narrow
    bad = _tokens(settings)["expired"]
    assert person("login", "--server", live_server.url, "--token", bad, "--no-verify").code == 0
    imported = person("import", "codex-tui", str(TUI_LOG))
    assert imported.code == 3
    assert imported.out.startswith("Imported 1 file(s), 2 thread(s): 2 created")
    assert imported.err.endswith(
        f"run `loomsync login --server {live_server.url} --token TOKEN` with a new token; the "
        "imported threads are sent after that.\n"
    )
    assert "reachable" not in imported.err
    status = person("sync", "--status").out.splitlines()[0]
    assert status.startswith("2 pending (")  # they wait for the login, not failed


# -- offline: a local-first success that says so; commands that need the server exit 4 ---------


def test_offline_edits_exit_0_and_say_so_while_sync_exits_4(
    narrow: Person, own_server: LiveServer, account: str
) -> None:
    person = narrow
    assert login(person, own_server, account).code == 0
    saved = person.agent().save(_notes())
    assert person("sync", "--no-pull").code == 0
    own_server.stop()

    archived = person("archive", str(saved.id))
    assert (archived.code, archived.err) == (0, "")
    assert archived.out == (
        f"Archived {saved.id}; saved locally; will sync when the server is reachable.\n"
    )
    synced = person("sync")
    assert synced.code == 4
    assert synced.out.splitlines()[0] == "Sent 0, pulled 0, failed 0, forked 0; 1 still pending."
    listed = person("list", "--server")
    assert (listed.code, listed.out) == (4, "")
    assert listed.err.startswith(f"error: cannot reach {own_server.url} (")
    found = person("search", "wombat")
    assert found.code == 0
    assert found.err.startswith("server unreachable (")

    checked = person("login", "--server", own_server.url, "--token", account)
    assert checked.code == 4  # the token cannot be checked: nothing changes
    assert checked.err.startswith(f"error: cannot reach {own_server.url} (")

    own_server.start()
    back = person("sync", "--no-pull")
    assert (back.code, back.out) == (0, "Sent 1, pulled 0, failed 0, forked 0; 0 still pending.\n")


def test_a_bad_argument_value_exits_2_whichever_argument(narrow: Person) -> None:
    """The table's rule (loomsync/cli/exits.py, issue 16 review item 4): a value that is not
    one (an id, a message number, a cursor) is a usage mistake, exit 2 as typer's (a missing
    argument, an unknown option), said in one ``error: …`` line without typer's usage box."""
    person = narrow
    saved = str(person.agent().save(_notes()).id)
    for args, words in (
        (["show", "5"], "error: '5' is not a thread id"),
        (["show", saved, "--from", "99"], "error: --from 99: the thread has "),
        (["show", saved, "--from", "0", "--to", "99"], "error: --from 0 --to 99: the thread "),
        (["list", "--cursor", "nope"], "error: 'nope' is not a cursor of this machine's list"),
    ):
        bad = person(*args)
        assert (bad.code, bad.out) == (2, ""), (args, bad.err)
        assert bad.err.startswith(words), (args, bad.err)
        assert "Usage:" not in bad.err
    usage = person("show", saved, "--frm", "1")
    assert usage.code == 2  # an unknown option: a usage mistake
