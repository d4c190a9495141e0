"""loomsync.core.textsearch.highlight: snippets mark what the index matched (issue 14, "Snippets")."""

from __future__ import annotations

import html
import re

from loomsync.core.textsearch.highlight import WINDOW_CHARS, snippet
from loomsync.core.textsearch.query import parse


def marked(s: str | None) -> list[str]:
    assert s is not None
    return re.findall(r"<b>(.*?)</b>", s)


def test_stems_and_identifier_alternatives_are_marked() -> None:
    s = snippet(
        "call exportEnvVars() then export_env_vars; running servers", parse("exportEnvVars")
    )
    assert marked(s) == ["exportEnvVars", "export_env_vars"]
    assert marked(snippet("The servers were running hot", parse("run server"))) == [
        "servers",
        "running",
    ]


def test_phrase_marked_only_where_its_words_are_adjacent() -> None:
    s = snippet("missing then colon; Error in missing_colon.py here", parse("missing_colon.py"))
    assert marked(s) == ["missing_colon.py"]


def test_text_in_another_unicode_form_and_invisible_characters() -> None:
    s = snippet("the pass\u00adword and the cafe\u0301", parse("password café"))
    assert marked(s) == ["password", "café"]


def test_cjk_substring_and_one_character() -> None:
    assert marked(snippet("私の技術スタックはPython", parse("スタック"))) == ["スタック"]
    assert marked(snippet("私の技術スタックはPython", parse("ス"))) == ["ス"]


def test_no_match_is_none_and_html_is_escaped() -> None:
    assert snippet("nothing to see", parse("absent")) is None
    s = snippet("<script>x</script> & needle <b>", parse("needle"))
    assert s is not None
    assert s.replace("<b>needle</b>", "").count("<") == 0
    assert "&lt;script&gt;" in s
    assert "&amp;" in s


def test_best_window_is_where_most_units_meet() -> None:
    text = "alpha " + "filler " * 200 + "alpha beta gamma together " + "filler " * 200 + "beta"
    s = snippet(text, parse("alpha beta gamma"))
    assert s is not None
    assert "<b>alpha</b> <b>beta</b> <b>gamma</b> together" in s


def test_fragments_join_units_apart() -> None:
    text = "alpha " + "filler " * 300 + "omega"
    s = snippet(text, parse("alpha omega"))
    assert s is not None
    assert marked(s) == ["alpha", "omega"]
    assert " … " in s
    assert len(s) < 400


def test_ten_megabytes_finds_the_one_match_at_the_end() -> None:
    text = "lorem ipsum dolor " * 600_000 + "unique_needle_here at the end"
    s = snippet(text, parse("unique_needle_here"))
    assert marked(s) == ["unique_needle_here"]
    assert s is not None
    assert len(s) < 400
    s = snippet(text.replace("lorem", "lörem"), parse("unique_needle_here"))
    assert marked(s) == ["unique_needle_here"]


def test_web_syntax_quoted_phrase() -> None:
    assert marked(snippet("the quick brown fox", parse('"brown fox" -quick', "web"))) == [
        "brown fox"
    ]


def shown(s: str | None) -> str:
    """The text a snippet shows: marks removed, entities decoded."""
    assert s is not None
    return html.unescape(s.replace("<b>", "").replace("</b>", ""))


def test_a_phrase_never_widens_the_window() -> None:
    # Overlapping matches of one phrase (x x x …) are one mark, within the window.
    s = snippet("x " * 40_000, parse('"' + " ".join(["x"] * 16) + '"', "web"))
    assert re.fullmatch(r"<b>x( x)*</b> …", s or "")
    assert len(shown(s)) <= WINDOW_CHARS + len(" …")
    # One match longer than the window (16 words of 20 letters) is shown cut, marked.
    words = [f"{chr(97 + i)}{'q' * 19}" for i in range(16)]
    s = snippet("before " + " ".join(words) + " after", parse('"' + " ".join(words) + '"', "web"))
    assert s is not None
    assert s.startswith("… <b>aq")
    assert len(shown(s)) <= WINDOW_CHARS + len("…  …")


def test_cuts_keep_escape_sequences_and_graphemes_whole() -> None:
    red = "\x1b[31m"
    for gap in range(140, 170):
        s = shown(snippet(f"wombat {'q' * gap}{red}tail", parse("wombat")))
        assert "\x1b" not in s or red in s, gap
    accented = "x\u0301\u0302\u0303"  # one grapheme of four code points (no NFKC form)
    for gap in range(140, 170):
        s = shown(snippet("wombat " + "q" * gap + accented * 40, parse("wombat")))
        assert s.endswith(" …")
        tail = s.removesuffix(" …").split("q")[-1]
        assert tail == accented * (len(tail) // 4), gap


def test_long_non_ascii_text_normalises_only_where_it_looks() -> None:
    # NFKC changes lengths before the match (… is three dots, ﬁ two letters): marks stay put.
    text = "ﬁle… straße " * 50_000 + "the zqneedle here " + "ﬁle… " * 50_000
    assert marked(snippet(text, parse("zqneedle"))) == ["zqneedle"]
    # a stem whose last letter is half of a folding (strass: straß) is still found
    assert "straße" in marked(snippet(text, parse("straße")))
    # a match only NFKC can see (full-width letters) is found by normalising the whole text
    wide = "".join(chr(ord(c) + 0xFEE0) for c in "zqneedle")
    assert marked(snippet("東京 " * 100_000 + wide, parse("zqneedle"))) == ["zqneedle"]
