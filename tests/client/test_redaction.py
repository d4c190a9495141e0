"""Every path that writes a thread to disk or the network goes through one redaction step
(issue 12, item 1): SDK saves, appends, patches, forks, imports, the remote store, the HTTP
client, quarantine copies, the summary index, sync bases, queued patches and exports. Requests
are counted at a recording proxy in front of the real server (tests/client/recording_proxy.py).

The credentials are the placeholder detector's kinds (AWS access key, GitHub token), so these
tests hold whatever detector stands behind loomsync.core.secrets.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loomsync import LocalThreadStore, RemoteThreadStore, SyncingThreadStore
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.jsontext import JsonNumber
from loomsync.core.document.model import Thread
from loomsync.core.secrets import Redactor
from loomsync.errors import CorruptThreadError
from loomsync.export import export
from loomsync.importers.run import import_sessions
from loomsync.store.redaction import Redaction
from tests.client import planted
from tests.client.conftest import LiveServer, make_client, new_thread, with_turns
from tests.client.recording_proxy import RecordingProxy, recording_proxy

AWS = planted.AWS_ACCESS
GH = planted.GITHUB
AWS_MARK = "[REDACTED:aws-access-key]"
GH_MARK = "[REDACTED:github-token]"


def leaky(**fields: object) -> Thread:
    """A thread with credentials in content, tool-call arguments, title and tags."""
    return Thread.model_validate(
        {
            "metadata": {"title": f"deploy with {GH}", "tags": [AWS]},
            "conversation": {
                "messages": [
                    {"role": "user", "content": f"my key is {AWS}"},
                    {
                        "role": "assistant",
                        "content": "checking",
                        "tool_calls": [
                            {
                                "id": "c1",
                                "tool_name": "Bash",
                                "arguments_json": {"cmd": f"use {GH}"},
                            }
                        ],
                    },
                ]
            },
            **fields,
        }
    )


def holds_no_secret(data: bytes | str) -> bool:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    return AWS not in text and GH not in text


@pytest.fixture
def proxied(live_server: LiveServer) -> Iterator[tuple[str, RecordingProxy]]:
    """A recording proxy in front of the shared server."""
    with recording_proxy(live_server.url) as served:
        yield served


def device(
    root: Path, url: str, token: str, redaction: Redaction | None = None
) -> SyncingThreadStore:
    local = LocalThreadStore(root / "threads", redaction=redaction)
    client = make_client(url, token)
    if redaction is not None:
        client.redaction = redaction
    return SyncingThreadStore(local, client, sync_dir=root / "sync", background=False)


def server_copy(url: str, token: str, thread_id: str) -> dict[str, object]:
    response = httpx.get(
        f"{url}/api/threads/{thread_id}", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200, response.text
    data: dict[str, object] = response.json()
    return data


def write_raw(root: Path, thread: Thread) -> str:
    """A thread file written as an older client would have: unredacted."""
    thread_id = str(thread.id)
    (root / "threads").mkdir(parents=True, exist_ok=True)
    (root / "threads" / f"{thread_id}.json").write_bytes(codec.encode_thread(thread))
    return thread_id


def test_local_save_writes_markers_in_every_field_and_returns_the_redacted_thread(
    tmp_path: Path,
) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(leaky())
    raw = store.path(str(saved.id)).read_bytes()
    assert holds_no_secret(raw)
    assert AWS_MARK.encode() in raw
    assert GH_MARK.encode() in raw
    assert saved.metadata.title == f"deploy with {GH_MARK}"
    assert saved.messages[1].tool_calls[0].arguments_json == {"cmd": f"use {GH_MARK}"}  # type: ignore[index]


def test_redaction_keeps_exact_numbers_and_unset_fields(tmp_path: Path) -> None:
    """Was: the interface's redact_thread dumps mode='json', which cannot hold a JsonNumber."""
    doc = b'{"id": "T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "conversation": {"messages": [{"role": "user", "content": "%s", "score": 1E2}]}}'
    thread = codec.decode_thread(doc % AWS.encode())
    store = LocalThreadStore(tmp_path)
    saved = store.save(thread)
    assert saved.messages[0].model_extra == {"score": JsonNumber("1E2")}
    raw = store.path(str(saved.id)).read_bytes()
    assert b"1E2" in raw
    assert AWS_MARK.encode() in raw
    assert b"updated_at" not in raw


def test_put_and_append_bodies_hold_markers_only(
    tmp_path: Path, proxied: tuple[str, RecordingProxy], account: str
) -> None:
    url, proxy = proxied
    store = device(tmp_path, url, account)
    first = store.save_and_sync(leaky())
    assert first.status == "synced"
    grown = with_turns(first.thread, f"and the other key {GH}")  # type: ignore[arg-type]
    assert store.save_and_sync(grown).status == "synced"
    writes = [(r.method, r.path) for r in proxy.requests if r.method != "GET"]
    assert writes == [
        ("PUT", f"/api/threads/{first.thread_id}"),
        ("POST", f"/api/threads/{first.thread_id}/messages"),
    ]
    assert holds_no_secret(proxy.bodies())
    copy = server_copy(url, account, first.thread_id)
    assert holds_no_secret(codec.dumps(copy))
    assert GH_MARK in codec.dumps(copy).decode()
    store.close()


def test_metadata_patch_is_redacted_in_the_queue_and_on_the_wire(
    tmp_path: Path, proxied: tuple[str, RecordingProxy], account: str
) -> None:
    url, proxy = proxied
    store = device(tmp_path, url, account)
    thread_id = store.save_and_sync(new_thread(1)).thread_id
    store.update_metadata(thread_id, {"title": f"key {GH}", "tags": [AWS]})
    for name in ("queue.sqlite3", "queue.sqlite3-wal"):  # the log holds the rows until checkpointed
        if (tmp_path / "sync" / name).exists():
            assert holds_no_secret((tmp_path / "sync" / name).read_bytes())
    assert store.sync_thread(thread_id).status == "synced"
    assert [r.method for r in proxy.requests if r.method == "PATCH"] == ["PATCH"]
    assert holds_no_secret(proxy.bodies())
    copy = server_copy(url, account, thread_id)
    assert copy["metadata"]["title"] == f"key {GH_MARK}"  # type: ignore[index]
    store.close()


def test_fork_export_and_summary_index_of_an_unredacted_file_hold_markers(tmp_path: Path) -> None:
    """A file an older client wrote still holds credentials: nothing derived from it does."""
    thread_id = write_raw(tmp_path, leaky(id="T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9"))
    store = LocalThreadStore(tmp_path / "threads")
    fork = store.fork(thread_id)
    assert holds_no_secret(store.path(str(fork.id)).read_bytes())
    loaded = store.load(thread_id)
    assert holds_no_secret(export(loaded, "json"))
    assert holds_no_secret(export(loaded, "markdown"))
    [summary, *_] = [s for s in store.list() if s.id == thread_id]
    assert summary.title == f"deploy with {GH_MARK}"
    store.close()  # the summary index's database, checkpointed
    for name in (".index.sqlite3", ".index.sqlite3-wal"):
        index = tmp_path / "threads" / name
        assert not index.exists() or holds_no_secret(index.read_bytes())


def test_quarantined_copy_of_a_corrupt_file_is_redacted(tmp_path: Path) -> None:
    store = LocalThreadStore(tmp_path)
    thread_id = "T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
    store.path(thread_id).write_text(f'{{"id": "{thread_id}", "broken": "{AWS}"')
    with pytest.raises(CorruptThreadError) as caught:
        store.load(thread_id)
    moved = caught.value.quarantined_to
    assert moved is not None
    assert AWS_MARK in moved.read_text()
    assert AWS not in moved.read_text()
    assert not store.path(thread_id).exists()


def test_remote_store_sends_a_redacted_private_thread(
    proxied: tuple[str, RecordingProxy], account: str
) -> None:
    url, proxy = proxied
    store = RemoteThreadStore(make_client(url, account))
    stored = store.save(leaky())
    assert stored.visibility == "private"
    [put] = [r for r in proxy.requests if r.method == "PUT"]
    assert holds_no_secret(put.body)
    assert codec.loads(put.body)["visibility"] == "private"
    store.update_metadata(str(stored.id), {"title": f"now {AWS}"})
    assert holds_no_secret(proxy.bodies())
    store.close()


def test_adopted_server_copy_with_credentials_is_redacted_here_and_replaced_there(
    tmp_path: Path, database_url: str, settings: object, account: str
) -> None:
    """A client that is not loomsync stored credentials (the server's scan off): fetching the
    thread keeps no credential here (file, sync base) and queues the redacted copy."""
    server = LiveServer(database_url, settings.jwt_secret.get_secret_value(), tmp_path)  # type: ignore[attr-defined]
    server.env["LOOMSYNC_SECRET_SCAN"] = "off"
    server.start()
    try:
        thread_id = str(ThreadId.new())  # ids are global on the server: one per test
        seeded = leaky(id=thread_id).model_dump(mode="json", exclude_unset=True)
        headers = {"Authorization": f"Bearer {account}", "If-Match": '"0"'}
        assert (
            httpx.put(
                f"{server.url}/api/threads/{thread_id}", json=seeded, headers=headers
            ).status_code
            == 201
        )
        store = device(tmp_path / "device", server.url, account)
        loaded = store.load(thread_id)
        assert holds_no_secret(codec.encode_thread(loaded))
        assert holds_no_secret(store.local.path(thread_id).read_bytes())
        assert holds_no_secret(
            (tmp_path / "device" / "sync" / "threads" / f"{thread_id}.json").read_bytes()
        )
        assert store.queue.has(thread_id, "save")
        assert store.sync_thread(thread_id).status == "synced"
        assert holds_no_secret(codec.dumps(server_copy(server.url, account, thread_id)))
        assert store.sync_thread(thread_id).status == "up_to_date"
        store.close()
    finally:
        server.stop()


def test_reimporting_a_session_with_credentials_changes_nothing(tmp_path: Path) -> None:
    store = SyncingThreadStore(
        LocalThreadStore(tmp_path / "t"), None, sync_dir=tmp_path / "s", background=False
    )
    first = import_sessions(store, "claude-code", [planted.FIXTURE], existing=store.local)
    again = import_sessions(store, "claude-code", [planted.FIXTURE], existing=store.local)
    assert first.created == [planted.THREAD_ID]
    assert again.unchanged == [planted.THREAD_ID]
    assert not again.updated
    saved = store.local.load(planted.THREAD_ID)
    assert saved.visibility == "private"
    assert holds_no_secret(store.local.path(planted.THREAD_ID).read_bytes())


def test_a_server_that_redacts_more_neither_loops_nor_forks_nor_loses_messages(
    tmp_path: Path, live_server: LiveServer, account: str
) -> None:
    """The client allow-lists the AWS key; the server (played by the proxy, which redacts every
    write with the full detector) does not. After the PUT the local copy takes the server's
    marker; the agent, still holding the key in memory, keeps saving; another device's edit
    forces a 409 on an append whose message the server had redacted: no fork, no loop."""
    allowing = Redaction(Redactor(allow=[AWS]))
    with recording_proxy(live_server.url, redactor=Redactor()) as (url, proxy):
        a = device(tmp_path / "a", url, account, allowing)
        original = with_turns(new_thread(0, id=str(ThreadId.new())), f"key {AWS}")
        first = a.save_and_sync(original)
        assert first.status == "synced"
        thread_id = first.thread_id
        assert AWS_MARK in a.local.path(thread_id).read_text()  # the server's marker, kept
        count = len(proxy.requests)
        agent_copy = with_turns(original, f"again {AWS}")  # the agent's own copy, key and all
        assert a.save_and_sync(agent_copy).status == "synced"
        assert len(proxy.requests) - count == 1  # one append, no re-send
        b = device(tmp_path / "b", url, account)
        b.update_metadata(thread_id, {"title": "edited elsewhere"})
        assert b.sync_thread(thread_id).status == "synced"
        third = a.save_and_sync(with_turns(agent_copy, "third"))
        assert third.status == "merged", third  # the title edited elsewhere came in (issue 27)
        assert not [r for r in a.reports if r.status == "forked"]
        assert [p.name for p in (tmp_path / "a" / "threads").glob("T-*.jsonl")] == [
            f"{thread_id}.jsonl"
        ]
        server = server_copy(url, account, thread_id)
        contents = [m["content"] for m in server["conversation"]["messages"]]  # type: ignore[index]
        assert contents == [f"key {AWS_MARK}", f"again {AWS_MARK}", "third"]
        assert server["metadata"]["title"] == "edited elsewhere"  # type: ignore[index]
        assert a.sync_thread(thread_id).status == "up_to_date"
        a.close()
        b.close()


class CountingRedactor(Redactor):
    """Counts the texts the detector is asked to scan."""

    scanned = 0

    def find(self, text: str) -> list:  # type: ignore[type-arg]
        self.scanned += 1
        return super().find(text)


def test_a_save_of_one_more_turn_scans_that_turn_only_and_a_changed_message_again(
    tmp_path: Path,
) -> None:
    detector = CountingRedactor()
    store = LocalThreadStore(tmp_path, redaction=Redaction(detector))
    thread = store.save(new_thread(50))
    detector.scanned = 0
    grown = store.save(with_turns(thread, "one more"))
    assert detector.scanned <= 10  # the new turn and the fields outside messages, not 51 turns
    # a message is changed by replacing it (an in-place change of a saved object is not seen)
    grown.messages[0] = grown.messages[0].model_copy(update={"content": f"edited {AWS}"})
    assert store.save(grown).messages[0].content == f"edited {AWS_MARK}"
    assert AWS not in store.path(str(grown.id)).read_text()
