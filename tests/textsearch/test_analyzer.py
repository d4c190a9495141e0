"""The shared analyzer (loomsync.core.textsearch; issue 14): words, identifiers, Unicode, bigrams."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loomsync.core.textsearch.analyzer import lexemes, tokens
from loomsync.core.textsearch.normalize import normalize
from loomsync.core.textsearch.query import parse


def analysed(text: str) -> list[tuple[str, int]]:
    return [(t.lexeme, t.position) for t in tokens(normalize(text))]


def words(text: str) -> set[str]:
    return {t.lexeme for t in tokens(normalize(text))}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("running threads", [("run", 1), ("thread", 2)]),
        ("exportEnvVars", [("export", 1), ("env", 2), ("var", 3), ("exportenvvar", 3)]),
        ("export_env_vars", [("export", 1), ("env", 2), ("var", 3), ("exportenvvar", 3)]),
        ("HTTPServer", [("http", 1), ("server", 2), ("httpserver", 2)]),
        ("missing_colon.py", [("miss", 1), ("colon", 2), ("missingcolon", 2), ("py", 3)]),
        ("sha256 v2 a0y", [("sha256", 1), ("v2", 2), ("a0i", 3)]),  # Porter2: y to i
        ("0.0.0.0:8000", [("0", 1), ("0", 2), ("0", 3), ("0", 4), ("8000", 5)]),
        (
            "sync_session_by_id",
            [("sync", 1), ("session", 2), ("by", 3), ("id", 4), ("syncsessionbyid", 4)],
        ),
        ("is_valid", [("is", 1), ("valid", 2), ("isvalid", 2)]),
        ("ไม่มี", [("ไม", 1), ("ม่", 2), ("่ม", 3), ("มี", 4), ("ี", 4)]),
        ("the and of", []),
        ("__init__", [("init", 1)]),
        ("分析", [("分析", 1), ("析", 1)]),
        (
            "技術スタック",
            [("技術", 1), ("術ス", 2), ("スタ", 3), ("タッ", 4), ("ック", 5), ("ク", 5)],
        ),
        ("图片或者pdf", [("图片", 1), ("片或", 2), ("或者", 3), ("者", 3), ("pdf", 4)]),
        ("字", [("字", 1)]),
    ],
)
def test_words_parts_and_bigrams(text: str, expected: list[tuple[str, int]]) -> None:
    assert analysed(text) == expected


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("caf\u00e9", "cafe\u0301"),  # NFC and NFD
        ("password", "pass\u00adword"),  # soft hyphen inside the word
        ("password", "pass\u200bword"),  # zero-width space
        ("password", "pass\u2060word\ufeff"),  # word joiner, byte order mark
        ("file", "\ufb01le"),  # the fi ligature
        ("test", "\uff54\uff45\uff53\uff54"),  # full-width letters
        ("\u30a2\u30c3\u30d7", "\uff71\uff6f\uff8c\uff9f"),  # half-width katakana
    ],
)
def test_spellings_that_look_alike_are_one_word(one: str, other: str) -> None:
    assert words(one) == words(other) != set()


def test_escaped_line_breaks_in_tool_output_separate_words() -> None:
    assert words('{"output":"first\\nsecond"}') == {"output", "first", "second"}


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_the_fast_path_gives_the_same_lexemes_and_positions(text: str) -> None:
    normal = normalize(text)
    assert list(lexemes(normal)) == [(t.lexeme, t.position) for t in tokens(normal)]


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_spans_hold_the_text_of_each_lexeme(text: str) -> None:
    normal = normalize(text)
    for token in tokens(normal):
        assert 0 <= token.start < token.end <= len(normal)
        assert token.lexeme.isalnum() or not token.lexeme.isascii()


def test_a_query_is_cut_as_its_text_is() -> None:
    query = parse("messages_unique_session_uuid_index")
    assert len(query.units) == 1
    assert query.units[0].is_phrase
    assert set(query.lexemes) <= words("messages_unique_session_uuid_index")
