"""A query of one hex word in the local search: the word itself or a SHA prefix, by the server's
rule (loomsync.core.textsearch.commits; issue 14 review: ``defaced`` found nothing)."""

from __future__ import annotations

import pytest

from loomsync import Thread
from loomsync.core.textsearch.commits import with_hex_prefix
from loomsync.core.textsearch.query import parse
from loomsync.store.localsearch import search_threads
from tests.client.conftest import new_thread


def _thread(title: str, *contents: str) -> Thread:
    messages = [{"role": "user", "content": c} for c in contents]
    return new_thread(0, metadata={"title": title}, conversation={"messages": messages})


@pytest.mark.parametrize("syntax", ["plain", "web"])
@pytest.mark.parametrize("english", ["defaced", "acceded", "effaced"])
def test_an_english_word_of_hex_letters_finds_its_text(english: str, syntax: str) -> None:
    threads = [_thread("wall", f"the wall was {english}"), _thread("other", "nothing")]
    assert [h.thread.title for h in search_threads(threads, english, syntax=syntax)] == ["wall"]


@pytest.mark.parametrize("syntax", ["plain", "web"])
def test_a_hex_word_still_finds_a_full_hash(syntax: str) -> None:
    threads = [_thread("log", "HEAD is now at 26a7a89b0c1d2e3f fix"), _thread("other", "x")]
    hits = search_threads(threads, "26a7a89b", syntax=syntax)
    assert [h.thread.title for h in hits] == ["log"]
    assert hits[0].snippet is not None
    assert "<b>" in hits[0].snippet


def test_the_prefix_is_or_ed_with_the_word() -> None:
    (group,) = with_hex_prefix(parse("defaced"), "defaced").groups
    assert [u.tsquery() for u in group] == ["( 'defaced':* )", "( 'defac' )"]
    assert with_hex_prefix(parse("two words"), None) == parse("two words")
