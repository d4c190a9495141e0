"""Text from a thread made safe to show: characters that cannot be encoded or that change how
other text reads are replaced by visible markers, sizes are written for people, and long text is
cut to a preview.

- Lone surrogates (API.md section 2 lets ``content`` hold them) become U+FFFD, so the page
  encodes as UTF-8.
- NUL and the other C0/C1 controls (but tab, newline, carriage return), and the bidirectional
  embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069; "Trojan Source",
  CVE-2021-42574) become a visible marker ``⟨U+202E⟩``: they cannot reorder or hide text, and a
  reader sees that they were there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The characters shown as a marker instead of themselves.
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")

#: The marker's text; the HTML layer (:func:`mark_controls`) styles it.
MARKER_OPEN = "\u27e8U+"
MARKER_CLOSE = "\u27e9"
_MARKER_HTML = re.compile("\u27e8U\\+([0-9A-F]{4})\u27e9")


def _marker(match: re.Match[str]) -> str:
    return f"{MARKER_OPEN}{ord(match.group()):04X}{MARKER_CLOSE}"


def clean(text: str) -> str:
    """``text`` with lone surrogates as U+FFFD and hidden controls as visible markers."""
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    return _HIDDEN.sub(_marker, text)


def mark_controls(html: str) -> str:
    """Escaped HTML with each marker from :func:`clean` wrapped in ``<span class="ctl">`` (the
    marker's characters need no escaping, so it survives Markdown and escaping unchanged)."""
    return _MARKER_HTML.sub(r'<span class="ctl" title="U+\1">U+\1</span>', html)


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8 (a lone surrogate counts its three bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def human_size(size: int) -> str:
    """``size`` bytes for people: ``512 B``, ``1.2 KB``, ``10.0 MB`` (powers of 1024)."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            break
    return f"{value:.1f} {unit}"


@dataclass(frozen=True, slots=True)
class Cut:
    """A preview of some text: ``text`` (whole lines where it can) and whether it is all."""

    text: str
    complete: bool


def preview(text: str, max_chars: int, max_lines: int) -> Cut:
    """At most ``max_chars`` characters and ``max_lines`` lines of ``text``. A cut ends at a line
    end when one falls in the last quarter of the allowance, else mid-line (a 10 MB line).
    A final line end is not a line of its own: 40 lines each ending in ``\n`` fit 40 lines."""
    body = text[:-1] if text.endswith("\n") else text  # a final line end ends the last line
    if len(body) <= max_chars and body.count("\n") < max_lines:
        return Cut(text, True)
    end = min(len(text), max_chars)
    newline = -1
    for _ in range(max_lines):
        newline = text.find("\n", newline + 1, end)
        if newline < 0:
            break
    else:
        return Cut(text[:newline], False)
    last = text.rfind("\n", 0, end)
    if end < len(text) and last >= end * 3 // 4:
        end = last
    return Cut(text[:end], end >= len(text))
