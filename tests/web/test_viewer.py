"""The thread pages over HTTP (in-process): who may read ``/t/{id}`` (API.md section 4, with
the web session as the principal), paging, the fragments the script loads, "show all", and
errors as 4xx."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from app.web.reading import PAGE
from app.web.render.messages import FULL_CHARS, TEXT_CHARS
from tests.conftest import TokenFactory
from tests.web.documents import conversation, document
from tests.web.rows import insert_session

ANCHOR = re.compile(r'id="m-(\d+)"')
Headers = dict[str, str]
SessionOf = Callable[..., Awaitable[Headers]]


async def _store(client: httpx.AsyncClient, headers: dict[str, str], doc: dict[str, Any]) -> str:
    response = await client.put(f"/api/threads/{doc['id']}", json=doc, headers=headers)
    assert response.status_code == 201, response.text
    return str(doc["id"])


def _anchors(html: str) -> list[int]:
    return [int(n) for n in ANCHOR.findall(html)]


async def _status(
    client: httpx.AsyncClient, path: str, headers: dict[str, str] | None = None
) -> int:
    return (await client.get(path, headers=headers)).status_code


@pytest.fixture
def session_of(database_url: str) -> SessionOf:
    """``await session_of(user, org, roles)``: the headers of a new live web session."""

    async def make(user: str, org: str | None = None, roles: tuple[str, ...] = ()) -> Headers:
        return await insert_session(database_url, user, org, roles)

    return make


async def test_public_thread_page_shows_header_and_first_page_only(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    doc = document(conversation(120), title="Paging <b>test</b>", visibility="public")
    thread_id = await _store(client, owner, doc)
    response = await client.get(f"/t/{thread_id}")
    assert response.status_code == 200
    html = response.text
    assert _anchors(html) == list(range(PAGE))
    assert "Paging &lt;b&gt;test&lt;/b&gt;" in html
    assert "git@example.com:acme/app.git" in html
    assert "test-model" in html
    assert f'href="/t/{thread_id}?from={PAGE}"' in html
    assert f'data-fragment="/t/{thread_id}/messages?from={PAGE}"' in html
    assert "nonce-" in response.headers["content-security-policy"]
    assert response.headers["cache-control"] == "no-store"


async def test_from_opens_the_page_holding_that_message(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    thread_id = await _store(client, owner, document(conversation(120), visibility="public"))
    html = (await client.get(f"/t/{thread_id}?from={PAGE + 7}")).text
    assert _anchors(html) == list(range(PAGE, 2 * PAGE))
    assert f'href="/t/{thread_id}?from=0"' in html  # "Earlier messages"
    last = (await client.get(f"/t/{thread_id}?from=110")).text
    assert _anchors(last) == list(range(2 * PAGE, 120))
    assert "?from=150" not in last


async def test_messages_fragment_is_one_page_without_the_site_frame(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    thread_id = await _store(client, owner, document(conversation(120), visibility="public"))
    response = await client.get(f"/t/{thread_id}/messages?from={PAGE}")
    assert response.status_code == 200
    assert _anchors(response.text) == list(range(PAGE, 2 * PAGE))
    assert "<html" not in response.text
    assert "thread-head" not in response.text


async def test_private_thread_is_a_404_to_anyone_but_its_owner(
    client: httpx.AsyncClient,
    session_of: SessionOf,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    org = new_org("acme")
    alice = new_user("alice")
    page = f"/t/{await _store(client, auth(alice, org=org), document(conversation(3)))}"
    assert await _status(client, page) == 404
    assert await _status(client, page, await session_of(new_user("bob"), org)) == 404
    assert await _status(client, page, await session_of(alice, org)) == 200
    admin = await session_of(new_user("root"), None, ("admin",))
    assert await _status(client, page, admin) == 200


async def test_organization_thread_opens_for_a_teammate_session_only(
    client: httpx.AsyncClient,
    session_of: SessionOf,
    auth: TokenFactory,
    new_user: Callable[[str], str],
    new_org: Callable[[str], str],
) -> None:
    org = new_org("acme")
    doc = document(conversation(3), visibility="organization")
    thread_id = await _store(client, auth(new_user("alice"), org=org), doc)
    teammate = await session_of(new_user("bob"), org)
    stranger = await session_of(new_user("eve"), new_org("other"))
    assert await _status(client, f"/t/{thread_id}", teammate) == 200
    for path in (f"/t/{thread_id}", f"/t/{thread_id}/messages", f"/t/{thread_id}/m/0"):
        assert await _status(client, path, stranger) == 404


async def test_bearer_token_does_not_open_a_page(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    """Pages read the session cookie only; an Authorization header is not a page principal."""
    thread_id = await _store(client, owner, document(conversation(3)))
    assert (await client.get(f"/t/{thread_id}", headers=owner)).status_code == 404


async def test_deleted_thread_page_is_410(client: httpx.AsyncClient, owner: dict[str, str]) -> None:
    thread_id = await _store(client, owner, document(conversation(3), visibility="public"))
    assert (await client.delete(f"/api/threads/{thread_id}", headers=owner)).status_code == 204
    assert (await client.get(f"/t/{thread_id}")).status_code == 410


async def test_bad_page_inputs_are_4xx(client: httpx.AsyncClient, owner: dict[str, str]) -> None:
    thread_id = await _store(client, owner, document(conversation(3), visibility="public"))
    for path in (
        f"/t/{thread_id}?from=3",
        f"/t/{thread_id}?from=999999999",
        f"/t/{thread_id}/m/3",
        f"/t/{thread_id}/m/3/body",
        "/t/T-00000000-0000-7000-8000-000000000000",
        "/t/T-NOT-A-UUID",
        f"/t/{thread_id.upper()}",
    ):
        assert (await client.get(path)).status_code == 404, path
    for path in (
        f"/t/{thread_id}?from=-1",
        f"/t/{thread_id}?from=abc",
        f"/t/{thread_id}?from=99999999999999999999",
        f"/t/{thread_id}/m/-1",
        f"/t/{thread_id}/m/x",
    ):
        status = (await client.get(path)).status_code
        assert 400 <= status < 500, (path, status)


async def test_long_message_is_cut_and_show_all_gives_all_of_it(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    long = " ".join(f"word{n}" for n in range(5_000))
    messages = [
        {"role": "user", "content": long},
        {"role": "tool", "tool_name": "shell", "content": "\n".join(map(str, range(2_000)))},
    ]
    thread_id = await _store(client, owner, document(messages, visibility="public"))
    page = (await client.get(f"/t/{thread_id}")).text
    assert "word100 " in page
    assert "word4999" not in page
    assert f'href="/t/{thread_id}/m/0"' in page
    assert f'href="/t/{thread_id}/m/1"' in page
    assert "\n1999" not in page
    assert len(page) < 4 * TEXT_CHARS + 20_000
    whole = await client.get(f"/t/{thread_id}/m/0/body")
    assert whole.status_code == 200
    assert "word4999" in whole.text
    assert "<html" not in whole.text
    output = (await client.get(f"/t/{thread_id}/m/1")).text
    assert "\n1999" in output
    assert "<html" in output
    assert "Back to the thread" in output


async def test_first_page_bytes_do_not_grow_with_thread_length(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    sizes = []
    for count in (PAGE + 1, 5_000):
        doc = document(conversation(count), visibility="public")
        thread_id = await _store(client, owner, doc)
        html = (await client.get(f"/t/{thread_id}")).text
        sizes.append(len(html.replace(f"{count:,}", "").replace(str(count), "")))
    assert abs(sizes[0] - sizes[1]) < 50, sizes


async def test_tool_calls_and_output_are_collapsed_with_their_size(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    messages = [
        {
            "role": "assistant",
            "content": "Running it.",
            "tool_calls": [{"id": "c1", "tool_name": "shell", "arguments_json": {"cmd": "ls"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "tool_name": "shell",
            "content": '{"output":"a.txt\\nb.txt\\n","metadata":{"exit_code":0}}',
        },
        {"role": "user", "content": "```python\ndef f():\n    return 1\n```"},
    ]
    thread_id = await _store(client, owner, document(messages, visibility="public"))
    html = (await client.get(f"/t/{thread_id}")).text
    assert html.count('<details class="box call">') == 1
    assert html.count('<details class="box output">') == 1
    assert "exit code 0" in html
    assert "a.txt\nb.txt" in html
    assert re.search(r'<span class="size">\d+ B</span>', html)
    assert '<span class="k">def</span>' in html  # Pygments classes, server-side
    assert " style=" not in html


async def test_raw_message_is_its_json_served_inert(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    content = "<script>alert(1)</script>\x00" + "x" * (FULL_CHARS + 10)
    messages = [{"role": "tool", "tool_name": "cat", "content": content, "extra": 1.50}]
    doc = document(messages, visibility="public")
    text = json.dumps(doc).replace('"extra": 1.5', '"extra": 1.50')
    stored = await client.put(
        f"/api/threads/{doc['id']}",
        content=text,
        headers={**owner, "Content-Type": "application/json"},
    )
    assert stored.status_code == 201, stored.text
    thread_id = doc["id"]
    full = (await client.get(f"/t/{thread_id}/m/0/body")).text
    assert len(full) < FULL_CHARS + 10_000
    assert f'href="/t/{thread_id}/m/0/raw"' in full
    assert "are cut here" in full
    raw = await client.get(f"/t/{thread_id}/m/0/raw")
    assert raw.status_code == 200
    assert raw.headers["content-type"] == "application/json"
    assert raw.headers["x-content-type-options"] == "nosniff"
    policy = raw.headers["content-security-policy"]
    for directive in ("default-src 'none'", "sandbox", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in policy
    assert raw.json()["content"] == content
    assert '"extra": 1.50' in raw.text  # numbers as written (API.md section 2)
    assert (await client.get(f"/t/{thread_id}/m/1/raw")).status_code == 404


async def test_nul_and_lone_surrogates_render_and_download(
    client: httpx.AsyncClient, owner: dict[str, str]
) -> None:
    """API.md section 2 keeps NUL and lone surrogate escapes; the page shows markers and
    U+FFFD, the raw JSON keeps them as escapes."""
    doc = document([{"role": "user", "content": "PLACEHOLDER"}], visibility="public")
    text = json.dumps(doc).replace("PLACEHOLDER", "a\\u0000b\\ud800c \\u202e")
    stored = await client.put(
        f"/api/threads/{doc['id']}",
        content=text,
        headers={**owner, "Content-Type": "application/json"},
    )
    assert stored.status_code == 201, stored.text
    page = await client.get(f"/t/{doc['id']}")
    assert page.status_code == 200
    assert 'title="U+0000"' in page.text
    assert "b\ufffdc" in page.text
    assert 'title="U+202E"' in page.text
    assert "\u202e" not in page.text
    raw = await client.get(f"/t/{doc['id']}/m/0/raw")
    assert raw.status_code == 200
    assert "\\u0000" in raw.text
    assert "\\ud800" in raw.text
