"""One contract, four stores: Memory, Local, Remote (the live server) and Syncing (local files +
background sync to the live server). Every test runs against each."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from loomsync import (
    InvalidInputError,
    InvalidThreadFileError,
    LocalThreadStore,
    MemoryThreadStore,
    Message,
    RemoteThreadStore,
    SyncingThreadStore,
    Thread,
    ThreadId,
    ThreadNotFoundError,
    ThreadStore,
    UnsupportedOperationError,
)
from tests.client.conftest import LiveServer, make_client, new_thread

KINDS = ["memory", "local", "remote", "syncing"]


@pytest.fixture(params=KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ThreadStore]:
    kind = request.param
    made: ThreadStore
    if kind == "memory":
        made = MemoryThreadStore()
    elif kind == "local":
        made = LocalThreadStore(tmp_path / "threads")
    else:
        server: LiveServer = request.getfixturevalue("live_server")
        client = make_client(server.url, request.getfixturevalue("account"))
        if kind == "remote":
            made = RemoteThreadStore(client)
        else:
            made = SyncingThreadStore(
                LocalThreadStore(tmp_path / "threads"),
                client,
                sync_dir=tmp_path / "sync",
                background=True,
                retry_base=0.01,
            )
    yield made
    made.close()


def rich_thread(**fields: object) -> Thread:
    """A thread with unknown fields at several levels and awkward content."""
    return Thread.model_validate(
        {
            "id": ThreadId.new(),
            "created_at": "2026-01-02T16:39:45.349Z",
            "workspace_root": "/work/project",
            "git_branch": "feature/auth",
            "future_field": {"nested": [1, 2.5, "x"]},
            "conversation": {
                "messages": [
                    {"role": "user", "content": "héllo\x00wörld ✓", "x_client": {"a": 1}},
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [
                            {"id": "c1", "tool_name": "shell", "arguments_json": {"cmd": ["ls"]}}
                        ],
                    },
                    {"role": "tool", "tool_call_id": "c1", "tool_name": "shell", "content": "a\nb"},
                ],
                "conversation_extra": True,
            },
            "metadata": {"title": "Contract", "tags": ["one", "two"], "extra": {"k": "v"}},
            **fields,
        }
    )


def test_store_satisfies_the_protocol(store: ThreadStore) -> None:
    assert isinstance(store, ThreadStore)


def test_saved_thread_loads_back_unchanged(store: ThreadStore) -> None:
    thread = rich_thread()
    store.save(thread)
    loaded = store.load(str(thread.id))
    assert loaded.id == thread.id
    assert [m.model_dump() for m in loaded.messages] == [m.model_dump() for m in thread.messages]
    assert loaded.model_extra is not None
    assert loaded.model_extra["future_field"] == {"nested": [1, 2.5, "x"]}
    assert loaded.conversation.model_extra == {"conversation_extra": True}
    assert loaded.messages[0].model_extra == {"x_client": {"a": 1}}
    assert loaded.metadata == thread.metadata
    assert loaded.created_at == thread.created_at


def test_save_fills_in_a_new_id_and_created_at(store: ThreadStore) -> None:
    saved = store.save(new_thread(1))
    assert saved.id is not None
    assert saved.created_at is not None
    assert store.load(str(saved.id)).messages[0].content == "turn 0"


def test_unknown_id_is_thread_not_found(store: ThreadStore) -> None:
    with pytest.raises(ThreadNotFoundError):
        store.load(str(ThreadId.new()))


def test_malformed_id_is_invalid_input(store: ThreadStore) -> None:
    with pytest.raises(InvalidInputError):
        store.load("T-not-an-id")


def test_list_is_newest_first_and_hides_archived(store: ThreadStore) -> None:
    start = datetime(2026, 3, 1, tzinfo=UTC)
    saved = [
        store.save(new_thread(1, last_activity_at=start + timedelta(hours=i))) for i in range(3)
    ]
    ids = [str(t.id) for t in saved]
    assert [s.id for s in store.list()] == ids[::-1]
    store.archive(ids[1])
    assert [s.id for s in store.list()] == [ids[2], ids[0]]
    assert [s.id for s in store.list(archived="true")] == [ids[1]]
    assert len(store.list(archived="any")) == 3
    store.unarchive(ids[1])
    assert [s.id for s in store.list(limit=2)] == [ids[2], ids[1]]


def test_search_finds_a_word_in_message_content(store: ThreadStore) -> None:
    word = f"zebra{ThreadId.new().uuid.hex[:8]}"
    target = store.save(
        new_thread(
            0, conversation={"messages": [{"role": "tool", "content": f"output {word} here"}]}
        )
    )
    store.save(new_thread(2))
    results = store.search(word)
    assert [hit.thread.id for hit in results.hits] == [str(target.id)]
    assert results.hits[0].snippet is not None
    assert "<b>" in results.hits[0].snippet


def test_update_metadata_keeps_absent_fields_and_null_clears(store: ThreadStore) -> None:
    thread = store.save(rich_thread())
    updated = store.update_metadata(str(thread.id), {"title": None, "is_pinned": True})
    assert updated.metadata.title is None
    assert updated.metadata.is_pinned is True
    assert updated.metadata.tags == ["one", "two"]
    loaded = store.load(str(thread.id))
    assert (loaded.metadata.title, loaded.metadata.is_pinned, loaded.metadata.tags) == (
        None,
        True,
        ["one", "two"],
    )
    assert loaded.metadata.extra == {"k": "v"}


def test_share_changes_visibility_and_support(store: ThreadStore) -> None:
    thread = store.save(new_thread(1))
    shared = store.share(str(thread.id), visibility="public", shared_with_support=True)
    assert (shared.visibility, shared.is_shared_with_support) == ("public", True)
    loaded = store.load(str(thread.id))
    assert (loaded.visibility, loaded.is_shared_with_support) == ("public", True)


def test_fork_copies_a_prefix_and_names_its_source(store: ThreadStore) -> None:
    thread = store.save(new_thread(4))
    fork = store.fork(str(thread.id), up_to=2)
    assert fork.id != thread.id
    assert [m.content for m in fork.messages] == ["turn 0", "turn 1"]
    assert fork.metadata.extra["forked_from"]["id"] == str(thread.id)
    assert len(store.load(str(fork.id)).messages) == 2
    assert len(store.load(str(thread.id)).messages) == 4


def test_deleted_thread_is_not_found(store: ThreadStore) -> None:
    thread = store.save(new_thread(1))
    store.delete(str(thread.id))
    with pytest.raises(ThreadNotFoundError):
        store.load(str(thread.id))
    assert str(thread.id) not in [s.id for s in store.list(archived="any")]


def test_save_and_sync_reports_an_outcome(store: ThreadStore) -> None:
    outcome = store.save_and_sync(new_thread(2))
    assert outcome.ok
    assert outcome.status in ("local", "synced")
    assert outcome.thread is not None
    assert len(store.load(outcome.thread_id).messages) == 2


def test_reading_a_file_path_is_local_only(store: ThreadStore, tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    thread = rich_thread()
    path.write_text(thread.model_dump_json())
    if isinstance(store, RemoteThreadStore):
        with pytest.raises(UnsupportedOperationError, match="unsupported for remote stores"):
            store.load_file(path)
        with pytest.raises(UnsupportedOperationError):
            store.load(path)
        return
    assert store.load_file(path).id == thread.id
    assert store.load(path).messages == thread.messages
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(InvalidThreadFileError):
        store.load_file(tmp_path / "bad.json")


def test_messages_appended_to_a_fresh_thread_are_saved(store: ThreadStore) -> None:
    """The SDK example of docs/client.md: append to the default conversation, then save."""
    thread = Thread.model_validate({"metadata": {"title": "appended"}})
    thread.conversation.messages.append(Message(role="user", content="hello wombat"))
    thread.metadata.tags.append("sdk")
    saved = store.save(thread)
    loaded = store.load(str(saved.id))
    assert [m.content for m in loaded.messages] == ["hello wombat"]
    assert loaded.metadata.tags == ["sdk"]
