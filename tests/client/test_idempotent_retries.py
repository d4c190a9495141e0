"""Every POST the SDK sends carries an ``Idempotency-Key`` that its retries repeat
(loomsync/http/idempotency.py), against the real server with a real fault: the server does the write
but its answer never reaches the client, which times out and retries. The write happens once."""

from __future__ import annotations

import pytest

from loomsync import ConflictError, Message, NetworkError, RemoteThreadStore, ThreadSyncClient
from tests.client.conftest import LiveServer, new_thread, wait_for

TIMEOUT = 1.0  # seconds: how long the client waits for the answer that never comes


def impatient_client(server: LiveServer, token: str, *, retries: int = 2) -> ThreadSyncClient:
    return ThreadSyncClient(
        server.url, token, timeout=TIMEOUT, retries=retries, backoff=0.01, backoff_max=0.05
    )


def owned_ids(store: RemoteThreadStore) -> list[str]:
    return sorted(s.id for s in store.list())


def test_a_fork_whose_answer_is_lost_is_retried_and_forks_once(
    own_server: LiveServer, account: str
) -> None:
    store = RemoteThreadStore(impatient_client(own_server, account))
    source = str(store.save(new_thread(3)).id)
    own_server.drop_next_write_response()
    fork = store.fork(source, up_to=2)
    assert own_server.held() == [f"POST /api/threads/{source}/fork\t201"]  # the lost answer
    assert own_server.requests().count(f"POST /api/threads/{source}/fork") == 2  # and the retry
    assert owned_ids(store) == sorted([source, str(fork.id)])
    assert [m.content for m in store.load(str(fork.id)).messages] == ["turn 0", "turn 1"]


def test_an_append_whose_answer_is_lost_is_retried_and_appends_once(
    own_server: LiveServer, account: str
) -> None:
    client = impatient_client(own_server, account)
    saved = RemoteThreadStore(client).save(new_thread(1))
    tid = str(saved.id)
    own_server.drop_next_write_response()
    result = client.append_messages(tid, [Message(role="assistant", content="b")], base_version=1)
    assert own_server.held() == [f"POST /api/threads/{tid}/messages\t200"]
    assert (result.version, result.message_count) == (2, 2)
    thread = client.get_thread(tid)
    assert (thread.version, [m.content for m in thread.messages]) == (2, ["turn 0", "b"])


def test_an_append_sent_again_after_a_restart_gets_the_first_answer(
    own_server: LiveServer, account: str
) -> None:
    """The client gives up (no retries left: as if it crashed), a new one sends the same append:
    the key is derived from the append, so the server answers it instead of a 409."""
    first = impatient_client(own_server, account, retries=0)
    tid = str(RemoteThreadStore(first).save(new_thread(1)).id)
    messages = [Message(role="assistant", content="b")]
    own_server.drop_next_write_response()
    with pytest.raises(NetworkError):
        first.append_messages(tid, messages, base_version=1)
    wait_for(lambda: len(own_server.held()) == 1, what="the append to be done")
    restarted = impatient_client(own_server, account)
    result = restarted.append_messages(tid, messages, base_version=1)
    assert (result.version, result.message_count) == (2, 2)
    other = [Message(role="assistant", content="c")]  # another append after 1: a new key, a 409
    with pytest.raises(ConflictError):
        restarted.append_messages(tid, other, base_version=1)


def test_each_fork_call_is_its_own_operation(own_server: LiveServer, account: str) -> None:
    store = RemoteThreadStore(impatient_client(own_server, account))
    source = str(store.save(new_thread(1)).id)
    forks = {str(store.fork(source).id) for _ in range(2)}
    assert len(forks) == 2
    again = store.client.fork_thread(source, idempotency_key="one-fork")
    assert store.client.fork_thread(source, idempotency_key="one-fork").id == again.id
