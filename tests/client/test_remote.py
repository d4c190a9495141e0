"""ThreadSyncClient and RemoteThreadStore against the real server; a mocked transport only to
make the server fail in ways a healthy one does not (5xx, 429, 408)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from app.errors import problem
from loomsync import (
    AuthError,
    ConflictError,
    GoneError,
    Message,
    NetworkError,
    PrivateThreadError,
    RefusedError,
    RemoteNotFoundError,
    RemoteThreadStore,
    ServerError,
    SyncError,
    ThreadId,
    ThreadNotFoundError,
    ThreadSyncClient,
    TokenRefusedError,
    __version__,
)
from loomsync.http.client import platform_tag
from tests.client.conftest import LiveServer, free_port, make_client, new_thread, with_turns


def test_every_request_carries_the_version_headers(live_server: LiveServer, account: str) -> None:
    store = RemoteThreadStore(make_client(live_server.url, account))
    before = len(live_server.requests())
    saved = store.save(new_thread(1))
    store.load(str(saved.id))
    store.list()
    sent = live_server.headers()[before:]
    assert len(sent) == 3
    for _, agent, version, system in sent:
        assert (agent, version, system) == (f"loomsync/{__version__}", __version__, platform_tag())
    assert platform_tag().count("-") >= 1
    assert platform_tag() == platform_tag().lower()


def test_stale_write_raises_conflict_with_both_versions_and_the_servers_copy(
    live_server: LiveServer, account: str
) -> None:
    store = RemoteThreadStore(make_client(live_server.url, account))
    first = store.save(new_thread(2))
    store.save(with_turns(first, "newer"))
    with pytest.raises(ConflictError) as caught:
        store.save(with_turns(first, "stale"))  # still based on version 1
    conflict = caught.value
    assert (conflict.local_version, conflict.server_version, conflict.status) == (1, 2, 409)
    assert conflict.current is not None
    assert [m.content for m in conflict.current.messages][-1] == "newer"


def test_bad_token_is_an_auth_error_sent_once(live_server: LiveServer) -> None:
    client = make_client(live_server.url, "not-a-token")
    before = len(live_server.requests())
    with pytest.raises(AuthError) as caught:
        client.list_threads()
    assert caught.value.status == 401
    assert len(live_server.requests()) == before + 1


def test_missing_and_deleted_threads_are_not_found(live_server: LiveServer, account: str) -> None:
    store = RemoteThreadStore(make_client(live_server.url, account))
    with pytest.raises(RemoteNotFoundError) as missing:
        store.load(str(ThreadId.new()))
    assert isinstance(missing.value, ThreadNotFoundError)
    saved = store.save(new_thread(1))
    store.delete(str(saved.id))
    with pytest.raises(GoneError) as gone:
        store.load(str(saved.id))
    assert isinstance(gone.value, ThreadNotFoundError)
    assert gone.value.status == 410


def test_a_private_thread_is_refused_before_any_request(
    live_server: LiveServer, account: str
) -> None:
    store = RemoteThreadStore(make_client(live_server.url, account))
    before = len(live_server.requests())
    with pytest.raises(PrivateThreadError):
        store.save(new_thread(1, is_private=True))
    with pytest.raises(PrivateThreadError):
        store.save_and_sync(new_thread(1, is_private=True))
    assert len(live_server.requests()) == before


def test_append_sends_only_new_messages_and_state(live_server: LiveServer, account: str) -> None:
    client = make_client(live_server.url, account)
    saved = client.put_thread(
        new_thread(2, id=ThreadId.new(), git_commits=["a" * 40]), base_version=0
    )
    result = client.append_messages(
        str(saved.id),
        [Message(role="assistant", content="appended")],
        base_version=1,
        fields={
            "git_commits": ["b" * 40],
            "git_branch": "main",
            "agent_state": {"kind": "calling_llm"},
        },
    )
    assert (result.version, result.message_count) == (2, 3)
    stored = client.get_thread(str(saved.id))
    assert [m.content for m in stored.messages] == ["turn 0", "turn 1", "appended"]
    assert stored.git_commits == ["a" * 40, "b" * 40]
    assert stored.git_branch == "main"
    assert stored.agent_state is not None
    assert stored.agent_state.kind == "calling_llm"


def test_listing_pages_through_every_thread(live_server: LiveServer, account: str) -> None:
    client = make_client(live_server.url, account)
    store = RemoteThreadStore(client)
    ids = {str(store.save(new_thread(1)).id) for _ in range(5)}
    assert {s.id for s in client.iter_threads(page_size=2)} == ids
    assert len(store.list(limit=3)) == 3


def test_a_refused_connection_is_a_network_error_at_once() -> None:
    """Issue 30 item 8: nothing listens, so trying again within the request meets the same
    refusal; the error stays retryable for the sync queue, which tries later."""
    sleeps: list[float] = []
    client = ThreadSyncClient(
        f"http://127.0.0.1:{free_port()}",
        "t",
        retries=3,
        backoff=0.1,
        backoff_max=10,
        sleep=sleeps.append,
    )
    with pytest.raises(NetworkError) as caught:
        client.list_threads()
    assert caught.value.retryable
    assert not caught.value.connected
    assert sleeps == []


def test_a_broken_connection_is_retried_after_backing_off() -> None:
    attempts: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        attempts.append(len(attempts))
        if len(attempts) <= 3:
            raise httpx.ReadError("connection reset by peer", request=request)
        return httpx.Response(200, json={"threads": [], "next_cursor": None})

    sleeps: list[float] = []
    client = ThreadSyncClient(
        "http://x",
        "t",
        retries=3,
        backoff=0.1,
        backoff_max=10,
        transport=httpx.MockTransport(handle),
        sleep=sleeps.append,
    )
    assert client.list_threads().threads == []
    assert len(sleeps) == 3
    assert 0.1 <= sleeps[0] <= 0.2
    assert 0.4 <= sleeps[2] <= 0.5  # doubling, plus up to one backoff of jitter


def flaky(
    statuses: list[int], headers: dict[str, str] | None = None
) -> tuple[httpx.MockTransport, list[int]]:
    """A transport answering ``statuses`` in turn, then 200 with an empty listing."""
    seen: list[int] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(len(seen))
        if len(seen) <= len(statuses):
            status = statuses[len(seen) - 1]
            body = {"status": status, "title": "t", "detail": f"simulated {status}", "code": "x"}
            return httpx.Response(status, json=body, headers=headers)
        return httpx.Response(200, json={"threads": [], "next_cursor": None})

    return httpx.MockTransport(handle), seen


@pytest.mark.parametrize("status", [500, 502, 503, 408, 429])
def test_server_errors_are_retried_until_they_pass(status: int) -> None:
    transport, seen = flaky([status, status])
    client = ThreadSyncClient(
        "http://x", "t", retries=3, backoff=0.01, transport=transport, sleep=lambda _: None
    )
    assert client.list_threads().threads == []
    assert len(seen) == 3


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (400, RefusedError),
        (413, RefusedError),
        (422, RefusedError),
        (403, AuthError),
        (409, ConflictError),
    ],
)
def test_client_errors_are_not_retried(status: int, error: type[Exception]) -> None:
    transport, seen = flaky([status] * 5)
    client = ThreadSyncClient("http://x", "t", retries=3, transport=transport, sleep=lambda _: None)
    with pytest.raises(error):
        client.list_threads()
    assert len(seen) == 1


def test_retry_after_is_honoured_and_persistent_failure_is_a_server_error() -> None:
    transport, seen = flaky([503] * 10, headers={"Retry-After": "2"})
    sleeps: list[float] = []
    record: Callable[[float], None] = sleeps.append
    client = ThreadSyncClient(
        "http://x", "t", retries=2, backoff=0.01, backoff_max=5, transport=transport, sleep=record
    )
    with pytest.raises(ServerError) as caught:
        client.list_threads()
    assert caught.value.retry_after == 2
    assert caught.value.detail == "simulated 503"
    assert sleeps == [2, 2]
    assert len(seen) == 3


@pytest.mark.parametrize(
    ("status", "error", "detail", "message"),
    [
        (401, TokenRefusedError, "Token expired.", "unauthorized: Token expired (401)"),
        (403, AuthError, "Read-only.", "forbidden: Read-only (403)"),
        (404, RemoteNotFoundError, "No such thread.", "not found: No such thread (404)"),
        (409, ConflictError, "At version 3.", "version conflict: At version 3 (409)"),
        (410, GoneError, "Deleted.", "gone: Deleted (410)"),
        (413, RefusedError, "Over 2000000 bytes.", "payload too large: Over 2000000 bytes (413)"),
        (422, RefusedError, "title: too long", "validation error: title: too long (422)"),
        (429, ServerError, "Slow down.", "too many requests: Slow down (429)"),
        (503, ServerError, "Database busy.", "service unavailable: Database busy (503)"),
        (503, ServerError, "Service unavailable", "service unavailable (503)"),
    ],
)
def test_server_problems_read_once(
    status: int, error: type[Exception], detail: str, message: str
) -> None:
    """Was ``GET /api/threads/T-…: 404 Not found: No such thread. not found``: the status and
    title said twice, and ``thread … not found`` wrapped around it for 404 and 410."""
    body = bytes(problem(status, detail).body)
    transport = httpx.MockTransport(
        lambda request: httpx.Response(status, content=body, request=request)
    )
    client = ThreadSyncClient("http://x", "t", retries=0, transport=transport)
    with pytest.raises(error) as caught:
        client.get_thread(str(ThreadId.new()))
    assert str(caught.value) == message
    assert isinstance(caught.value, SyncError)
    assert (caught.value.status, caught.value.method) == (status, "GET")
