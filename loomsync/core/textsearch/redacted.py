"""Snippet text redacted with its context (issue 27 item 5): a piece of a text is redacted as
part of the text around it, before it is cut, never on its own.

A piece cut right after ``export AWS_SECRET_ACCESS_KEY=`` holds a value that no rule can tell
from any 40 base64 characters; the same detector on the text around the piece sees the name.
:func:`redacted_piece` scans ``source[start - BEFORE : end + AFTER]`` and replaces every finding
that overlaps the piece (a finding that runs past an edge: the part inside, by one marker),
then redacts what is left of the piece on its own (tokens glued together). Every snippet is
cut from such pieces (:mod:`loomsync.core.textsearch.highlight`), so the server's search, the
web search page, the local search and the MCP tools all show the same redacted text.

The detector is :func:`loomsync.core.secrets.default_redactor` (no allow-list: a snippet may
show a marker where the user's allow-list would have kept a value).
"""

from __future__ import annotations

from loomsync.core.secrets import default_redactor, marker

#: Characters of context read before a piece: a name and its value on one line, a PEM block
#: of a 4096-bit RSA key (about 3,300 characters) from its BEGIN line.
BEFORE = 4096
#: Characters read after a piece: the rest of a token cut at the piece's end.
AFTER = 1024


def redacted_piece(source: str, start: int, end: int) -> str:
    """``source[start:end]`` with every credential that the text around it shows replaced by
    its marker (``[REDACTED:<kind>]``); the same text when there is none."""
    low = max(0, start - BEFORE)
    window = source[low : min(len(source), end + AFTER)]
    redactor = default_redactor()
    parts: list[str] = []
    at = start
    for found in redactor.find(window):
        left, right = max(found.start + low, at), min(found.end + low, end)
        if left >= right:
            continue
        parts += [source[at:left], marker(found.kind)]
        at = right
    piece = "".join([*parts, source[at:end]]) if parts else source[start:end]
    return redactor.redact_text(piece)
