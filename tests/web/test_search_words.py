"""``/search`` says why it shows no hits (issue 14 review): a query of only common words or
punctuation has nothing to search for; an empty query shows a hint, not a blank page."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from tests.conftest import TokenFactory
from tests.web.signing import sign_in
from tests.web.test_home_search import store


@pytest.mark.parametrize("q", ["the and of", "how do I", "?!? ...", "  -  "])
async def test_only_common_words_say_there_is_nothing_to_search_for(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str], q: str
) -> None:
    alice = auth(new_user("alice"))
    await store(client, alice, "The and of", ["how do I do it? the and of"])
    await sign_in(client, alice)
    for syntax in ("plain", "web"):
        page = await client.get("/search", params={"q": q, "syntax": syntax})
        assert page.status_code == 200
        assert "Nothing to search for: only common words." in page.text
        assert "No thread matches." not in page.text


async def test_an_empty_query_shows_a_hint_and_a_real_word_no_notice(
    client: httpx.AsyncClient, auth: TokenFactory, new_user: Callable[[str], str]
) -> None:
    alice = auth(new_user("alice"))
    await store(client, alice, "Capybara notes", ["the capybara grazes"])
    await sign_in(client, alice)
    empty = await client.get("/search", params={"q": ""})
    assert empty.status_code == 200
    assert "Type words from a conversation" in empty.text
    found = await client.get("/search", params={"q": "the capybara"})
    assert "Capybara notes" in found.text
    assert "Nothing to search for" not in found.text
    assert "Type words from a conversation" not in found.text
