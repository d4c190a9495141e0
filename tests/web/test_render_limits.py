"""Rendering stays bounded in time and never drops text (issue 13 fix round, F1-F4): only
allow-listed Pygments lexers, each timed on hostile input; Markdown limits per message and per
page; pages rendered off the event loop; previews that fit exactly are complete; Markdown
nested past markdown-it-py's limit is shown plain, whole."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx
import pytest

from app.web import viewer
from app.web.render.highlight import (
    ALLOWED_LEXERS,
    MAX_HIGHLIGHT_CHARS,
    code_block,
    language_of_path,
    lexer_for,
)
from app.web.render.markdown import MAX_MARKDOWN_CHARS, markdown_html
from app.web.render.messages import (
    BOX_CHARS,
    BOX_LINES,
    PAGE_MARKDOWN_CHARS,
    TEXT_LINES,
    message_view,
    page_views,
)
from app.web.render.text import preview
from tests.web.documents import document

#: Units repeated to MAX_HIGHLIGHT_CHARS: the reviewer's and our worst cases per lexer.
HOSTILE_UNITS = [
    '"\\', " \t", "(", "\n", "<a ", "#{", "/*", "`", "\\\n", "${", "&", ": ", "@", "'", "*", "[",
]  # fmt: skip
#: Seconds one block may take on hostile input (the budget is 0.05 s, plus one lexer step).
BLOCK_SECONDS = 2.0


def _hostile(unit: str) -> list[str]:
    text = (unit * (MAX_HIGHLIGHT_CHARS // len(unit) + 1))[:MAX_HIGHLIGHT_CHARS]
    return [text, text[:-1] + "x"]


def test_lexers_outside_the_allow_list_are_plain_code() -> None:
    assert lexer_for("systemd") is None
    assert language_of_path("/etc/x/app.service") == ""
    assert language_of_path("src/app.py") == "python"
    started = time.perf_counter()
    html = markdown_html("```systemd\n" + " \t" * 300 + "x\n```")
    assert time.perf_counter() - started < BLOCK_SECONDS
    assert '<pre class="code"><code>' in html
    assert "<span" not in html


@pytest.mark.parametrize("name", sorted(ALLOWED_LEXERS))
def test_each_allowed_lexer_is_bounded_on_hostile_input(name: str) -> None:
    assert lexer_for(name) is not None
    for unit in HOSTILE_UNITS:
        for text in _hostile(unit):
            started = time.perf_counter()
            html = code_block(text, name)
            took = time.perf_counter() - started
            assert took < BLOCK_SECONDS, (name, unit, took)
            assert html.startswith('<pre class="code"><code>')


def test_a_slow_lexer_gives_up_to_escaped_code_within_its_budget() -> None:
    text = "\n" * MAX_HIGHLIGHT_CHARS + "<x>"
    html = code_block(text, "c", seconds=0.001)
    assert html == f'<pre class="code"><code>{text[:-3]}&lt;x&gt;</code></pre>'
    assert 'class="' in code_block("int main(void) { return 0; }", "c")


def test_markdown_over_the_message_limit_is_plain_with_a_notice() -> None:
    text = "*_" * 145_000
    started = time.perf_counter()
    view = message_view(0, {"role": "user", "content": text}, full=True)
    assert time.perf_counter() - started < 2.0  # 4.5 s before the limit
    assert view.text is not None
    assert "Shown as plain text" in view.text
    assert f"{MAX_MARKDOWN_CHARS:,}" in view.text
    assert view.text.count("*_") == 145_000


def test_a_page_spends_a_bounded_markdown_allowance_and_keeps_all_text() -> None:
    messages = [(n, {"role": "user", "content": f"m{n} " + "*_" * 3000}) for n in range(50)]
    started = time.perf_counter()
    views = page_views(messages)
    took = time.perf_counter() - started
    plain = [v for v in views if v.text is not None and "allowance is spent" in v.text]
    rendered = len(views) - len(plain)
    assert 0 < rendered <= PAGE_MARKDOWN_CHARS // 6000
    assert plain
    assert all(v.text is not None and f"m{v.seq} " in v.text for v in views)
    assert took < 3.0, took  # about 0.3 s here; 2.9 s before the allowance


def test_real_sized_pages_render_markdown_unchanged() -> None:
    # 22,500 characters: about the real threads' busiest page (23,166)
    views = page_views([(n, {"role": "assistant", "content": "**bold** " * 50}) for n in range(50)])
    assert all(v.text is not None and "<strong>bold</strong>" in v.text for v in views)


def test_previews_that_fit_exactly_are_complete() -> None:
    lines = "".join(f"line {n}\n" for n in range(BOX_LINES))
    assert preview(lines, BOX_CHARS, BOX_LINES).complete
    assert message_view(0, {"role": "tool", "content": lines}).boxes[0].complete
    chars = "x" * BOX_CHARS + "\n"
    assert preview(chars, BOX_CHARS, BOX_LINES).complete
    text = "".join(f"para {n}\n" for n in range(TEXT_LINES))
    assert message_view(0, {"role": "user", "content": text}).text_complete
    one_more = lines + "line 40\n"
    cut = preview(one_more, BOX_CHARS, BOX_LINES)
    assert not cut.complete
    assert cut.text == lines[:-1]
    assert not preview("x" * (BOX_CHARS + 1), BOX_CHARS, BOX_LINES).complete


@pytest.mark.parametrize(
    ("text", "last"),
    [
        ("".join(">" * n + f" level {n} text\n" for n in range(1, 31)), "level 30 text"),
        ("".join("  " * n + f"- level {n}\n" for n in range(30)), "level 29"),
        (">" * 5000 + " the deepest text", "the deepest text"),
    ],
    ids=["quote-30", "list-30", "quote-5000"],
)
def test_markdown_nested_too_deep_is_shown_whole_as_plain_text(text: str, last: str) -> None:
    html = markdown_html(text)
    assert last in html
    assert "nested deeper than" in html
    full = message_view(0, {"role": "user", "content": text}, full=True)
    assert full.text is not None
    assert last in full.text


def test_markdown_nested_within_the_limit_is_still_markdown() -> None:
    html = markdown_html(">" * 19 + " nineteen")
    assert html.count("<blockquote>") == 19
    assert "nineteen" in html
    assert "plain text" not in html


async def test_pages_render_off_the_event_loop(
    client: httpx.AsyncClient, owner: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Markdown and Pygments are CPU work: on the event loop, one heavy page made /health and
    # every other request wait for it (review F2). Each rendering step must run in a worker
    # thread, never in the thread that runs the loop.
    loop_thread = threading.get_ident()
    threads: list[str] = []

    def recording(name: str, real: Callable[..., object]) -> Callable[..., object]:
        def wrapper(*args: object, **kwargs: object) -> object:
            threads.append(name if threading.get_ident() != loop_thread else f"{name}@loop")
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(viewer, "_page_context", recording("page", viewer._page_context))
    monkeypatch.setattr(viewer, "message_view", recording("message", viewer.message_view))
    doc = document(
        [{"role": "user", "content": "*_" * 300} for _ in range(60)], visibility="public"
    )
    response = await client.put(f"/api/threads/{doc['id']}", json=doc, headers=owner)
    assert response.status_code == 201, response.text
    base = f"/t/{doc['id']}"
    for path in (base, f"{base}/messages?from=50", f"{base}/m/3", f"{base}/m/3/body"):
        assert (await client.get(path)).status_code == 200, path
    assert sorted(set(threads)) == ["message", "page"], threads
