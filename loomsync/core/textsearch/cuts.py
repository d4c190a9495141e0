"""Where a snippet may be cut, and how a lexeme is looked for in text as given (issue 14).

Helpers of :mod:`loomsync.core.textsearch.highlight`:

- :func:`boundary`: a cut never splits a terminal escape sequence (kept whole or left out, as
  :func:`loomsync.terminal.clip` does: the CLI prints snippets) nor a grapheme cluster (UAX
  #29: a letter and its combining marks, a flag, Hangul syllable jamo), looking only near the
  cut, so its cost does not grow with the text.
- :func:`prefix_pattern`: a case-insensitive search (full case folding) for a lexeme's stem
  prefix that also finds it where the text's last character folds to more than one
  (``stras``, the prefix of ``strass``, in ``straß``), so no candidate place is missed.
"""

from __future__ import annotations

import re
from functools import cache

import regex

#: How far back a cut looks for the start of an escape sequence it might be inside (longer
#: sequences, such as an OSC 52 clipboard payload, may be cut; the CLI shows them inert).
MAX_SEQUENCE_CHARS = 4096
#: An ECMA-48 escape sequence (CSI, OSC and their 8-bit forms, a two-character ``ESC x``), as
#: :data:`loomsync.terminal._UNIT` keeps whole.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|\x9d[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -/]*[0-~]"
)
_GRAPHEME = regex.compile(r"\X")
#: How far back a cut starts reading grapheme clusters to find the one it is in.
_GRAPHEME_LOOKBACK = 32


def boundary(text: str, at: int, forward: bool) -> int:
    """``at`` moved (forward or back, as little as needed) out of any escape sequence or
    grapheme cluster of ``text`` it falls inside, so that a cut there splits neither."""
    if at <= 0 or at >= len(text):
        return max(0, min(at, len(text)))
    low = max(0, at - MAX_SEQUENCE_CHARS)
    introducer = max(text.rfind("\x1b", low, at), text.rfind("\x9b", low, at))
    introducer = max(introducer, text.rfind("\x9d", low, at))
    if introducer >= 0:
        sequence = _SEQUENCE.match(text, introducer)
        if sequence is not None and sequence.end() > at:
            return sequence.end() if forward else introducer
    if text[at - 1].isascii() and text[at].isascii() and text[at - 1] != "\r":
        return at  # two ASCII characters never make one cluster (but CR LF does)
    for cluster in _GRAPHEME.finditer(text, max(0, at - _GRAPHEME_LOOKBACK)):
        if cluster.end() >= at:
            if cluster.start() < at < cluster.end():
                return cluster.end() if forward else cluster.start()
            break
    return at


@cache
def _folds_into() -> dict[str, str]:
    """For each start of a multi-character case folding (``s`` of ``ss``, ``f`` and ``ff`` of
    ``ffi``): the characters whose folding begins so and goes on (``ß``, ``ﬅ``; ``ﬃ``). Every
    multi-character folding (CaseFolding.txt status F) is of a character of the BMP."""
    found: dict[str, str] = {}
    for code in range(0x10000):
        char = chr(code)
        folded = char.casefold()
        if len(folded) > 1 and folded != char:
            for size in range(1, len(folded)):
                found[folded[:size]] = found.get(folded[:size], "") + char
    return found


def prefix_pattern(prefix: str) -> regex.Pattern[str]:
    """Case-insensitive (full case folding) search for ``prefix``, also where the text's last
    character only begins with its end (``stras`` in ``straß``)."""
    options = [regex.escape(prefix)]
    folds = _folds_into()
    for size in (1, 2):
        chars = folds.get(prefix[-size:].casefold(), "") if len(prefix) > size else ""
        if chars:
            options.append(regex.escape(prefix[:-size]) + "[" + regex.escape(chars) + "]")
    return regex.compile("|".join(options), regex.IGNORECASE | regex.FULLCASE)
