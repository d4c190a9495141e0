"""Equal but for redaction markers (loomsync/sync/markers.py): what lets sync tell a server that
redacted more from a rewritten history (issue 12, item 1). Properties with hypothesis."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from loomsync.core.secrets import marker
from loomsync.sync.markers import MIN_SPAN, adopt_redactions, is_redaction_of

KINDS = st.sampled_from(["aws-access-key", "github-token", "url-password"])


@st.composite
def redacted_pair(draw: st.DrawFn) -> tuple[str, str]:
    """(original, redacted): spans of any text but NUL, each maybe replaced by a marker (the
    replaced ones shaped like a finding: MIN_SPAN or more characters without whitespace)."""
    text = st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=12)
    secret = st.text(
        st.characters(blacklist_categories=("Zs", "Zl", "Zp", "Cc")), min_size=MIN_SPAN, max_size=20
    )
    hide = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    parts = [draw(secret if hidden else text) for hidden in hide]
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


def test_a_marker_stands_for_something_shaped_like_a_credential() -> None:
    aws, pem = marker("aws-access-key"), marker("private-key")
    assert not is_redaction_of(f"key {aws}", "key ")
    assert is_redaction_of(f"key {aws}!", "key AKIAQX4TBSR7EXAMPLE!")
    assert not is_redaction_of("plain text", "other text")
    assert not is_redaction_of(f"key {aws}!", "key AKIA!")  # too short to be a finding
    assert not is_redaction_of(pem, "Tests: 130 passed in 4.2s")  # review P2-10
    assert not is_redaction_of(marker("secret-assignment"), "Fix the login bug")
    block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7 x\n-----END RSA PRIVATE KEY-----"
    assert is_redaction_of(f"key:\n{pem}\ndone", f"key:\n{block}\ndone")


def test_json_values_are_compared_structurally() -> None:
    mark = marker("github-token")
    original = {
        "content": "use ghp_Zq8pW2rT5v now",
        "n": 1,
        "calls": [{"args": {"cmd": "ghp_W2rT5vZq8p"}}],
    }
    redacted = {"content": f"use {mark} now", "n": 1, "calls": [{"args": {"cmd": mark}}]}
    assert is_redaction_of(redacted, original)
    assert not is_redaction_of({**redacted, "n": 2}, original)
    assert not is_redaction_of({**redacted, "new": 1}, original)
    mixed = {**original, "content": f"use {mark} now", "n": 5}
    assert adopt_redactions(mixed, original) == {**original, "content": f"use {mark} now"}
    assert adopt_redactions(original, original) is original
