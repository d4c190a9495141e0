"""The push of one turn costs the turn (issue 15 item 2), through a real server behind a
recording proxy: one ``POST …/messages`` carrying that turn, and no whole read of the thread
file on this side (``threadlog.parse``/``read`` wrapped only to count calls). Bases an older
client wrote are upgraded on the first push; a rewritten file goes back to a whole read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loomsync import LocalThreadStore, SyncingThreadStore, Thread
from loomsync.core.document import codec
from loomsync.store import threadlog
from loomsync.sync.merge import split
from tests.client.conftest import LiveServer, make_client, new_thread, with_turns
from tests.client.recording_proxy import RecordingProxy, recording_proxy

LONG = 10_000


@pytest.fixture
def proxied(live_server: LiveServer) -> Iterator[tuple[str, RecordingProxy]]:
    """A recording proxy in front of the shared server."""
    with recording_proxy(live_server.url) as served:
        yield served


def device(root: Path, url: str, token: str) -> SyncingThreadStore:
    local = LocalThreadStore(root / "threads")
    return SyncingThreadStore(
        local, make_client(url, token), sync_dir=root / "sync", background=False
    )


def whole_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the whole-file reads of thread logs made from now on (the functions still run)."""
    calls: list[str] = []
    for name in ("parse", "read"):
        real = getattr(threadlog, name)

        def counted(*args: Any, _real: Any = real, _name: str = name) -> Any:
            calls.append(_name)
            return _real(*args)

        monkeypatch.setattr(threadlog, name, counted)
    return calls


def pushed(store: SyncingThreadStore, proxy: RecordingProxy, thread: Thread) -> list[Any]:
    """Save the thread, push it; the (method, path, body) of each request it caused."""
    before = len(proxy.requests)
    saved = store.save(thread)
    assert store.sync_thread(str(saved.id)).status == "synced"
    return [(r.method, r.path, r.body) for r in proxy.requests[before:]]


def test_one_turn_on_a_long_thread_is_one_append_of_that_turn_and_no_whole_read(
    tmp_path: Path,
    proxied: tuple[str, RecordingProxy],
    account: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, proxy = proxied
    store = device(tmp_path, url, account)
    thread = store.save_and_sync(new_thread(LONG)).thread
    assert thread is not None
    reads = whole_reads(monkeypatch)
    for n in range(3):
        thread = with_turns(thread, f"one more {n}")
        sent = pushed(store, proxy, thread)
        path = f"/api/threads/{thread.id}/messages"
        assert [(method, where) for method, where, _ in sent] == [("POST", path)]
        body = codec.loads(sent[0][2])
        assert [m["content"] for m in body["messages"]] == [f"one more {n}"]
        assert len(sent[0][2]) < 1_000  # the turn, not the thread
    outcome = store.save_and_sync(with_turns(thread, "one more 3"))
    assert outcome.status == "synced"
    assert outcome.thread is not None
    assert outcome.thread.version == outcome.version
    assert store.rescan().queued == ()  # `loomsync sync` checks every thread: from its tail
    assert reads == []
    monkeypatch.undo()
    server = store.client.get_thread(str(thread.id))  # type: ignore[union-attr]
    assert [m.content for m in server.messages[-5:]] == [f"turn {LONG - 1}"] + [
        f"one more {n}" for n in range(4)
    ]
    store.close()


def test_an_older_clients_base_is_upgraded_by_the_first_push(
    tmp_path: Path,
    proxied: tuple[str, RecordingProxy],
    account: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, proxy = proxied
    store = device(tmp_path, url, account)
    thread = store.save_and_sync(new_thread(5)).thread
    assert thread is not None
    state_file = tmp_path / "sync" / "threads" / f"{thread.id}.json"
    state = codec.loads(state_file.read_bytes())
    base = state["base"]
    assert (base["digest"], base["offset"] is not None) == ("chain", True)
    messages, _ = split(thread)
    for name in ("digest", "generation", "offset"):
        del base[name]
    base["messages_digest"] = codec.digest(messages)  # as the client before issue 15 wrote it
    state_file.write_bytes(codec.dumps(state))
    store = device(tmp_path, url, account)

    thread = with_turns(thread, "after the upgrade")
    assert [method for method, _, _ in pushed(store, proxy, thread)] == ["POST"]
    upgraded = codec.loads(state_file.read_bytes())["base"]
    assert upgraded["digest"] == "chain"
    assert upgraded["offset"] is not None
    reads = whole_reads(monkeypatch)
    assert [m for m, _, _ in pushed(store, proxy, with_turns(thread, "fast"))] == ["POST"]
    assert reads == []
    store.close()


def test_a_rewritten_history_is_put_whole_then_turns_append_again(
    tmp_path: Path,
    proxied: tuple[str, RecordingProxy],
    account: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, proxy = proxied
    store = device(tmp_path, url, account)
    thread = store.save_and_sync(new_thread(4)).thread
    assert thread is not None
    first = thread.messages[0].model_copy(update={"content": "turn 0, edited"})
    rewritten = thread.model_copy(
        update={
            "conversation": thread.conversation.model_copy(
                update={"messages": [first, *thread.messages[1:]]}
            )
        }
    )
    assert [method for method, _, _ in pushed(store, proxy, rewritten)] == ["PUT"]
    reads = whole_reads(monkeypatch)
    sent = pushed(store, proxy, with_turns(rewritten, "and on"))
    assert [method for method, _, _ in sent] == ["POST"]
    assert reads == []
    monkeypatch.undo()
    server = store.client.get_thread(str(thread.id))  # type: ignore[union-attr]
    assert [m.content for m in server.messages] == [
        "turn 0, edited",
        "turn 1",
        "turn 2",
        "turn 3",
        "and on",
    ]
    store.close()
