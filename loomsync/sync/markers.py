"""Equal but for redaction markers: how sync tells "the other side redacted more" from a change.

A server may redact more than this client (an older client, a newer server with more rules, a
client allow-list; issue 12, item 1): after a PUT or an append its copy can differ from the
local one only where a span became ``[REDACTED:<kind>]``. Comparing exactly, the sync would see
a rewritten history and fork. :func:`is_redaction_of` recognises such a copy and
:func:`adopt_redactions` takes the markers over, so both sides converge on the redacted text.

The test is structural (JSON values: same keys, same list lengths) and per string: the
redacted string, split at its markers, gives pieces that appear in the original in order, at
its start and its end, each marker standing for a span that could be a credential: at least
:data:`MIN_SPAN` characters without whitespace, or a PEM block (``-----BEGIN`` … ``-----END
…-----``). So a message that is wholly a marker is no redaction of a sentence (review P2-10).
Linear in the text (leftmost matching of literal pieces from the shortest span is optimal).
"""

from __future__ import annotations

import re
from typing import Any

from loomsync.core.redactionmark import MARKER_PREFIX

#: ``[REDACTED:<kind>]`` as :func:`loomsync.core.secrets.marker` writes it.
MARKER = re.compile(re.escape(MARKER_PREFIX) + r"[A-Za-z0-9_.-]+\]")


#: The fewest characters a marker stands for (the detector's shortest findings are longer).
MIN_SPAN = 8
_PEM_BEGIN, _PEM_END = "-----BEGIN", "-----END"


def _plausible(span: str) -> bool:
    """Could a detector have replaced this span? Whitespace-free and long enough, or PEM."""
    if span.startswith(_PEM_BEGIN):
        return True
    return len(span) >= MIN_SPAN and not any(ch.isspace() for ch in span)


def _earliest_end(original: str, at: int) -> int:
    """Where the span starting at ``at`` may end at the earliest (past a PEM block's end)."""
    if original.startswith(_PEM_BEGIN, at):
        end = original.find(_PEM_END, at)
        close = original.find("-----", end + len(_PEM_END)) if end >= 0 else -1
        if close >= 0:
            return close + 5
    return at + MIN_SPAN


def _text_is_redaction_of(redacted: str, original: str) -> bool:
    if MARKER_PREFIX not in redacted:
        return False
    pieces = MARKER.split(redacted)
    if len(pieces) == 1:
        return False
    first, last = pieces[0], pieces[-1]
    if len(first) + len(last) + (len(pieces) - 1) * MIN_SPAN > len(original):
        return False
    if not (original.startswith(first) and original.endswith(last)):
        return False
    at, end = len(first), len(original) - len(last)
    for piece in pieces[1:-1]:
        found = original.find(piece, _earliest_end(original, at), end)
        if found < 0 or not _plausible(original[at:found]):
            return False
        at = found + len(piece)
    return end - at >= 1 and _plausible(original[at:end])


def is_redaction_of(redacted: Any, original: Any) -> bool:
    """True when ``redacted`` equals ``original`` except that spans of its strings are
    redaction markers (equal values count too). JSON values: dicts need the same keys, lists
    the same length."""
    if redacted == original:
        return True
    if isinstance(redacted, str) and isinstance(original, str):
        return _text_is_redaction_of(redacted, original)
    if isinstance(redacted, dict) and isinstance(original, dict):
        return redacted.keys() == original.keys() and all(
            is_redaction_of(redacted[k], original[k]) for k in redacted
        )
    if isinstance(redacted, list) and isinstance(original, list):
        return len(redacted) == len(original) and all(
            is_redaction_of(a, b) for a, b in zip(redacted, original, strict=True)
        )
    return False


def adopt_redactions(source: Any, target: Any) -> Any:
    """``target`` with each part that ``source`` holds in redacted form replaced by
    ``source``'s part (recursively through dicts and same-length lists); the same object when
    nothing is taken over."""
    if source == target:
        return target
    if is_redaction_of(source, target):
        return source
    if isinstance(source, dict) and isinstance(target, dict):
        out = {k: adopt_redactions(source[k], v) if k in source else v for k, v in target.items()}
        return target if all(out[k] is target[k] for k in target) else out
    if isinstance(source, list) and isinstance(target, list) and len(source) == len(target):
        items = [adopt_redactions(a, b) for a, b in zip(source, target, strict=True)]
        return target if all(a is b for a, b in zip(items, target, strict=True)) else items
    return target


__all__ = ["MARKER", "MIN_SPAN", "adopt_redactions", "is_redaction_of"]
