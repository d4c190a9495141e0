"""JSON numbers keep their text on the client too (API.md section 2): thread files, the codec,
a save that syncs, a pull on another device, a conflict's server copy.

Once, ``1E2`` became ``100.0`` and ``-0`` became ``0`` in thread files, a 5,000-digit integer
made the file unreadable, and the thread that held one was refused by the server (400) and
marked failed for good.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from loomsync import LocalThreadStore, RemoteThreadStore, Thread, ThreadId
from loomsync.core.document import codec, jsontext
from loomsync.core.document.jsontext import JsonNumber
from loomsync.core.document.model import ToolCall
from tests.client.conftest import Devices, LiveServer, make_client, with_turns
from tests.client.threadfiles import stored_text
from tests.json_numbers import json_numbers

NUMBERS = ["1E2", "-0", "1e400", "0.50", "123456789012345678901234567890.123456", "9" * 5000]


def _thread_text(number: str, thread_id: ThreadId | None = None) -> str:
    """A thread document, as JSON text, holding ``number`` in every open place."""
    n = number
    tid = thread_id or ThreadId.new()
    return (
        f'{{"id":"{tid}","x_top":{n},"metadata":{{"title":"numbers","extra":{{"n":{n}}}}},'
        f'"agent_state":{{"kind":"error","last_error":{n}}},'
        f'"conversation":{{"messages":[{{"role":"assistant","content":"numbers","x_cost":{n},'
        f'"tool_calls":[{{"id":"c","tool_name":"calc","arguments_json":{{"n":{n}}}}}]}}]}}}}'
    )


def _assert_holds(text: str, number: str) -> None:
    """``text`` (a pretty thread file or compact JSON) holds ``number`` as written everywhere."""
    compact = codec.dumps(codec.loads(text)).decode()
    for piece in (
        f'"x_top":{number}',
        f'"extra":{{"n":{number}}}',
        f'"last_error":{number}',
        f'"x_cost":{number}',
        f'"arguments_json":{{"n":{number}}}',
    ):
        assert piece in compact, piece[:60]
    assert text.count(f": {number}") + text.count(f":{number}") >= 5  # raw text, no re-encoding


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: n[:20])
def test_codec_round_trip_keeps_numbers(number: str) -> None:
    thread = codec.decode_thread(_thread_text(number))
    _assert_holds(codec.encode_thread(thread).decode(), number)
    _assert_holds(codec.encode_thread(thread, pretty=False).decode(), number)


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: n[:20])
def test_local_store_file_round_trip_keeps_numbers(tmp_path: Path, number: str) -> None:
    store = LocalThreadStore(tmp_path)
    saved = store.save(codec.decode_thread(_thread_text(number)))
    _assert_holds(stored_text(tmp_path / f"{saved.id}.jsonl"), number)
    assert f'"x_cost":{number}' in (tmp_path / f"{saved.id}.jsonl").read_text()  # raw bytes
    loaded = LocalThreadStore(tmp_path).load(str(saved.id))
    again = store.save(with_turns(loaded, "one more turn"))
    _assert_holds(stored_text(tmp_path / f"{again.id}.jsonl"), number)


@pytest.mark.parametrize("number", ["1E2", "-0", "9" * 5000], ids=lambda n: n[:20])
def test_save_sync_pull_keeps_numbers_and_never_fails_the_thread(
    devices: Devices, number: str
) -> None:
    laptop, desktop = devices("laptop"), devices("desktop")
    outcome = laptop.save_and_sync(codec.decode_thread(_thread_text(number)))
    assert outcome.status == "synced", outcome.detail
    assert not [entry for entry in laptop.status() if entry.failed]
    assert laptop.pending_count() == 0

    pulled = {o.thread_id: o for o in desktop.pull()}
    assert outcome.thread_id in pulled
    on_disk = stored_text(desktop.local.path(outcome.thread_id))
    _assert_holds(on_disk, number)

    # A turn appended on the other device travels back with the numbers intact.
    more = desktop.save_and_sync(with_turns(desktop.load(outcome.thread_id), "from desktop"))
    assert more.status == "synced", more.detail
    laptop.pull()
    _assert_holds(stored_text(laptop.local.path(outcome.thread_id)), number)


def test_conflict_copy_from_the_server_keeps_numbers(
    live_server: LiveServer, account: str, devices: Devices
) -> None:
    big = "4" * 5000
    laptop, desktop = devices("laptop"), devices("desktop")
    first = laptop.save_and_sync(codec.decode_thread(_thread_text(big)))
    assert first.status == "synced", first.detail
    desktop.pull()
    # Both devices add a different turn: the second to sync gets a 409 carrying the server copy.
    a = laptop.save_and_sync(with_turns(laptop.load(first.thread_id), "laptop turn"))
    b = desktop.save_and_sync(with_turns(desktop.load(first.thread_id), "desktop turn"))
    assert a.status == "synced", a.detail
    assert b.status != "failed", b.detail
    assert not [entry for entry in desktop.status() if entry.failed]
    server_copy = RemoteThreadStore(make_client(live_server.url, account)).load(first.thread_id)
    _assert_holds(codec.encode_thread(server_copy).decode(), big)
    _assert_holds(stored_text(desktop.local.path(first.thread_id)), big)


def test_sdk_json_number_is_written_verbatim(tmp_path: Path) -> None:
    thread = Thread.model_validate(
        {
            "conversation": {
                "messages": [
                    {
                        "role": "assistant",
                        "tool_calls": [ToolCall(arguments_json={"n": JsonNumber("1.50E+3")})],
                    }
                ]
            }
        }
    )
    saved = LocalThreadStore(tmp_path).save(thread)
    assert '"n":1.50E+3' in (tmp_path / f"{saved.id}.jsonl").read_text()


@hypothesis_settings(max_examples=300, deadline=None)
@given(numbers=st.lists(json_numbers, min_size=1, max_size=8))
def test_any_number_text_in_arguments_json_round_trips_through_the_codec(
    numbers: list[str],
) -> None:
    arguments = "[" + ",".join(numbers) + "]"
    text = (
        '{"conversation":{"messages":[{"role":"assistant","tool_calls":'
        f'[{{"id":"c","tool_name":"t","arguments_json":{arguments}}}]}}]}}}}'
    )
    thread = codec.decode_thread(text)
    assert f'"arguments_json":{arguments}' in codec.encode_thread(thread, pretty=False).decode()
    again = codec.decode_thread(codec.encode_thread(thread))
    assert codec.digest(codec.document(again)) == codec.digest(codec.document(thread))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(literal: str) -> None:
    with pytest.raises(ValueError, match=f"{literal} is not valid JSON"):
        codec.loads(f'{{"n":{literal}}}')


@hypothesis_settings(max_examples=500, deadline=None)
@given(number=json_numbers)
def test_jsontext_writes_back_any_number_text(number: str) -> None:
    value = jsontext.loads(number)
    assert jsontext.dumps(value) == number
    assert jsontext.dumps([value, {"n": value}], indent=2) == jsontext.dumps(
        jsontext.loads(f'[{number}, {{"n": {number}}}]'), indent=2
    )


@pytest.mark.parametrize(
    ("text", "kind"), [("17", int), ("-3", int), ("0.5", float), ("-0.0", float)]
)
def test_ordinary_numbers_stay_int_and_float(text: str, kind: type) -> None:
    assert type(jsontext.loads(text)) is kind


def test_json_numbers_compare_by_text() -> None:
    assert jsontext.loads("1E2") == JsonNumber("1E2")
    assert jsontext.loads("1E2") != jsontext.loads("1e2")
    assert jsontext.loads("1E2").to_decimal() == 100
    assert float(jsontext.loads("1e400")) == float("inf")
