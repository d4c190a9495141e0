"""Newcomer findings 1, 3, 4, 8, 9, 10, 11 and 14 (/work/wt/newcomer-findings.md; issue 16):
the ``loomsync`` CLI run as a subprocess with a fresh HOME at 80 columns, piped (and on a
pseudo terminal where the TTY matters), against a real server.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from app.auth import create_token
from app.config import Settings
from loomsync.cli.render import WAITING_SHOWN
from loomsync.core.document.ids import ThreadId
from tests.client.conftest import (
    BODY_LIMIT,
    LiveServer,
    Person,
    make_client,
    make_person,
    on_a_terminal_answering,
    with_turns,
)
from tests.client.test_cli_for_people import titled


@pytest.fixture
def someone(tmp_path: Path) -> Person:
    """A new user's HOME, at 80 columns."""
    return make_person(tmp_path / "someone", columns=80)


def _token(settings: Settings, **kwargs: int) -> str:
    suffix = uuid.uuid4().hex[:8]
    return create_token(settings, f"sam-{suffix}", org=f"acme-{suffix}", **kwargs)


def test_login_warns_that_loomsync_token_shadows_it(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 1: with a stale LOOMSYNC_TOKEN set, login says the variable wins, and the
    "log in again" advice names the variable instead of looping back to login."""
    stale = {"LOOMSYNC_TOKEN": _token(settings, ttl_seconds=-3600)}
    fresh = _token(settings)
    done = someone("login", "--server", live_server.url, "--token", fresh, env=stale)
    assert done.code == 0
    assert "warning: LOOMSYNC_TOKEN overrides the saved login in this shell" in done.err
    assert "`unset LOOMSYNC_TOKEN` to use this login" in done.err
    shown = someone("status", env=stale)
    assert shown.code == 3
    last = shown.out.splitlines()[-1]
    assert "LOOMSYNC_TOKEN" in last
    assert "`unset LOOMSYNC_TOKEN`" in last
    assert "run `loomsync login" not in last  # that advice cannot help
    someone.agent().save(titled("Written under a stale variable"))
    synced = someone("sync", env=stale)
    assert synced.code == 3
    assert "LOOMSYNC_TOKEN" in synced.err
    # without the variable the saved login works and login says nothing more
    assert someone("status").code == 0
    again = someone("login", "--server", live_server.url, "--token", fresh)
    assert (again.code, again.err) == (0, "")
    # a variable equal to what is saved is harmless: no warning
    same = someone(
        "login", "--server", live_server.url, "--token", fresh, env={"LOOMSYNC_TOKEN": fresh}
    )
    assert (same.code, same.err) == (0, "")


def test_list_mine_leaves_out_a_thread_of_someone_else_read_with_show(
    tmp_path: Path, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 3: Ben reads Ann's organization thread with ``show`` (which keeps a copy here);
    his ``list`` (mine, the default) does not show it as his, says that it left it out and
    where to see it; his own threads, synced or never sent, are listed."""
    suffix = uuid.uuid4().hex[:6]
    org = f"acme-{suffix}"
    ann = make_person(tmp_path / "ann", columns=80)
    ben = make_person(tmp_path / "ben", columns=80)
    for who in (ann, ben):
        token = create_token(settings, f"{who.home.name}-{suffix}", org=org)
        assert who("login", "--server", live_server.url, "--token", token).code == 0
    theirs = ann.agent().save(titled("Ann's roadmap", visibility="organization"))
    assert ann("sync").code == 0
    ben.agent().save(titled("Ben's notes"))
    assert ben("sync").code == 0
    ben.agent().save(titled("Ben's draft"))  # never sent: it has no owner yet, and is his
    assert ben("show", str(theirs.id), "--no-pager").code == 0
    listed = ben("list")
    assert listed.code == 0, listed.err
    assert str(theirs.id) not in listed.out
    assert "Ben's notes" in listed.out
    assert "Ben's draft" in listed.out
    assert listed.err == (
        "Not listed: 1 thread of other people read here with `loomsync show`; "
        "`loomsync list --scope visible` lists every thread you may read.\n"
    )
    assert str(theirs.id) not in ben("list", "--json").out
    visible = ben("list", "--scope", "visible")
    assert str(theirs.id) in visible.out
    assert ann("list").err == ""  # her own thread is hers
    assert str(theirs.id) in ann("list").out


def test_a_dropped_save_never_sent_reads_not_sent(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 4: a save the server refused for good (413: too large) and then dropped is
    neither ``local`` ("sent once you log in") nor on the server: ``list`` says ``not sent``
    and ``sync --status`` names it instead of "every change is on the server"; saving it
    again queues it again."""
    assert someone("login", "--server", live_server.url, "--token", _token(settings)).code == 0
    huge = someone.agent().save(
        titled(
            "Huge paste",
            conversation={"messages": [{"role": "user", "content": "x" * (BODY_LIMIT + 1000)}]},
        )
    )
    thread_id = str(huge.id)
    assert someone("sync").code == 1  # 413: failed for good
    dropped = someone("sync", "--drop", thread_id, "--yes")
    assert dropped.code == 0, dropped.err
    listed = someone("list")
    row = next(line for line in listed.out.splitlines() if line.startswith(thread_id))
    assert row.split("\t")[-1] == "not sent"
    status = someone("sync", "--status")
    assert status.code == 0
    assert "every change is on the server" not in status.out
    assert status.out == (
        "Nothing queued, but not sent: 1 thread whose failed change was dropped, saved here "
        f"only (saving one again queues it): {thread_id}.\n"
    )
    agent = someone.agent()
    agent.save(with_turns(agent.load(thread_id), "one more"))  # saved again: queued again
    assert "not sent" not in someone("list").out
    assert someone("sync", "--status").out.splitlines()[0] == "1 pending, 0 failed."


def test_sync_names_every_waiting_thread_bounded(
    someone: Person, own_server: LiveServer, settings: Settings
) -> None:
    """Finding 8: with the server down, ``sync`` names each of the threads that wait, not
    only the one it tried; past :data:`~loomsync.cli.render.WAITING_SHOWN` it says how many
    more."""
    assert someone("login", "--server", own_server.url, "--token", _token(settings)).code == 0
    agent = someone.agent()
    saved = [str(agent.save(titled(f"Notes {i}")).id) for i in range(3)]
    own_server.stop()
    done = someone("sync")
    assert done.code == 4
    named = [line for line in done.out.splitlines() if line.startswith("T-")]
    assert sorted(line.split(" ")[0] for line in named) == sorted(saved)
    assert all(" pending" in line for line in named)
    many = saved + [str(agent.save(titled(f"More {i}")).id) for i in range(WAITING_SHOWN)]
    done = someone("sync")
    named = [line for line in done.out.splitlines() if line.startswith("T-")]
    assert len(named) == WAITING_SHOWN
    assert {line.split(" ")[0] for line in named} <= set(many)
    assert done.out.splitlines()[-1] == (
        f"… and {len(many) - WAITING_SHOWN} more (`loomsync sync --status` lists them)."
    )


def test_a_drop_answered_no_exits_1_and_prints_its_text_as_written(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 9: at a terminal, ``sync --drop ID`` answered ``n`` exits 1 (a question answered
    no, docs/client.md's exit table), and the explanation (an id, a 403, brackets) carries no
    colour rich's highlighter would add: only what the command styles itself."""
    suffix = uuid.uuid4().hex[:8]
    bob = create_token(settings, f"bob-{suffix}", org=f"other-{suffix}")
    theirs = make_client(live_server.url, bob).put_thread(
        titled("Bob's public notes", str(ThreadId.new()), visibility="public"), base_version=0
    )
    assert someone("login", "--server", live_server.url, "--token", _token(settings)).code == 0
    thread_id = str(theirs.id)
    assert someone("archive", thread_id).code == 1  # 403: only the owner may change it
    code, out = on_a_terminal_answering(someone, "sync", "--drop", thread_id, answer="n")
    assert code == 1
    text = out.decode()
    assert f"{thread_id} (patch) failed: refused by the server" in text
    assert "\x1b[" not in text  # no style at all: none of this output is styled on purpose
    assert text.rstrip().endswith("Nothing dropped.")
    code, out = on_a_terminal_answering(someone, "logout")
    assert code == 0
    assert out.decode().replace("\r\n", "\n") == f"Logged out of {live_server.url}.\n"


def test_network_errors_are_in_words_and_claim_no_kept_change(
    someone: Person, own_server: LiveServer, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 11: offline, commands that changed nothing do not say changes are kept; no
    exception class or errno reaches the user; https to a plain-http port suggests http://;
    a refused login names no HTTP code."""
    port = live_server.url.rsplit(":", 1)[1]
    tls = someone("login", "--server", f"https://127.0.0.1:{port}", "--token", "x")
    assert tls.code == 4
    assert f"is it http://127.0.0.1:{port}?" in tls.err
    assert "_ssl.c" not in tls.err
    assert "SSL" not in tls.err
    assert someone("login", "--server", own_server.url, "--token", _token(settings)).code == 0
    own_server.stop()
    for args in (("show", str(ThreadId.new()), "--no-pager"), ("search", "wombat")):
        done = someone(*args)
        said = done.out + done.err
        assert "ConnectError" not in said, args
        assert "Errno" not in said, args
        assert "kept here" not in said, args
    shown = someone("show", str(ThreadId.new()), "--no-pager")
    assert (
        shown.err == f"error: cannot reach {own_server.url} (connection refused): is it running?\n"
    )
    someone.agent().save(titled("Kept"))
    synced = someone("sync")
    assert synced.code == 4
    assert "ConnectError" not in synced.out + synced.err
    assert "Errno" not in synced.out + synced.err
    assert someone("status").out.splitlines()[-1] == (
        f"Cannot reach {own_server.url}: is it running? Changes are kept here and sent by the "
        "next `loomsync sync`."
    )


def test_share_of_a_thread_whose_upload_was_refused_says_why(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 10: a thread the server refused (413) is not shared, and the message says the
    upload was refused and why, not "run loomsync sync" (which fails the same way)."""
    assert someone("login", "--server", live_server.url, "--token", _token(settings)).code == 0
    huge = someone.agent().save(
        titled(
            "Huge paste",
            conversation={"messages": [{"role": "user", "content": "x" * (BODY_LIMIT + 1000)}]},
        )
    )
    thread_id = str(huge.id)
    for args in (("--visibility", "organization"), ("--link",)):
        done = someone("share", thread_id, *args)
        assert done.code == 1, (args, done.err)
        assert "not on the server yet" not in done.err
        assert "then share again" not in done.err
        assert "the server refused its upload (refused by the server (413): " in done.err
        assert f"`loomsync sync --drop {thread_id}`" in done.err


def test_status_names_a_garbage_token_the_known_url_and_a_loose_token_file(
    someone: Person, live_server: LiveServer, settings: Settings
) -> None:
    """Finding 14: a token that is not a JWT reads "not a token" (not "no user" and "never
    expires"); a token file others can read draws a warning; logged out, the advice uses the
    URL ``logout`` kept."""
    garbage = someone("login", "--server", live_server.url, "--token", "garbage", "--no-verify")
    assert garbage.code == 0
    shown = someone("status")
    assert shown.code == 3
    assert "User:   not a token: it holds no user or organization" in shown.out
    assert "Token:  not a token: no expiry to read" in shown.out
    assert "no user in the token" not in shown.out
    assert "never expires" not in shown.out
    assert someone("login", "--server", live_server.url, "--token", _token(settings)).code == 0
    someone.paths.token_file.chmod(0o644)
    loose = someone("status")
    assert loose.code == 0
    assert loose.err == (
        f"warning: the token file {someone.paths.token_file} can be read by others (mode "
        f"0644): run `chmod 600 {someone.paths.token_file}`\n"
    )
    someone.paths.token_file.chmod(0o600)
    assert someone("status").err == ""
    assert someone("logout").code == 0
    out = someone("status").out
    assert out.splitlines()[-1] == (
        "Not logged in: threads are kept on this machine only; run "
        f"`loomsync login --server {live_server.url} --token TOKEN`."
    )
