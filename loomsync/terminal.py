"""What reaches a terminal: thread text made inert (issue 11, item 13).

Thread text comes from other people (a public thread, an imported file, a server's problem
detail). Printed raw, it can drive the terminal: ESC sequences clear the screen, move the cursor,
write the clipboard (OSC 52) or hide a link (OSC 8); C1 controls (U+0080-U+009F, the 8-bit CSI
U+009B among them) do the same on terminals that honour them; BEL, BS and CR overwrite or ring;
bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069, "Trojan Source", CVE-2021-42574)
reorder what a line appears to say; U+2028/U+2029 break lines where a table has none.

Three layers, so that no command can forget:

- :func:`printable` turns each such character into a visible escape (``\\x1b``, ``\\u202e``).
  The render layer (:mod:`loomsync.cli.render`, :mod:`loomsync.export`) applies it to every field it
  shows: one-line fields (titles, table cells, tags, branches, error messages) escape newlines
  and tabs too; message bodies keep them as layout.
- :class:`TerminalConsole` is the CLI's one rich ``Console``: markup and emoji codes are off, so
  ``[red]`` or ``[link=…]`` in a title prints as written, and every text segment it renders goes
  through :func:`printable` once more (rich's own escape codes for styles and cursor control are
  not text segments, so they are kept).
- :func:`json_text` makes JSON output inert as well, without changing the data it holds.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

#: Characters that act on a terminal rather than print: C0 controls, DEL, C1 controls, line and
#: paragraph separators, the explicit bidi embeddings/overrides/isolates, and lone surrogates
#: (which cannot be written as UTF-8). Bidi marks (LRM, RLM, ALM), joiners (ZWJ in emoji) and
#: other format characters are ordinary text and pass.
_ACTIVE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_ONE_LINE = re.compile(f"[\t\n{_ACTIVE}]")
_MULTILINE = re.compile(f"[{_ACTIVE}]")
#: What JSON leaves raw that a terminal may act on (json.dumps escapes C0 itself).
_JSON_ACTIVE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, multiline: bool = False) -> str:
    """``text`` with every character that acts on a terminal written as a visible escape.

    ESC becomes ``\\x1b``, the 8-bit CSI ``\\x9b``, NUL ``\\x00``, RLO ``\\u202e``, a lone
    surrogate ``\\udc80``. With ``multiline`` (message bodies) newlines and tabs stay and CRLF
    becomes a newline (a lone CR is escaped: it would overwrite the line); without it (titles,
    table cells, error messages) the result is one line: ``\\n``, ``\\r`` and ``\\t`` are escaped
    too. Every other character, printable Unicode of any script, emoji sequences (ZWJ, variation
    selectors, tag characters) and private-use glyphs included, is unchanged. Backslashes are
    not doubled, so ordinary text (Windows paths, code) reads as written.
    """
    if multiline:
        return _MULTILINE.sub(_escape, text.replace("\r\n", "\n"))
    return _ONE_LINE.sub(_escape, text)


#: One unit a cut must keep whole: an ECMA-48 escape sequence (CSI ``ESC [ … final``, OSC
#: ``ESC ] … BEL/ST``, their 8-bit forms ``\x9b``/``\x9d``, a two-character ``ESC x``), CRLF,
#: or one character. Unterminated sequences fall apart into characters (nothing to keep).
#: The characters that start a unit of :data:`_UNIT` longer than one character.
_INTRODUCER = re.compile("[\x1b\x9b\x9d\r]")
_UNIT = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]|\r\n|.",
    re.S,
)


def clip(text: str, limit: int, *, multiline: bool = False) -> str:
    """``text`` (raw) shortened so that :func:`printable` of it shows at most ``limit``
    characters, then ``…``; unchanged when it fits.

    The one place titles, cells and arguments are shortened. It cuts the raw text, so a visible
    escape is never cut in half (``\\x1`` of ``\\x1b``), and it keeps an escape sequence whole or
    leaves it out (``\\x1b[31m``, never ``\\x1b[3``): an escape counts the characters it shows.
    """
    if len(printable(text, multiline=multiline)) <= limit:
        return text
    kept: list[str] = []
    shown = 0
    for unit in _UNIT.finditer(text):
        width = len(printable(unit.group(), multiline=multiline))
        if shown + width > limit:
            break
        kept.append(unit.group())
        shown += width
    return "".join(kept) + "…"


def whole_units(text: str, start: int, end: int) -> tuple[int, int]:
    """``(start, end)`` moved inward, as little as needed, so that ``text[start:end]`` cuts no
    escape sequence of ``text`` (see :func:`clip`): for windows such as search snippets."""
    if _INTRODUCER.search(text, 0, end) is None:
        return start, end  # every unit before ``end`` is one character: nothing to move
    for unit in _UNIT.finditer(text):
        if unit.start() < start < unit.end():
            start = unit.end()
        if unit.start() < end < unit.end():
            end = unit.start()
        if unit.start() >= end:
            break
    return start, max(start, end)


def json_text(data: bytes | str) -> str:
    """JSON text (UTF-8 bytes or str) with DEL, C1 controls, U+2028/U+2029 and bidi controls
    written as ``\\uXXXX`` escapes: the same JSON value (RFC 8259 section 7), inert on a terminal.

    JSON's own encoder escapes only C0 controls; these characters can only occur inside strings,
    so escaping them never changes what a parser reads.
    """
    text = data.decode() if isinstance(data, bytes) else data
    return _JSON_ACTIVE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class TerminalConsole(Console):
    """A rich ``Console`` whose output text cannot act on the terminal.

    Markup, emoji codes and rich's automatic highlighting are off unless asked for (style
    with ``Text``, not ``[red]`` strings), and every rendered text segment passes through :func:`printable` (multi-line), so
    a renderable built from raw thread text, by a command written later, is still inert. Raw
    writes go through :meth:`write_text` and :meth:`write_json`.
    """

    def __init__(self, **options: Any) -> None:
        options.setdefault("markup", False)
        options.setdefault("emoji", False)
        # text prints as written: no automatic colouring of numbers, UUIDs, URLs or brackets
        # (rich's ReprHighlighter; newcomer finding 9): a command styles with ``Text``
        options.setdefault("highlight", False)
        # https://no-color.org: any non-empty NO_COLOR turns colour off (bold stays)
        options.setdefault("no_color", bool(os.environ.get("NO_COLOR")))
        super().__init__(**options)

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        """Rich's rendering, then each text segment made printable (control segments kept:
        they are rich's own cursor moves, never thread text)."""
        for segment in super().render(renderable, options):
            if segment.control or not segment.text:
                yield segment
                continue
            text = printable(segment.text, multiline=True)
            yield segment if text == segment.text else Segment(text, segment.style)

    def render_str(self, text: str, **options: Any) -> Text:
        """A printed ``str`` made printable first, so its controls show as escapes (rich itself
        would silently drop BEL, BS and CR and pass ESC)."""
        return super().render_str(printable(text, multiline=True), **options)

    def hint(self, text: str | Text) -> None:
        """Print a line that carries an id or a command to copy (``--revoke <link id>``,
        ``--cursor …``, ``sync --drop T-…``): at a terminal rich wraps it between words at the
        console's width, so the terminal never breaks it inside an id (issue 30 item 8: with
        soft wrapping the terminal cut it at column 80, in the middle of the id); piped, one
        line as written. A word wider than the whole terminal is folded, as it must be."""
        self.print(text, soft_wrap=not self.is_terminal)

    def write_text(self, text: str) -> None:
        """Write multi-line text as is, but made printable (no markup, no wrapping)."""
        self.file.write(printable(text, multiline=True))
        self.file.flush()

    def write_json(self, data: bytes | str) -> None:
        """Write JSON text through :func:`json_text` (the same data, inert on a terminal)."""
        self.file.write(json_text(data))
        self.file.flush()


__all__ = ["TerminalConsole", "clip", "json_text", "printable", "whole_units"]
