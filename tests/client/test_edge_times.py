"""The client with timestamps at the edges of the range and leap seconds (issue 11, items 2, 9).

The model (shared with the server) reads ``0001-01-01T00:00:00Z``, ``9999-12-31T23:59:59.999999Z``
and leap seconds, writes what it reads back, and the SDK pages and pulls past such threads.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from loomsync import RemoteThreadStore, Thread, ThreadSyncClient, read_thread_file
from loomsync.core.document.ids import ThreadId
from loomsync.core.document.model import Message, format_utc
from loomsync.importers.common import parse_time
from loomsync.store.summary import ThreadSummary
from tests.client.conftest import Devices, LiveServer, make_client, new_thread

FIRST = "0001-01-01T00:00:00Z"
LAST = "9999-12-31T23:59:59.999999Z"


@pytest.mark.parametrize("stamp", [FIRST, LAST, "0999-05-06T07:08:09.000001Z"])
def test_edge_timestamps_are_written_as_they_were_read(stamp: str) -> None:
    """Year 1 was written ``1-01-01T00:00:00Z``, which neither the model nor the server reads."""
    thread = Thread.model_validate(
        {"created_at": stamp, "conversation": {"messages": [{"role": "user", "created_at": stamp}]}}
    )
    data = json.loads(thread.model_dump_json())
    assert data["created_at"] == data["conversation"]["messages"][0]["created_at"] == stamp
    assert Thread.model_validate(data) == thread


@pytest.mark.parametrize(
    ("sent", "read"),
    [
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
        ("2016-12-31T23:59:60.25Z", "2016-12-31T23:59:59.999999Z"),
        ("2017-01-01T05:29:60+05:30", "2016-12-31T23:59:59.999999Z"),
        ("2012-06-30 23:59:60", "2012-06-30T23:59:59.999999Z"),
    ],
)
def test_model_reads_a_leap_second_as_the_microsecond_before(sent: str, read: str) -> None:
    thread = Thread.model_validate({"last_activity_at": sent})
    message = Message.model_validate({"role": "user", "created_at": sent})
    summary = ThreadSummary.model_validate({"id": "T-x", "created_at": sent})
    for value in (thread.last_activity_at, message.created_at, summary.created_at):
        assert value is not None
        assert json.loads(Thread(created_at=value).model_dump_json())["created_at"] == read


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"])
def test_model_refuses_an_instant_beyond_the_range_in_utc_as_a_validation_error(
    stamp: str,
) -> None:
    """Was an OverflowError, which no caller expects from validation."""
    with pytest.raises(ValidationError, match="UTC"):
        Message.model_validate({"role": "user", "created_at": stamp})


@settings(max_examples=300, deadline=None)
@given(
    local=st.datetimes(),
    minutes=st.integers(-(24 * 60 - 1), 24 * 60 - 1),
    leap=st.booleans(),
)
def test_any_rfc3339_timestamp_round_trips_or_is_a_validation_error(
    local: datetime, minutes: int, leap: bool
) -> None:
    """Property: every RFC 3339 text of any instant and offset (leap seconds included) either
    reads and writes back as the same instant, or, when the offset takes it past the range in
    UTC, is a ValidationError: never another exception."""
    if leap:
        local = local.replace(second=59, microsecond=999999)
    sign, size = ("+" if minutes >= 0 else "-"), abs(minutes)
    text = local.isoformat(timespec="microseconds") + f"{sign}{size // 60:02d}:{size % 60:02d}"
    if leap:
        text = text.replace(":59.999999", ":60", 1)
    try:
        expected: datetime | None = (local - timedelta(minutes=minutes)).replace(tzinfo=UTC)
    except OverflowError:
        expected = None
    if expected is None:
        with pytest.raises(ValidationError):
            Thread.model_validate({"created_at": text})
        return
    thread = Thread.model_validate({"created_at": text})
    assert thread.created_at == expected
    assert Thread.model_validate_json(thread.model_dump_json()).created_at == expected


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(max_size=60) | st.from_regex(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", fullmatch=True)
)
def test_any_text_as_a_timestamp_is_a_timestamp_or_a_validation_error(text: str) -> None:
    """Property: whatever the text, the model answers a UTC timestamp or a ValidationError."""
    try:
        message = Message.model_validate({"role": "user", "created_at": text})
    except ValidationError:
        return
    assert message.created_at is not None
    assert message.created_at.utcoffset() == timedelta(0)


def test_thread_file_with_a_leap_second_is_read(tmp_path: Path) -> None:
    path = tmp_path / "exported.json"
    message = {"role": "user", "content": "hi", "created_at": "2016-12-31T23:59:60Z"}
    path.write_text(
        json.dumps({"created_at": "2016-12-31T23:59:60Z", "conversation": {"messages": [message]}})
    )
    thread = read_thread_file(path)
    assert thread.messages[0].created_at == thread.created_at
    assert json.loads(thread.model_dump_json())["created_at"] == "2016-12-31T23:59:59.999999Z"


def _put(client: ThreadSyncClient, stamp: str | None = None) -> str:
    """A new thread on the server (at ``stamp`` for creation and activity); its id."""
    times = {"created_at": stamp, "last_activity_at": stamp} if stamp else {}
    thread = new_thread(1, id=str(ThreadId.new()), **times)
    return str(client.put_thread(thread, base_version=0).id)


def test_sdk_pages_one_by_one_past_threads_at_both_edges(
    live_server: LiveServer, account: str
) -> None:
    stamps = [LAST, LAST, "2026-05-01T00:00:00Z", FIRST, FIRST, "2026-04-01T00:00:00Z"]
    with make_client(live_server.url, account) as client:
        made = [_put(client, stamp) for stamp in stamps]
        listed = [s.id for s in client.iter_threads(page_size=1, archived="any")]
    assert sorted(listed) == sorted(made)
    assert len(listed) == len(made)


def test_pull_reaches_threads_past_a_page_that_ends_at_year_1(
    live_server: LiveServer, account: str, devices: Devices
) -> None:
    """The pull lists 200 a page: the first page ends on a thread at 0001-01-01T00:00:00Z, so
    the cursor it gets back points at that edge. Every thread arrives and reads back locally."""
    with make_client(live_server.url, account) as client:
        ordinary = {_put(client) for _ in range(199)}
        edge = {_put(client, FIRST) for _ in range(2)}
    device = devices("fresh")
    assert {o.thread_id for o in device.pull()} == ordinary | edge
    remote = RemoteThreadStore(make_client(live_server.url, account))
    try:
        assert {s.id for s in remote.list()} == ordinary | edge  # pages of 200, one cursor
    finally:
        remote.close()
    for tid in edge:
        local = json.loads(device.load(tid).model_dump_json())
        assert (local["created_at"], local["last_activity_at"]) == (FIRST, FIRST)


@pytest.mark.parametrize(
    ("logged", "read"),
    [
        ("2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999999Z"),
        ("2016-12-31T23:59:60.123456+00:00", "2016-12-31T23:59:59.999999Z"),
        (" 2016-12-31 23:59:60 ", "2016-12-31T23:59:59.999999Z"),
    ],
)
def test_importers_read_a_leap_second_in_an_agent_log(logged: str, read: str) -> None:
    """Agent logs (Claude Code, Codex, …) go through one time parser; a ``:60`` was dropped."""
    parsed = parse_time(logged)
    assert parsed is not None
    assert format_utc(parsed) == read
