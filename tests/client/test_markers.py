"""Equal but for redaction markers (loomsync/markers.py): what lets sync tell a server that
redacted more from a rewritten history (issue 12, item 1). Properties with hypothesis."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loomsync.markers import adopt_redactions, is_redaction_of
from loomsync.secrets import marker

KINDS = st.sampled_from(["aws-access-key", "github-token", "url-password"])


@st.composite
def redacted_pair(draw: st.DrawFn) -> tuple[str, str]:
    """(original, redacted): spans of any text but NUL, each maybe replaced by a marker."""
    text = st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=12)
    parts = draw(st.lists(text, min_size=1, max_size=8))
    hide = draw(st.lists(st.booleans(), min_size=len(parts), max_size=len(parts)))
    kinds = draw(st.lists(KINDS, min_size=len(parts), max_size=len(parts)))
    redacted = "".join(
        marker(kind) if hidden else part
        for part, hidden, kind in zip(parts, hide, kinds, strict=True)
    )
    return "".join(parts), redacted


@given(redacted_pair())
def test_text_with_spans_replaced_by_markers_is_a_redaction_of_it(pair: tuple[str, str]) -> None:
    original, redacted = pair
    assert is_redaction_of(redacted, original)
    assert adopt_redactions(redacted, original) == redacted


@given(redacted_pair(), st.text(min_size=1, max_size=4))
def test_a_change_outside_the_markers_is_not_a_redaction(pair: tuple[str, str], extra: str) -> None:
    original, redacted = pair
    assert not is_redaction_of(redacted + "\x00" + extra, original)
    assert not is_redaction_of(extra + "\x00" + redacted, original)


def test_a_marker_stands_for_at_least_one_character() -> None:
    assert not is_redaction_of(f"key {marker('aws-access-key')}", "key ")
    assert is_redaction_of(f"key {marker('aws-access-key')}!", "key AKIA!")
    assert not is_redaction_of("plain text", "other text")


def test_json_values_are_compared_structurally() -> None:
    mark = marker("github-token")
    original = {"content": "use ghp_x now", "n": 1, "calls": [{"args": {"cmd": "ghp_y"}}]}
    redacted = {"content": f"use {mark} now", "n": 1, "calls": [{"args": {"cmd": mark}}]}
    assert is_redaction_of(redacted, original)
    assert not is_redaction_of({**redacted, "n": 2}, original)
    assert not is_redaction_of({**redacted, "new": 1}, original)
    mixed = {**original, "content": f"use {mark} now", "n": 5}
    assert adopt_redactions(mixed, original) == {**original, "content": f"use {mark} now"}
    assert adopt_redactions(original, original) is original
