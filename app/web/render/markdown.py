"""Markdown to safe HTML: markdown-it-py (CommonMark plus tables and strikethrough, raw HTML
off, images shown as links) then nh3 (ammonia) with an allow-list, code fences highlighted by
:mod:`app.web.render.highlight`.

Two layers, because either alone has failed somewhere: markdown-it-py with ``html: False``
escapes every tag a message writes (``<script>``, ``<img onerror=…>``, ``<svg>``, ``<style>``)
and refuses ``javascript:``/``vbscript:``/``data:`` link targets; nh3 then keeps only the
tags, attributes, classes and URL schemes listed here, so a parser bug cannot let one through.
No ``id``, ``style`` or event attribute survives, so message HTML can neither clobber the page's
names nor restyle it; links get ``rel="noopener noreferrer nofollow ugc"``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from html import escape
from typing import Any

import nh3
from markdown_it import MarkdownIt

from app.web.render.highlight import TOKEN_CLASSES, code_block
from app.web.render.text import clean, mark_controls

#: Text longer than this is shown as plain preformatted text, with a notice: markdown-it-py
#: costs up to 10 µs a character on hostile input (``*_`` repeated, ``|x|y|`` rows, ``a\n=\n``:
#: bench/RESULTS.md), so 30,000 characters stay near 300 ms; the longest Markdown message of
#: the real threads has 18,514.
MAX_MARKDOWN_CHARS = 30_000
#: :func:`link_scan_cost` above which text is shown plain: about 5 ms of markdown-it-py's
#: link rule. Real messages score far below (a ``[`` is closed within a few characters).
MAX_LINK_SCAN = 1_000_000
_OPEN = re.compile(r"\[")
_STOP = re.compile(r"\]|\n[ \t]*\n")

_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "del", "s", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "span": {"title"}}
_CLASSES = {"span": set(TOKEN_CLASSES) | {"ctl"}, "pre": {"code"}}
_SCHEMES = {"http", "https", "mailto"}


def _fence(code: str, language: str, _attrs: Any) -> str:
    return code_block(code, language)


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as a link to it: a page never loads a picture a message points at (a tracking
    pixel, and the CSP would refuse it anyway)."""
    token = tokens[idx]
    alt = self.renderInline(token.children or [], options, env) or "image"
    src = escape(str(token.attrGet("src") or ""))
    return f'<a href="{src}">image: {alt}</a>'


#: The ``env`` key set when markdown-it-py's nesting limit would drop text.
_TOO_DEEP = "loomsync_too_deep"


def _guard_nesting(parser: MarkdownIt) -> None:
    """Make ``parser`` note in ``env`` when its block parser reaches ``maxNesting`` with text
    left: markdown-it-py then skips the rest of that block silently (a 30-level quote stops at
    level 19, a 5,000-level one renders empty), and :func:`markdown_html` shows it plain."""
    tokenize = parser.block.tokenize
    limit = parser.options.maxNesting

    def guarded(state: Any, start: int, end: int) -> None:
        if state.level >= limit and state.skipEmptyLines(start) < end:
            state.env[_TOO_DEEP] = True
        tokenize(state, start, end)

    parser.block.tokenize = guarded  # type: ignore[method-assign,assignment]


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "highlight": _fence})
    parser.enable(["table", "strikethrough"])
    parser.add_render_rule("image", _image)
    _guard_nesting(parser)
    return parser


_MARKDOWN = _parser()


def sanitize(html: str) -> str:
    """``html`` reduced by nh3 to the allow-list of this module."""
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        allowed_classes=_CLASSES,
        url_schemes=_SCHEMES,
        link_rel="noopener noreferrer nofollow ugc",
        strip_comments=True,
    )


def link_scan_cost(text: str) -> int:
    """An estimate of the characters markdown-it-py's link rule reads in ``text``: for each
    ``[``, the distance to the next ``]`` or blank line (the rule scans that far for the end
    of the label, once per ``[``; 6,000 unclosed ``[`` took 64 ms, 290,000 took 5.5 s)."""
    opens = [m.start() for m in _OPEN.finditer(text)]
    if len(opens) < 2:
        return 0
    stops = [m.start() for m in _STOP.finditer(text)]
    stops.append(len(text))
    return sum(stops[bisect_right(stops, at)] - at for at in opens)


def markdown_html(text: str) -> str:
    """Safe HTML of a message's Markdown ``text`` (any string: NUL, lone surrogates, bidi
    controls are cleaned first, see :mod:`app.web.render.text`). Text over
    :data:`MAX_MARKDOWN_CHARS`, whose :func:`link_scan_cost` is over :data:`MAX_LINK_SCAN`
    (a flood of ``[``: quadratic in markdown-it-py), or nested deeper than markdown-it-py's
    ``maxNesting`` (it would drop the rest) is shown as :func:`plain_html` under a notice
    saying why: no text is ever left out."""
    if len(text) > MAX_MARKDOWN_CHARS:
        return plain_notice(text, f"longer than {MAX_MARKDOWN_CHARS:,} characters")
    if link_scan_cost(text) > MAX_LINK_SCAN:
        return plain_notice(text, "too many unclosed [ brackets")
    env: dict[str, Any] = {}
    tokens = _MARKDOWN.parse(clean(text), env)
    if env.get(_TOO_DEEP):
        limit = _MARKDOWN.options.maxNesting
        return plain_notice(text, f"nested deeper than {limit} levels")
    return mark_controls(sanitize(_MARKDOWN.renderer.render(tokens, _MARKDOWN.options, env)))


def plain_notice(text: str, reason: str) -> str:
    """``text`` as :func:`plain_html` under a line saying it is not rendered as Markdown and
    why (``reason`` is our own text, escaped all the same)."""
    note = escape(f"Shown as plain text, not Markdown: {reason}.", quote=False)
    return f'<p class="plain-note"><em>{note}</em></p>{plain_html(text)}'


def plain_html(text: str, language: str = "") -> str:
    """Safe HTML of ``text`` as a preformatted block (tool output, arguments), highlighted when
    ``language`` names a Pygments lexer."""
    return mark_controls(sanitize(code_block(clean(text), language)))
