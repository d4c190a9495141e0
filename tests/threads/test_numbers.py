"""JSON numbers come back exactly as written (API.md section 2, round-trip guarantee).

Every write path (PUT, POST create, append, PATCH, fork, a 409's ``current``) and every place a
number can sit in a document (tool-call arguments, message extra fields, metadata.extra, unknown
fields, agent state). Once, a 5,000-digit integer answered 400 and ``1E2``, ``-0``, ``1e400``
or 36-digit decimals came back changed. Bodies are sent as raw text, so nothing on the way in
re-encodes a number; answers are checked as raw text too.
"""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.json_numbers import json_numbers

#: Number texts Python's json would change or refuse, and a few it keeps.
NUMBERS = [
    "1E2",
    "1e+2",
    "-0",
    "-0.0",
    "1.0",
    "0.50",
    "1e400",
    "-1e-400",
    "123456789012345678901234567890.123456",
    "9" * 5000,
    "-" + "1" * 5000 + ".5e-7",
    "17",
    "0.1",
]


@pytest.fixture
def me(auth: TokenFactory, new_user) -> dict[str, str]:
    return auth(new_user("numbers"), org="acme")


def _json(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "content-type": "application/json"}


def _document(tid: ThreadId, number: str) -> str:
    """A thread whose every open place holds ``number``, as raw JSON text."""
    n = number
    message = (
        f'{{"role":"assistant","content":"found the numbers","x_cost":{n},'
        f'"tool_calls":[{{"id":"c1","tool_name":"calc","arguments_json":{{"n":{n},"list":[{n}]}}}}]}}'
    )
    return (
        f'{{"id":"{tid}","x_top":{n},"agent_state":{{"kind":"error","last_error":{n}}},'
        f'"metadata":{{"title":"numbers","extra":{{"n":{n}}}}},'
        f'"conversation":{{"x_conv":{n},"messages":[{{"role":"user","content":"hi"}},{message}]}}}}'
    )


def _holds_everywhere(text: str, number: str) -> None:
    n = number
    for piece in (
        f'"x_top":{n}',
        f'"last_error":{n}',
        f'"extra":{{"n":{n}}}',
        f'"x_conv":{n}',
        f'"x_cost":{n}',
        f'"arguments_json":{{"n":{n},"list":[{n}]}}',
    ):
        assert piece in text, (piece[:80], text[:2000])


@pytest.mark.parametrize("number", NUMBERS, ids=lambda n: n[:24])
async def test_put_then_get_keeps_every_number_as_written(
    client: httpx.AsyncClient, me: dict[str, str], number: str
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    response = await client.put(url, content=_document(tid, number), headers=_json(me))
    assert response.status_code == 201, response.text[:500]
    _holds_everywhere(response.text, number)
    got = await client.get(url, headers=me)
    assert got.status_code == 200
    _holds_everywhere(got.text, number)


@pytest.mark.parametrize("number", ["1E2", "-0", "9" * 5000], ids=lambda n: n[:24])
async def test_post_create_keeps_numbers(
    client: httpx.AsyncClient, me: dict[str, str], number: str
) -> None:
    tid = ThreadId.new()
    response = await client.post("/api/threads", content=_document(tid, number), headers=_json(me))
    assert response.status_code == 201, response.text[:500]
    got = await client.get(f"/api/threads/{tid}", headers=me)
    _holds_everywhere(got.text, number)


@pytest.mark.parametrize("number", ["1E2", "-0", "1e400", "9" * 5000], ids=lambda n: n[:24])
async def test_append_keeps_numbers_in_messages_and_agent_state(
    client: httpx.AsyncClient, me: dict[str, str], number: str
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, json={"id": str(tid)}, headers=me)).status_code == 201
    body = (
        f'{{"messages":[{{"role":"assistant","content":"c","x":{number},"tool_calls":'
        f'[{{"id":"a","tool_name":"t","arguments_json":[{number}]}}]}}],'
        f'"agent_state":{{"kind":"error","last_error":{{"code":{number}}}}}}}'
    )
    appended = await client.post(
        f"{url}/messages", content=body, headers={**_json(me), "If-Match": '"1"'}
    )
    assert appended.status_code == 200, appended.text[:500]
    text = (await client.get(url, headers=me)).text
    assert f'"x":{number}' in text
    assert f'"arguments_json":[{number}]' in text
    assert f'"last_error":{{"code":{number}}}' in text


async def test_patch_of_metadata_extra_and_fork_keep_numbers(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    big = "7" * 5000
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, content=_document(tid, "-0"), headers=_json(me))).is_success
    patch = f'{{"metadata":{{"extra":{{"added":{big},"ratio":1E-3}}}}}}'
    patched = await client.patch(
        url, content=patch, headers={**me, "content-type": "application/merge-patch+json"}
    )
    assert patched.status_code == 200, patched.text[:500]
    assert f'"added":{big}' in patched.text
    assert '"ratio":1E-3' in patched.text
    assert '"x_top":-0' in patched.text  # the rest of the stored document is untouched
    forked = await client.post(f"{url}/fork", headers=me)
    assert forked.status_code == 201, forked.text[:500]
    for piece in (f'"added":{big}', '"ratio":1E-3', '"x_top":-0', '"arguments_json":{"n":-0'):
        assert piece in forked.text


async def test_conflict_answer_carries_the_numbers(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    big = "3" * 5000
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, content=_document(tid, big), headers=_json(me))).is_success
    stale = await client.put(url, json={"id": str(tid), "version": 0}, headers=me)
    assert stale.status_code == 409, stale.text[:500]
    _holds_everywhere(stale.text, big)


async def test_search_and_list_find_a_thread_with_huge_numbers(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, content=_document(tid, "8" * 5000), headers=_json(me))).is_success
    found = await client.get(
        "/api/threads/search", params={"q": "found numbers", "limit": 100}, headers=me
    )
    assert found.status_code == 200, found.text[:500]
    hits = [h for h in found.json()["hits"] if h["thread"]["id"] == str(tid)]
    assert hits
    assert hits[0]["message_index"] == 1
    listed = await client.get("/api/threads", params={"limit": 200}, headers=me)
    assert listed.status_code == 200
    assert str(tid) in [t["id"] for t in listed.json()["threads"]]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
async def test_nan_and_infinity_are_400_and_nothing_is_stored(
    client: httpx.AsyncClient, me: dict[str, str], literal: str
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    body = f'{{"id":"{tid}","metadata":{{"extra":{{"n":{literal}}}}}}}'
    response = await client.put(url, content=body, headers=_json(me))
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "invalid_request"
    assert f"{literal} is not valid JSON" in problem["detail"]
    assert (await client.get(url, headers=me)).status_code == 404


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("version", '{{"version":{n}}}'),
        ("agent_state.retries", '{{"agent_state":{{"retries":{n}}}}}'),
    ],
)
@pytest.mark.parametrize("number", ["9" * 5000, "1e400", "2.5"], ids=lambda n: n[:12])
async def test_interpreted_numbers_out_of_range_are_422_naming_the_field(
    client: httpx.AsyncClient, me: dict[str, str], field: str, body: str, number: str
) -> None:
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", content=body.format(n=number), headers=_json(me)
    )
    assert response.status_code == 422, response.text[:500]
    locs = [".".join(map(str, e["loc"])) for e in response.json()["errors"]]
    assert f"body.{field}" in locs


@pytest.mark.parametrize("number", ["-0", "0E5", "0.0e0"])
async def test_integral_version_written_otherwise_is_that_int(
    client: httpx.AsyncClient, me: dict[str, str], number: str
) -> None:
    tid = ThreadId.new()
    response = await client.put(
        f"/api/threads/{tid}", content=f'{{"version":{number}}}', headers=_json(me)
    )
    assert response.status_code == 201, response.text[:500]
    assert response.json()["version"] == 1


async def test_fork_up_to_of_5000_digits_is_422(
    client: httpx.AsyncClient, me: dict[str, str]
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    assert (await client.put(url, json={"id": str(tid)}, headers=me)).is_success
    response = await client.post(
        f"{url}/fork", content=f'{{"up_to":{"9" * 5000}}}', headers=_json(me)
    )
    assert response.status_code == 422, response.text[:500]
    assert ["body", "up_to"] in [e["loc"] for e in response.json()["errors"]]


@pytest.mark.parametrize("path", ["/api/threads", "/api/threads/search?q=x"])
async def test_limit_of_5000_digits_is_422(
    client: httpx.AsyncClient, me: dict[str, str], path: str
) -> None:
    joiner = "&" if "?" in path else "?"
    response = await client.get(f"{path}{joiner}limit={'9' * 5000}", headers=me)
    assert response.status_code == 422, response.text[:500]


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(numbers=st.lists(json_numbers, min_size=1, max_size=6))
async def test_any_number_text_in_arguments_json_round_trips(
    client: httpx.AsyncClient, me: dict[str, str], numbers: list[str]
) -> None:
    tid = ThreadId.new()
    url = f"/api/threads/{tid}"
    arguments = "[" + ",".join(numbers) + "]"
    body = (
        f'{{"id":"{tid}","conversation":{{"messages":[{{"role":"assistant","content":"",'
        f'"tool_calls":[{{"id":"c","tool_name":"t","arguments_json":{arguments}}}]}}]}}}}'
    )
    response = await client.put(url, content=body, headers=_json(me))
    assert response.status_code == 201, response.text[:300]
    assert f'"arguments_json":{arguments}' in (await client.get(url, headers=me)).text
