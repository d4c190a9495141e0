"""The ``loomsync`` command against a broken or hostile server (a stdlib HTTP server that
answers 200 with whatever the test says).

An entry the client cannot use (an id such as ``../../etc``) is skipped with one warning naming
it, printable, and the rest is used; a body that is not what API.md says becomes the SDK's own
:class:`InvalidResponseError` (one ``error:`` line naming the request), never ``unexpected
KeyError`` or ``unexpected ValidationError``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import httpx
import pytest

from loomsync import InvalidResponseError, RemoteThreadStore, SyncError, Thread, ThreadSyncClient
from loomsync.core.document import codec
from loomsync.core.document.ids import ThreadId
from loomsync.terminal import printable
from tests.client.conftest import Person

GOOD = str(ThreadId.new())
TRAVERSAL = "../../etc"
ESCAPED = "T-\x1b]52;c;ZXZpbA==\x07"  # OSC 52: a clipboard write, in an id


def summary(thread_id: object, **fields: object) -> dict[str, Any]:
    return {"id": thread_id, "title": "fine", "version": 1, "message_count": 1, **fields}


def document(thread_id: str) -> bytes:
    thread = Thread.model_validate(
        {
            "id": thread_id,
            "version": 1,
            "metadata": {"title": "pulled"},
            "conversation": {"messages": [{"role": "user", "content": "from the server"}]},
        }
    )
    return codec.encode_thread(thread)


class _Handler(BaseHTTPRequestHandler):
    """Answers each path (query left out) with ``routes[path]``: (status, JSON body bytes)."""

    routes: ClassVar[dict[str, tuple[int, bytes]]] = {}

    def do_GET(self) -> None:
        status, body = self.routes.get(self.path.split("?")[0], (404, b"{}"))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass


@pytest.fixture
def broken() -> Iterator[tuple[str, dict[str, tuple[int, bytes]]]]:
    """A server URL and its routes (fill them in the test)."""
    routes: dict[str, tuple[int, bytes]] = {"/health": (200, b"{}")}
    handler = type("Handler", (_Handler,), {"routes": routes})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    worker = threading.Thread(target=server.serve_forever, daemon=True)
    worker.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", routes
    server.shutdown()
    server.server_close()


def env_for(url: str) -> dict[str, str]:
    return {"LOOMSYNC_SERVER_URL": url, "LOOMSYNC_TOKEN": "t", "LOOMSYNC_RETRIES": "0"}


def page(*rows: object) -> bytes:
    return json.dumps({"threads": list(rows), "next_cursor": None}).encode()


def test_sync_skips_an_unusable_entry_with_a_warning_and_pulls_the_rest(
    person: Person, broken: tuple[str, dict[str, tuple[int, bytes]]]
) -> None:
    """Was ``error: not a thread id: '../../…'`` and nothing pulled."""
    url, routes = broken
    routes["/api/threads"] = (
        200,
        page(summary(TRAVERSAL), summary(GOOD), summary(ESCAPED), summary(7), "not an object"),
    )
    routes[f"/api/threads/{GOOD}"] = (200, document(GOOD))
    synced = person("sync", env=env_for(url))
    assert synced.code == 0, synced.err
    out = synced.out.splitlines()
    assert out[0] == "Sent 0, pulled 1, failed 0, forked 0; 0 still pending."
    assert f"{TRAVERSAL} skipped: not a thread id" in out
    assert f"{printable(ESCAPED)} skipped: not a thread id" in out
    assert "\x1b" not in synced.out
    assert "\x07" not in synced.out
    assert "7 skipped: id: Input should be a valid string" in out
    assert (
        "- skipped: entry: Input should be a valid dictionary or instance of ThreadSummary" in out
    )
    assert len(out) == 5
    assert person.agent().load(GOOD).metadata.title == "pulled"


def test_list_and_search_warn_once_per_unusable_entry(
    person: Person, broken: tuple[str, dict[str, tuple[int, bytes]]]
) -> None:
    url, routes = broken
    routes["/api/threads"] = (200, page(summary(GOOD), summary(TRAVERSAL)))
    hits = [{"thread": summary(ESCAPED), "score": 1.0}, {"thread": summary(GOOD), "score": 0.5}]
    routes["/api/threads/search"] = (200, json.dumps({"hits": hits}).encode())
    listed = person("list", "--server", env=env_for(url))
    assert listed.code == 0, listed.err
    assert listed.err == f"warning: skipped entry {TRAVERSAL!r} from the server: not a thread id\n"
    assert GOOD in listed.out
    assert TRAVERSAL not in listed.out
    found = person("search", "fine", env=env_for(url))
    assert found.code == 0, found.err
    assert found.err == (
        f"warning: skipped entry {printable(repr(ESCAPED))} from the server: not a thread id\n"
    )
    assert found.out.splitlines()[0] == "1 thread found on the server for 'fine'"


@pytest.mark.parametrize(
    ("args", "path", "body", "what"),
    [
        (["list", "--server"], "/api/threads", b'{"nope": 1}', "no 'threads'"),
        (["list", "--server"], "/api/threads", b'{"threads": {}}', "'threads' is dict"),
        (["list", "--server"], "/api/threads", b"[1, 2]", "expected a JSON object, got list"),
        (["list", "--server"], "/api/threads", b"<html>", "not JSON"),
        (
            ["list", "--server"],
            "/api/threads",
            b'{"threads": [], "next_cursor": 5}',
            "'next_cursor' is int",
        ),
        (["search", "x"], "/api/threads/search", b'{"threads": []}', "no 'hits'"),
        (["show", GOOD], f"/api/threads/{GOOD}", b'{"id": 5}', "id: "),
        (
            ["show", GOOD],
            f"/api/threads/{GOOD}",
            document(str(ThreadId.new())),
            f"asked for {GOOD}",
        ),
    ],
)
def test_a_malformed_answer_is_one_error_line_naming_the_request(
    person: Person,
    broken: tuple[str, dict[str, tuple[int, bytes]]],
    args: list[str],
    path: str,
    body: bytes,
    what: str,
) -> None:
    """Was ``error: unexpected KeyError: 'hits'`` or ``unexpected ValidationError …``."""
    url, routes = broken
    routes[path] = (200, body)
    result = person(*args, env=env_for(url))
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(f"error: GET {path}: the server's answer is not valid: {what}")
    assert result.err.count("\n") == 1
    assert "unexpected" not in result.err


def test_the_sdk_error_carries_the_request_and_status(
    broken: tuple[str, dict[str, tuple[int, bytes]]],
) -> None:
    url, routes = broken
    routes["/api/threads"] = (200, b'{"threads": "x"}')
    with pytest.raises(InvalidResponseError) as caught:
        ThreadSyncClient(url, "t", retries=0).list_threads()
    error = caught.value
    assert isinstance(error, SyncError)
    assert not error.retryable
    assert (error.method, error.status, error.detail) == ("GET", 200, "'threads' is str")
    assert httpx.URL(error.url or "").path == "/api/threads"


def test_the_sdk_leaves_out_and_logs_an_unusable_entry(
    broken: tuple[str, dict[str, tuple[int, bytes]]], caplog: pytest.LogCaptureFixture
) -> None:
    url, routes = broken
    routes["/api/threads"] = (200, page(summary(TRAVERSAL), summary(GOOD)))
    client = ThreadSyncClient(url, "t", retries=0)
    listed = client.list_threads()
    assert [row.id for row in listed.threads] == [GOOD]
    assert [(e.id, e.reason) for e in listed.skipped] == [(TRAVERSAL, "not a thread id")]
    caplog.clear()
    with caplog.at_level("WARNING", logger="loomsync"):
        rows = RemoteThreadStore(client).list()
    assert [row.id for row in rows] == [GOOD]
    assert caplog.messages == [f"skipped entry {TRAVERSAL!r} from the server: not a thread id"]
