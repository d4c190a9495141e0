"""A query of one hex word (7-40 characters) on the server: the word itself or a SHA prefix
(loomsync.core.textsearch.commits; issue 14 review: ``defaced`` found nothing)."""

from __future__ import annotations

import secrets

import httpx
import pytest

from tests.threads.test_search import ids, messages, put, search, word


@pytest.mark.parametrize("syntax", ["plain", "web"])
@pytest.mark.parametrize("english", ["defaced", "acceded", "effaced"])
async def test_an_english_word_of_hex_letters_finds_its_text(
    client: httpx.AsyncClient, owner: dict[str, str], english: str, syntax: str
) -> None:
    marker = word()
    tid = await put(client, owner, conversation=messages(f"{marker}: the wall was {english}"))
    assert ids(await search(client, owner, english, syntax=syntax)) == [tid]


@pytest.mark.parametrize("syntax", ["plain", "web"])
async def test_a_hex_word_still_finds_a_full_hash_in_text_and_a_commit(
    client: httpx.AsyncClient, owner: dict[str, str], syntax: str
) -> None:
    sha = secrets.token_hex(20)
    printed = await put(client, owner, conversation=messages(f"HEAD is now at {sha} fix"))
    commit = secrets.token_hex(20)
    committed = await put(client, owner, git_commits=[commit])
    hits = await search(client, owner, sha[:9], syntax=syntax)
    assert ids(hits) == [printed]
    assert hits[0]["message_index"] == 0
    assert ids(await search(client, owner, commit[:8].upper())) == [committed]
