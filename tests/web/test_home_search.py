"""``/`` (your threads and those shared with you) and ``/search`` (hits linking to
``/t/{id}#m-N``), signed in through /login (issue 13, item 3)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

import httpx

from app.web.reading import PAGE
from tests.conftest import TokenFactory
from tests.web.signing import sign_in

Names = Callable[[str], str]


async def store(
    client: httpx.AsyncClient,
    headers: dict[str, str],
    title: str,
    contents: list[str],
    visibility: str = "private",
) -> str:
    """PUT a thread with these message contents; its id."""
    thread_id = f"T-{uuid.uuid4()}"
    doc: dict[str, Any] = {
        "id": thread_id,
        "visibility": visibility,
        "metadata": {"title": title},
        "git_remote_url": "https://github.com/acme/widgets.git",
        "git_branch": "feature/auth",
        "conversation": {
            "messages": [
                {"role": "user" if i % 2 == 0 else "assistant", "content": c}
                for i, c in enumerate(contents)
            ]
        },
    }
    response = await client.put(f"/api/threads/{thread_id}", headers=headers, json=doc)
    assert response.status_code == 201, response.text
    return thread_id


async def test_home_without_a_session_explains_how_to_sign_in(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200
    assert "loomsync open" in page.text
    assert "Not signed in" in page.text


async def test_home_lists_your_threads_and_those_shared_with_you(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, new_org: Names
) -> None:
    org = new_org("acme")
    alice, bob, carol = (
        auth(new_user("alice"), org=org),
        auth(new_user("bob"), org=org),
        auth(new_user("carol"), org=new_org("other")),
    )
    mine = await store(client, alice, "alice's own thread", ["hello"])
    shared = await store(client, bob, "bob shares this", ["hi"], visibility="organization")
    bobs_private = await store(client, bob, "bob keeps this", ["secret"])
    other_org = await store(client, carol, "carol's org thread", ["x"], visibility="organization")
    await sign_in(client, alice)
    page = (await client.get("/")).text
    yours, _, theirs = page.partition('id="shared"')
    assert f'href="/t/{mine}"' in yours
    assert f'href="/t/{shared}"' in theirs
    assert f'href="/t/{shared}"' not in yours
    assert bobs_private not in page
    assert other_org not in page
    assert "acme/widgets" in page
    assert "feature/auth" in page


async def test_home_pages_through_many_threads(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    alice = auth(new_user("alice"))
    ids = {await store(client, alice, f"thread {i}", ["x"]) for i in range(30)}
    await sign_in(client, alice)
    seen: set[str] = set()
    url = "/"
    for _ in range(5):
        page = (await client.get(url)).text
        yours = page.partition('id="shared"')[0]
        seen |= set(re.findall(r'href="/t/(T-[0-9a-f-]+)"', yours))
        more = re.search(r'href="(/\?[^"#]*mine=[^"#]+)#mine"', yours)
        if more is None:
            break
        url = more.group(1).replace("&amp;", "&")
    assert seen == ids


async def test_home_with_a_foreign_cursor_is_a_400_page(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    page = await client.get("/", params={"mine": "not-a-cursor"})
    assert page.status_code == 400
    assert page.headers["content-type"].startswith("text/html")


async def test_search_links_each_hit_to_its_message(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    alice = auth(new_user("alice"))
    contents = [f"ordinary message {i}" for i in range(40)]
    contents[27] = "the flux capacitor needs 1.21 gigawatts"
    thread_id = await store(client, alice, "time machine notes", contents)
    later = [f"ordinary message {i}" for i in range(140)]
    later[130] = "a second capacitor at 1.21 gigawatts"
    later_id = await store(client, alice, "more notes", later)
    await sign_in(client, alice)
    page = await client.get("/search", params={"q": "capacitor gigawatts"})
    assert page.status_code == 200
    assert f'href="/t/{thread_id}#m-27"' in page.text
    # past the first page: the page holding the hit opens without JavaScript (G5)
    assert f'href="/t/{later_id}?from={PAGE * 2}#m-130"' in page.text
    target = await client.get(f"/t/{later_id}", params={"from": PAGE * 2})
    assert 'id="m-130"' in target.text
    assert "<b>capacitor</b>" in page.text


async def test_search_covers_threads_shared_with_you_or_only_yours(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names, new_org: Names
) -> None:
    org = new_org("acme")
    alice, bob = auth(new_user("alice"), org=org), auth(new_user("bob"), org=org)
    word = f"zq{uuid.uuid4().hex[:8]}"
    theirs = await store(client, bob, "bob's", [f"about {word}"], visibility="organization")
    await sign_in(client, alice)
    assert theirs in (await client.get("/search", params={"q": word})).text
    only_mine = await client.get("/search", params={"q": word, "scope": "mine"})
    assert theirs not in only_mine.text
    assert "No thread matches" in only_mine.text


async def test_search_snippet_carries_no_markup_from_the_thread(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    alice = auth(new_user("alice"))
    hostile = '<img src=x onerror="alert(1)"><script>alert(2)</script> quokka <b onclick=x>'
    await store(client, alice, "hostile", [hostile])
    await sign_in(client, alice)
    page = (await client.get("/search", params={"q": "quokka"})).text
    assert "<img" not in page
    assert "<script>alert" not in page
    assert "<b onclick" not in page
    assert "<b>quokka</b>" in page


async def test_search_without_a_session_is_a_401_page(client: httpx.AsyncClient) -> None:
    page = await client.get("/search", params={"q": "anything"})
    assert page.status_code == 401
    assert "loomsync open" in page.text


async def test_search_refuses_bad_input_with_400_pages(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    for params in (
        {"q": "x" * 1001},
        {"q": "x", "scope": "everyone"},
        {"q": "x", "syntax": "regex"},
        {"q": "x", "cursor": "forged"},
    ):
        page = await client.get("/search", params=params)
        assert page.status_code == 400, params
        assert page.headers["content-type"].startswith("text/html")


async def test_search_survives_hostile_queries(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    await sign_in(client, auth(new_user("alice")))
    for q in ("&|!():*<>'\\", "the of and", "\x00", "<script>alert(1)</script>", "   "):
        page = await client.get("/search", params={"q": q, "syntax": "web"})
        assert page.status_code == 200, q
        assert "<script>alert(1)</script>" not in page.text


async def test_search_pages_with_more_results(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Names
) -> None:
    alice = auth(new_user("alice"))
    word = f"zq{uuid.uuid4().hex[:8]}"
    ids = {await store(client, alice, f"n {i}", [f"{word} {i}"]) for i in range(25)}
    await sign_in(client, alice)
    first = (await client.get("/search", params={"q": word})).text
    more = re.search(r'href="(/search\?[^"]*cursor=[^"]+)"', first)
    assert more is not None
    second = (await client.get(more.group(1).replace("&amp;", "&"))).text
    found = set(re.findall(r'href="/t/(T-[0-9a-f-]+)', first + second))
    assert found == ids
