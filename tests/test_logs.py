"""Logs cannot be forged (app/logs.py): control characters in any logged value are escaped by
both formatters, so one record is one line and no escape sequence reaches a terminal, and the
access line writes the path as the client sent it, percent-encoded, so that it never holds a
space and cannot imitate the fields after it.

Through a real uvicorn process with its output captured (uvicorn decodes ``%0a`` in the path
into a real newline, which is what the access log used to write raw, and ``%20`` into a space,
which let a path pass for a status), then the formatters on their own for values no route logs
today (a user agent, a user id, an exception's message)."""

from __future__ import annotations

import json
import logging
import re
import sys
import uuid
from collections.abc import Iterator

import pytest

from app.config import Settings
from app.logs import ConsoleFormatter, JsonFormatter, RequestIdFilter
from tests.servers import Server, app_env, exchange, poll, uvicorn_server

#: A console line an attacker would like to add to the log.
FORGED = "2026-01-01 00:00:00,000 INFO    [admin] app.access: DELETE /api/threads 204"
#: The path carries it after an encoded newline, then ESC (clear screen), NUL, CR, a C1 CSI,
#: DEL, U+2028 (line separator) and U+202E (right-to-left override).
HOSTILE_PATH = (
    "/api/threads/x%0a"
    + FORGED.replace(" ", "%20").replace("[", "%5B").replace("]", "%5D")
    + "%1b%5B2J%00%0d%c2%9b%7f%e2%80%a8%e2%80%ae"
)
RAW_CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module", params=["console", "json"])
def server(
    request: pytest.FixtureRequest, database_url: str, settings: Settings
) -> Iterator[Server]:
    """A uvicorn process logging at info in each format."""
    env = app_env(
        database_url, settings, LOOMSYNC_LOG_LEVEL="info", LOOMSYNC_LOG_FORMAT=request.param
    )
    with uvicorn_server(env) as running:
        running.log_format = request.param  # type: ignore[attr-defined]
        yield running


def hostile_request(server: Server) -> str:
    """Send a GET of :data:`HOSTILE_PATH` with a hostile query, user agent and request id;
    return the request id the access line must carry."""
    request_id = f"forge-{uuid.uuid4().hex}"
    head = (
        f"GET {HOSTILE_PATH}?q=%0a{FORGED.replace(' ', '+')} HTTP/1.1\r\n"
        f"Host: x\r\nUser-Agent: agent\xc2\x9b\xe2\x80\xae\r\nX-Request-ID: {request_id}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("latin-1")
    answer = exchange(server.base_url, head)
    assert answer.startswith(b"HTTP/1.1 404"), answer[:200]
    return request_id


def wait_for_line(server: Server, needle: str) -> list[str]:
    """The output's lines once one holds ``needle`` (polled: the server writes asynchronously)."""

    def lines() -> list[str] | None:
        found = server.output().splitlines()
        return found if any(needle in line for line in found) else None

    if (found := poll(server.process, lines, 10)) is not None:
        return found
    pytest.fail(f"no log line holds {needle!r}:\n{server.output()[-3000:]}")


def test_access_line_of_a_hostile_path_is_one_escaped_line(server: Server) -> None:
    request_id = hostile_request(server)
    lines = wait_for_line(server, request_id)
    output = server.output()
    assert not RAW_CONTROLS.search(output), repr(RAW_CONTROLS.findall(output))
    assert not any(line.startswith(FORGED[:20]) for line in lines), output[-3000:]
    mine = [line for line in lines if request_id in line]
    assert len(mine) == 1, mine
    if server.log_format == "json":  # type: ignore[attr-defined]
        for line in lines:
            json.loads(line)  # every line of the process is one JSON object
        record = json.loads(mine[0])
        assert record["logger"] == "app.access"
        assert record["request_id"] == request_id
        assert record["path"] == HOSTILE_PATH
        assert record["message"].startswith(f"GET {HOSTILE_PATH} 404 "), record["message"]
    else:
        assert f"[{request_id}] app.access: GET {HOSTILE_PATH} 404 " in mine[0], mine[0]
    assert FORGED not in output


#: A path that, decoded, reads as a status and the start of a duration.
SPOOFING_PATH = "/api/threads/%0aINJECTED%20200%20OK%20%221.0%20ms%22%5C"


def test_logged_path_is_as_sent_and_cannot_imitate_the_status(server: Server) -> None:
    request_id = f"spoof-{uuid.uuid4().hex}"
    head = (
        f"GET {SPOOFING_PATH} HTTP/1.1\r\nHost: x\r\nX-Request-ID: {request_id}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    assert exchange(server.base_url, head).startswith(b"HTTP/1.1 404")
    (line,) = [line for line in wait_for_line(server, request_id) if request_id in line]
    if server.log_format == "json":  # type: ignore[attr-defined]
        record = json.loads(line)
        assert record["path"] == SPOOFING_PATH
        message = record["message"]
    else:
        message = line.partition("app.access: ")[2]
    method, path, status, duration, unit = message.split(" ")
    assert (method, path, status, unit) == ("GET", SPOOFING_PATH, "404", "ms"), message
    float(duration)


def _record(message: str, *args: object, exc: bool = False, **extra: object) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError(f"bad id\n{FORGED}\x1b]52;c;cHduZWQ=\x07")
        except ValueError:
            exc_info = sys.exc_info()
    record = logging.LogRecord("app.test", logging.ERROR, __file__, 1, message, args, exc_info)
    record.__dict__.update(extra)
    RequestIdFilter().filter(record)
    return record


HOSTILE_VALUES = {
    "user_agent": f"curl\n{FORGED}",
    "user_id": "alice\u202egnp.exe",
    "query": "q=\x1b[2J\x00",
    "request_id": "id\u2028x",
    "path": "/p\x9b31m",
}


def test_console_formatter_escapes_every_field_and_indents_tracebacks() -> None:
    formatter = ConsoleFormatter(
        "%(asctime)s [%(request_id)s] %(name)s %(user_agent)s %(user_id)s %(query)s: %(message)s"
    )
    text = formatter.format(
        _record("%s for %s", "/a\n\x1b[2J", "u\u2066", exc=True, **HOSTILE_VALUES)
    )
    first, *rest = text.split("\n")
    assert not RAW_CONTROLS.search(text), repr(text)
    assert "curl\\x0a" + FORGED in first
    assert "alice\\u202egnp.exe" in first
    assert "q=\\x1b[2J\\x00" in first
    assert "[id\\u2028x]" in first
    assert first.endswith("/a\\x0a\\x1b[2J for u\\u2066")
    assert rest[0] == "    Traceback (most recent call last):"
    assert all(line.startswith("    ") for line in rest), rest
    assert f"    {FORGED}\\x1b]52;c;cHduZWQ=\\x07" in rest


def test_json_formatter_escapes_every_value_on_one_line() -> None:
    text = JsonFormatter().format(_record("%s", f"x\n{FORGED}\x00", exc=True, **HOSTILE_VALUES))
    assert "\n" not in text
    record = json.loads(text)
    assert not RAW_CONTROLS.search(json.dumps(record, ensure_ascii=False).replace("\\n", ""))
    assert record["message"] == f"x\\x0a{FORGED}\\x00"
    assert record["request_id"] == "id\\u2028x"
    assert record["path"] == "/p\\x9b31m"
    assert f"{FORGED}\\x1b]52;c;cHduZWQ=\\x07" in record["exc"].split("\n")
