"""A save says what really happened (issue 27, item 10).

Two clients of one user append to the same thread on a real server over HTTP, one of them a
version behind. No message may be lost, and the answer must be the one that happened:

- the SDK's ``save_and_sync`` said ``"synced"`` with no fork id in most tries while the
  behind client's message had gone to a fork (made by the store's own background sync, woken
  by the save) left pending: it must say ``"forked"`` with the fork's id, the fork on the
  server, and return the fork;
- ``loomsync sync`` printed "forked 1 … the run stopped" and exited 4 with the server up, or
  "forked 0" while another sync of the same store made the fork: it must name the fork, send
  it, and exit 0;
- a fork is told apart from its original wherever threads are listed (``loomsync list``, the
  server's list, the MCP ``list_threads``): its title says ``(fork of T-…)``.

The race is run several times (the issue saw it in 5 of 7 tries).
"""

from __future__ import annotations

import json
import subprocess
from typing import Any, cast

import pytest
from mcp import ClientSession

from loomsync.store.local import LocalThreadStore
from loomsync.sync.syncing import SyncingThreadStore
from tests.client.conftest import (
    LOOMSYNC,
    Devices,
    LiveServer,
    Person,
    make_client,
    make_person,
    new_thread,
    with_turns,
)
from tests.client.test_mcp import call, drive
from tests.client.test_redaction import server_copy

TRIES = 8  # the issue saw the wrong answer in 5 of 7 tries
TITLE = "shared plan"


def _server_thread(server: LiveServer, token: str, thread_id: str) -> dict[str, Any]:
    return cast(dict[str, Any], server_copy(server.url, token, thread_id))


def _contents(document: dict[str, Any]) -> list[str]:
    return [m["content"] for m in document["conversation"]["messages"]]


@pytest.mark.parametrize("attempt", range(TRIES))
def test_save_and_sync_of_the_client_behind_says_forked_and_sends_the_fork(
    devices: Devices, live_server: LiveServer, attempt: int
) -> None:
    ahead, behind = devices("ahead", background=True), devices("behind", background=True)
    first = ahead.save_and_sync(new_thread(2, metadata={"title": TITLE}))
    assert first.status == "synced"
    thread_id = first.thread_id
    start = behind.load(thread_id)
    assert ahead.save_and_sync(with_turns(ahead.load(thread_id), "ahead's turn")).status == (
        "synced"
    )

    outcome = behind.save_and_sync(with_turns(start, "behind's turn"))

    assert outcome.status == "forked", outcome
    assert outcome.fork_id is not None
    assert outcome.fork_id != thread_id
    assert outcome.fork_id in outcome.detail
    assert outcome.thread is not None
    assert str(outcome.thread.id) == outcome.fork_id
    assert [m.content for m in outcome.thread.messages][-1] == "behind's turn"
    assert behind.pending_count() == 0  # the fork is not left pending
    on_server = _server_thread(live_server, devices.token, thread_id)
    fork = _server_thread(live_server, devices.token, outcome.fork_id)
    assert _contents(on_server) == ["turn 0", "turn 1", "ahead's turn"]
    assert _contents(fork) == ["turn 0", "turn 1", "behind's turn"]  # nothing lost
    assert fork["metadata"]["title"] == f"{TITLE} (fork of {thread_id})"
    assert fork["metadata"]["extra"]["forked_from"]["id"] == thread_id


def test_a_merge_says_merged(devices: Devices) -> None:
    """The behind client only renamed the thread: its copy is merged with the other's turns,
    and the answer says so (not "synced" as if the server held the copy it sent)."""
    ahead, behind = devices("ahead"), devices("behind")
    thread_id = ahead.save_and_sync(new_thread(2, metadata={"title": TITLE})).thread_id
    start = behind.load(thread_id)
    ahead.save_and_sync(with_turns(ahead.load(thread_id), "ahead's turn"))
    renamed = start.model_copy(
        update={"metadata": start.metadata.model_copy(update={"title": "renamed behind"})}
    )
    outcome = behind.save_and_sync(renamed)
    assert outcome.status == "merged", outcome
    assert outcome.fork_id is None
    assert outcome.thread is not None
    assert [m.content for m in outcome.thread.messages][-1] == "ahead's turn"
    assert outcome.thread.metadata.title == "renamed behind"


# -- the CLI: two people's machines of one user, each its own HOME ----------------------------


def _machines(
    tmp_path: Any, server: LiveServer, token: str
) -> tuple[Person, Person, str, SyncingThreadStore]:
    """Two logged-in machines; a thread made on the first, sent, fetched on the second, then
    a turn added and sent on the first. Returns them, the thread's id and the second's store
    (no network) holding its own turn added to the copy a version behind, queued."""
    laptop, desktop = make_person(tmp_path / "laptop"), make_person(tmp_path / "desktop")
    for machine in (laptop, desktop):
        done = machine("login", "--server", server.url, "--token", token)
        assert done.code == 0, done.err
    store = laptop.agent()
    thread_id = str(store.save(new_thread(2, metadata={"title": TITLE})).id)
    store.close()
    assert laptop("sync").code == 0
    fetched = _online(desktop, server, token)
    fetched.load(thread_id)  # the second machine's copy: version 1
    fetched.close()
    store = laptop.agent()
    store.save(with_turns(store.load(thread_id), "laptop's turn"))
    store.close()
    assert laptop("sync").code == 0  # the server is at version 2
    behind = desktop.agent()
    behind.save(with_turns(behind.load(thread_id), "desktop's turn"))  # based on version 1
    return laptop, desktop, thread_id, behind


def _online(person: Person, server: LiveServer, token: str) -> SyncingThreadStore:
    """``person``'s store with a client (no background sync)."""
    return SyncingThreadStore(
        LocalThreadStore(person.paths.threads_dir),
        make_client(server.url, token),
        sync_dir=person.paths.sync_dir,
        background=False,
    )


def _assert_both_kept(
    server: LiveServer, token: str, thread_id: str, fork_id: str | None
) -> dict[str, Any]:
    assert fork_id is not None
    assert _contents(_server_thread(server, token, thread_id))[-1] == "laptop's turn"
    fork = _server_thread(server, token, fork_id)
    assert _contents(fork)[-1] == "desktop's turn"
    return fork


@pytest.mark.parametrize("attempt", range(3))
def test_loomsync_sync_that_forks_sends_the_fork_and_exits_0(
    tmp_path: Any, live_server: LiveServer, account: str, attempt: int
) -> None:
    _, desktop, thread_id, behind = _machines(tmp_path, live_server, account)
    behind.close()
    done = desktop("sync", "--no-pull")
    assert done.code == 0, done.out + done.err  # was 4, "the server unreachable"
    fork_id = desktop.agent().states.get(thread_id).fork_id
    assert fork_id is not None
    assert "forked 1; 0 still pending." in done.out, done.out
    assert f"this machine's as {fork_id}" in done.out.replace("\n", " ")
    assert "the run stopped" not in done.out
    _assert_both_kept(live_server, account, thread_id, fork_id)
    as_json = desktop("sync", "--json")
    assert json.loads(as_json.out)["pending"] == 0
    assert as_json.code == 0


@pytest.mark.parametrize("attempt", range(4))
def test_two_syncs_of_one_store_racing_both_say_the_fork_that_happened(
    tmp_path: Any, live_server: LiveServer, account: str, attempt: int
) -> None:
    """Two ``loomsync sync`` of the same HOME at once: whichever pushes makes the fork; the
    other must not say "forked 0" when the entry it read went to a fork meanwhile, and
    neither says the server is unreachable."""
    _, desktop, thread_id, behind = _machines(tmp_path, live_server, account)
    behind.close()
    runs = [
        subprocess.Popen(
            [str(LOOMSYNC), "sync", "--no-pull", "--json"],
            env=desktop.env,
            cwd=desktop.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    answers = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert "Traceback" not in err, err
        assert run.returncode == 0, out + err
        answers.append(json.loads(out))
    fork_id = desktop.agent().states.get(thread_id).fork_id
    _assert_both_kept(live_server, account, thread_id, fork_id)
    said = [[o for o in answer["outcomes"] if o["thread_id"] == thread_id] for answer in answers]
    assert any(s for s in said)  # at least one run read the entry
    for answer, outcomes in zip(answers, said, strict=True):
        assert answer["pending"] == 0
        if outcomes:  # a run that read the entry says where its messages went
            assert [(o["status"], o["fork_id"]) for o in outcomes] == [("forked", fork_id)]


def test_a_fork_is_told_apart_from_its_original_in_every_listing(
    tmp_path: Any, live_server: LiveServer, account: str
) -> None:
    _, desktop, thread_id, behind = _machines(tmp_path, live_server, account)
    behind.close()
    assert desktop("sync").code == 0
    fork_id = desktop.agent().states.get(thread_id).fork_id
    assert fork_id is not None
    fork_title = f"{TITLE} (fork of {thread_id})"
    for args in (["list", "--json"], ["list", "--server", "--json"]):
        done = desktop(*args)
        assert done.code == 0, done.err
        titles = {row["id"]: row["title"] for row in json.loads(done.out)}
        assert titles[thread_id] == TITLE, args
        assert titles[fork_id] == fork_title, args
    wide = desktop("list", env={"COLUMNS": "200"})
    assert "(fork of " in wide.out

    async def scenario(session: ClientSession) -> None:
        listed = (await call(session, "list_threads")).structured_content
        assert listed is not None
        titles = {t["thread_id"]: t["title"] for t in listed["threads"]}
        assert titles[thread_id] == TITLE
        assert titles[fork_id] == fork_title

    drive(desktop, scenario)
