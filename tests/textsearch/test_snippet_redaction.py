"""A snippet is redacted with its context (issue 27 item 5): wherever the cut falls, a value
whose name lies outside the snippet is never shown."""

from __future__ import annotations

import html
import re

from loomsync.core.secrets import default_redactor
from loomsync.core.textsearch.highlight import message_snippet, snippet
from loomsync.core.textsearch.query import parse
from tests.secrets.samples import B64, fake

#: An AWS secret key is 40 base64 characters with no prefix: alone it is no finding.
SECRET = fake(B64, 40)
FILLER = "ordinary build output line\n" * 80


def _shown(found: str | None) -> str:
    return html.unescape(re.sub(r"</?b>", "", found or ""))


def _leaks(text: str) -> bool:
    return any(SECRET[i : i + 8] in text for i in range(len(SECRET) - 7))


def test_the_value_alone_is_no_finding_so_the_name_must_be_seen() -> None:
    assert default_redactor().find(f"… {SECRET} and then ocelot") == []
    assert default_redactor().find(f"export AWS_SECRET_ACCESS_KEY={SECRET}") != []


def test_no_cut_of_a_long_text_shows_the_value_of_a_named_secret() -> None:
    query = parse("ocelot")
    leaked = []
    for gap in range(0, 400, 7):
        text = (
            f"{FILLER}$ export AWS_SECRET_ACCESS_KEY={SECRET}\n"
            + "x" * gap
            + f" then ocelot ran\n{FILLER}"
        )
        shown = _shown(snippet(text, query))
        assert "ocelot" in shown
        if _leaks(shown):
            leaked.append((gap, shown))
    assert leaked == []


def test_a_snippet_that_starts_at_the_value_shows_a_marker() -> None:
    text = f"{FILLER}export AWS_SECRET_ACCESS_KEY={SECRET} ocelot\n{FILLER}"
    shown = _shown(message_snippet([text], parse("ocelot")))
    assert "[REDACTED:aws-secret-key]" in shown
    assert not _leaks(shown)


def test_a_short_text_is_redacted_whole_and_keeps_its_highlight() -> None:
    text = f"export AWS_SECRET_ACCESS_KEY={SECRET} # the ocelot key"
    found = snippet(text, parse("ocelot")) or ""
    assert "<b>ocelot</b>" in found
    assert not _leaks(found)
    assert "[REDACTED:aws-secret-key]" in found
