"""The renderer on its own: hostile Markdown and HTML come out inert, controls visible, code
highlighted with classes only, long text cut, sizes for people."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from app.web.pages import STATIC
from app.web.pagetime import page_time
from app.web.render.highlight import stylesheet
from app.web.render.markdown import (
    MAX_LINK_SCAN,
    MAX_MARKDOWN_CHARS,
    link_scan_cost,
    markdown_html,
    sanitize,
)
from app.web.render.messages import BOX_CHARS, TEXT_CHARS, message_view
from app.web.render.text import clean, human_size, preview
from tests.web.documents import HOSTILE

#: The only elements and attributes rendered message HTML may hold.
ALLOWED_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"href", "title", "rel", "class", "start"}


class _Tags(HTMLParser):
    """Every element and attribute of an HTML text (what a browser would build from it)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def inert_problems(html: str) -> list[str]:
    """What in ``html`` could run, load, restyle or name something: empty when inert."""
    parser = _Tags()
    parser.feed(html)
    problems = []
    for tag, attrs in parser.found:
        if tag not in ALLOWED_TAGS:
            problems.append(f"<{tag}>")
        for name, value in attrs:
            if name not in ALLOWED_ATTRIBUTES:
                problems.append(f"{tag}[{name}]")
            if name == "href" and not re.match(r"(https?:|mailto:|/|#|[^:]*$)", value or ""):
                problems.append(f"href={value}")
    return problems


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_markdown_renders_inert(name: str) -> None:
    assert inert_problems(markdown_html(HOSTILE[name])) == []


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_sanitizer_alone_strips_raw_hostile_html(name: str) -> None:
    """The second layer holds even if Markdown let raw HTML through."""
    raw = HOSTILE[name][:100_000]
    assert inert_problems(raw) or name in {
        "bidi",
        "nul",
        "long_line",
        "wide_word",
        "data_url",
        "markdown_html",
        "javascript_link",
    }
    assert inert_problems(sanitize(raw)) == []


def test_script_text_is_shown_escaped_not_dropped() -> None:
    html = markdown_html("<script>alert(1)</script>")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_links_keep_http_and_get_rel_and_images_become_links() -> None:
    html = markdown_html("[a](https://example.com/x) ![pic](https://example.com/p.png)")
    assert 'href="https://example.com/x"' in html
    assert 'rel="noopener noreferrer nofollow ugc"' in html
    assert "<img" not in html
    assert ">image: pic</a>" in html


def test_nul_controls_and_bidi_overrides_become_visible_markers() -> None:
    html = markdown_html("a\x00b \u202eevil\u202c \u2066x\u2069 \x1b[0m")
    for code in ("0000", "202E", "202C", "2066", "2069", "001B"):
        assert f'<span class="ctl" title="U+{code}">U+{code}</span>' in html
    assert not re.search("[\x00\x1b\u202a-\u202e\u2066-\u2069]", html)


def test_lone_surrogates_become_replacement_characters() -> None:
    assert clean("a\ud800b\udfff") == "a\ufffdb\ufffd"
    markdown_html("x\ud83d").encode("utf-8")  # would raise on a surrogate


def test_fenced_code_is_highlighted_with_classes_and_no_inline_style() -> None:
    html = markdown_html('```python\nimport os\nprint("<b>")\n```')
    assert '<pre class="code"><code><span class="kn">import</span>' in html
    assert "&lt;b&gt;" in html
    assert "style=" not in html


def test_unknown_language_is_plain_escaped_code() -> None:
    html = markdown_html("```no-such-language\n<x>\n```")
    assert '<pre class="code"><code>&lt;x&gt;' in html


def test_pygments_stylesheet_in_static_is_current() -> None:
    assert (STATIC / "pygments.css").read_text() == stylesheet()


def test_preview_cuts_a_ten_megabyte_line_and_long_outputs_at_a_line_end() -> None:
    line = "x" * (10 * 1024 * 1024)
    cut = preview(line, 1000, 10)
    assert len(cut.text) == 1000
    assert not cut.complete
    lines = "\n".join(str(n) for n in range(1000))
    cut = preview(lines, 10_000, 40)
    assert cut.text.splitlines() == [str(n) for n in range(40)]
    assert not cut.complete
    assert preview("short\ntext", 100, 10).complete


def test_message_view_cuts_text_and_boxes_and_full_shows_all() -> None:
    message = {
        "role": "assistant",
        "content": "y" * (TEXT_CHARS * 2),
        "tool_calls": [
            {"id": "1", "tool_name": "big", "arguments_json": {"a": "z" * BOX_CHARS * 2}}
        ],
    }
    short = message_view(7, message)
    assert not short.complete
    assert not short.text_complete
    assert not short.boxes[0].complete
    assert short.boxes[0].size == human_size(len('{\n  "a": ""\n}') + BOX_CHARS * 2)
    whole = message_view(7, message, full=True)
    assert whole.complete
    assert "y" * (TEXT_CHARS * 2) in str(whole.text)


def test_huge_markdown_is_shown_as_plain_text() -> None:
    html = markdown_html("# title\n" + "a" * MAX_MARKDOWN_CHARS)
    assert html.startswith('<p class="plain-note"><em>Shown as plain text')
    assert '<pre class="code">' in html
    assert "<h1>" not in html


def test_messages_of_any_shape_render() -> None:
    for message in (None, 3, "text", [], {"role": 5, "content": {"a": 1}, "tool_calls": "x"}):
        view = message_view(0, message)
        assert view.role in {"other"} or view.role_label
    odd = message_view(1, {"role": "<b>robot</b>", "content": "hi"})
    assert odd.role == "other"
    assert odd.role_label == "<b>robot</b>"


def test_human_size() -> None:
    assert [human_size(n) for n in (0, 1023, 1024, 1536, 10 * 1024 * 1024)] == [
        "0 B",
        "1023 B",
        "1.0 KB",
        "1.5 KB",
        "10.0 MB",
    ]


def test_message_times_are_shown_for_people() -> None:
    assert page_time("2025-12-10T19:37:45.343Z", seconds=True) == "2025-12-10 19:37:45 UTC"
    # one zone on a page: another offset is converted, not printed beside a local clock
    assert page_time("2025-12-10T19:37:45+02:00", seconds=True) == "2025-12-10 17:37:45 UTC"
    assert page_time("yesterday\u202e", seconds=True) == "yesterday\u27e8U+202E\u27e9"


def test_multi_line_arguments_are_blocks_highlighted_as_the_named_file() -> None:
    code = "def main():\n    print('hello')\n\nif __name__ == '__main__':\n    main()\n"
    call = {
        "id": "1",
        "tool_name": "Write",
        "arguments_json": {"file_path": "/x/a.py", "content": code},
    }
    view = message_view(0, {"role": "assistant", "content": "", "tool_calls": [call]})
    html = str(view.boxes[0].html)
    assert '<p class="arg"><code>content</code></p>' in html
    assert '<span class="k">def</span>' in html  # as Python, from the file name
    assert '<span class="nt">"file_path"</span>' in html  # the rest as JSON
    assert "\\n" not in html  # the content's lines are lines, not JSON escapes
    hostile = {"<b>k</b>": "<script>x</script>\n" * 10}
    call = {"id": "2", "tool_name": "t", "arguments_json": hostile}
    box = message_view(0, {"role": "assistant", "tool_calls": [call]}).boxes[0]
    assert inert_problems(str(box.html)) == []
    assert "&lt;b&gt;k&lt;/b&gt;" in str(box.html)


def test_a_flood_of_link_openers_is_shown_plain() -> None:
    """markdown-it-py's link rule is quadratic in unclosed ``[``: such text skips Markdown."""
    for flood in ("[" * 6_000, "![" * 3_000, "[a " * 2_000):
        assert link_scan_cost(flood) > MAX_LINK_SCAN
        assert markdown_html(flood).startswith('<p class="plain-note"><em>Shown as plain text')
    ordinary = "See [the docs](https://example.com) and x[i] for i in [1, 2]. " * 80
    assert link_scan_cost(ordinary) < MAX_LINK_SCAN // 100
    assert "<a href" in markdown_html(ordinary)
