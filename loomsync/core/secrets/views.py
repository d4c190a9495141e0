"""Other readings of a text the rules also run on (issue 27 item 1): the text as the command ran.

A tool call's text often holds a command or a configuration a level of encoding away from how
it ran: the JSON string of a tool's output (``postgres:\\/\\/app:pw@db``, ``\\"Authorization:
Bearer …\\"``, ``KEY\\u003dvalue``, lines joined by ``\\n``), or an argv array printed as JSON
(``["sshpass","-p","pw","ssh",…]``). The rules are written for the command line, so the engine
(engine.py) scans each :class:`View` of a text as well as the text, and maps what it finds
back to the text's own characters:

- :func:`unescaped`: JSON (and C-like) string escapes decoded (``\\/ \\" \\\\ \\n \\r \\t \\b
  \\f \\uXXXX``), one level, then a second when the result still holds escapes (JSON in JSON);
- :func:`argv_spaced`: the separators of a JSON array of strings (``","``, ``", "``, their
  escaped form ``\\",\\"``) replaced by as many spaces, so the elements read as the words of
  one command (same length: positions map one to one).

A finding in a view that maps onto a marker already in the text is dropped by the engine as
any other (markers are never rewritten).
"""

from __future__ import annotations

import bisect
import re

_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: Which escapes make a text worth reading unescaped: a slash, a quote or a \u escape, or a
#: line break (a rule anchored at the start of a line, a header line).
_WORTH = re.compile(r'\\(?:[/"]|u[0-9a-fA-F]{4}|[nr])')
#: Escape levels decoded at most (JSON text inside a JSON string inside a transcript).
MAX_LEVELS = 2


class View:
    """A reading of a text: ``text``, and :meth:`to_source` mapping a span of it back to the
    source's characters. This base view maps one to one (same length as its source)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """The source span whose reading is ``text[start:end]``."""
        return start, end


class _Pieces(View):
    """A view made of pieces: plain runs (one to one) and escapes (one view character for a
    whole escape of the source); ``starts`` are where each piece begins in the view (sorted),
    ``sources`` its ``(start, end)`` in the source, ``escape`` whether it is an escape."""

    def __init__(
        self, text: str, starts: list[int], sources: list[tuple[int, int]], escape: list[bool]
    ) -> None:
        super().__init__(text)
        self.starts = starts
        self.sources = sources
        self.escape = escape

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """``text[start:end]`` in the source, widened to whole escapes."""
        return self._at(start)[0], self._at(end - 1)[1]

    def _at(self, at: int) -> tuple[int, int]:
        """The source span of view character ``at``."""
        piece = max(0, bisect.bisect_right(self.starts, at) - 1)
        source_start, source_end = self.sources[piece]
        if self.escape[piece]:
            return source_start, source_end
        where = source_start + at - self.starts[piece]
        return where, where + 1


class _Composed(View):
    """A view of a view (a second escape level, or argv spaces over an unescaped text)."""

    def __init__(self, inner: View, outer: View) -> None:
        super().__init__(outer.text)
        self.inner = inner
        self.outer = outer

    def to_source(self, start: int, end: int) -> tuple[int, int]:
        """``text[start:end]`` mapped through the outer view, then the inner one."""
        return self.inner.to_source(*self.outer.to_source(start, end))


def _decode(match: re.Match[str]) -> str:
    body = match.group(0)[1:]
    if body[0] == "u":
        return chr(int(body[1:], 16))
    return _SIMPLE[body]


def _unescape_once(text: str) -> View | None:
    """One level of escapes decoded, or None when ``text`` holds none worth decoding."""
    if "\\" not in text or _WORTH.search(text) is None:
        return None
    parts: list[str] = []
    starts: list[int] = []
    sources: list[tuple[int, int]] = []
    escape: list[bool] = []
    at = out = 0
    for match in _ESCAPE.finditer(text):
        if match.start() > at:  # plain text: one piece, characters map one to one
            starts.append(out)
            sources.append((at, match.start()))
            escape.append(False)
            parts.append(text[at : match.start()])
            out += match.start() - at
        starts.append(out)
        sources.append(match.span())
        escape.append(True)
        parts.append(_decode(match))
        out += 1
        at = match.end()
    if at < len(text):
        starts.append(out)
        sources.append((at, len(text)))
        escape.append(False)
        parts.append(text[at:])
    return _Pieces("".join(parts), starts, sources, escape)


def unescaped(text: str) -> View | None:
    """``text`` with its string escapes decoded (up to :data:`MAX_LEVELS` levels), or None
    when it holds none worth decoding."""
    first = _unescape_once(text)
    if first is None:
        return None
    view = first
    for _ in range(MAX_LEVELS - 1):
        deeper = _unescape_once(view.text)
        if deeper is None:
            break
        view = _Composed(view, deeper)
    return view


#: The separators of a JSON array of strings, as printed compactly, with a space, and escaped
#: one level (longest first: ``\\",\\"`` holds ``","``).
_SEPARATORS = ('\\", \\"', '\\",\\"', '", "', '","')


def argv_spaced(text: str) -> View | None:
    """``text`` with the separators of JSON arrays of strings turned into spaces (the same
    length, so spans map one to one), or None when it holds none."""
    if '",' not in text:
        return None
    spaced = text
    for separator in _SEPARATORS:
        spaced = spaced.replace(separator, " " * len(separator))
    return None if spaced == text else View(spaced)


def views(text: str) -> list[View]:
    """Every other reading of ``text`` worth scanning (see the module docstring): unescaped,
    argv-spaced, and both."""
    found: list[View] = []
    plain = unescaped(text)
    if plain is not None:
        found.append(plain)
    spaced = argv_spaced(text if plain is None else plain.text)
    if spaced is not None:
        found.append(spaced if plain is None else _Composed(plain, spaced))
    return found
