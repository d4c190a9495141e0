"""The scanning engine: every rule of rules.py over one text, in one RE2 pass when clean.

How a text is scanned (the design measured in bench/redaction.py, docs/client.md
"Redaction: how detection works"):

1. The text is encoded to UTF-8 once (``surrogatepass``: message content may hold lone
   surrogates) and matched against an ``RE2::Set`` of every rule's pattern: one linear pass
   that says which rules match anywhere. Most texts hold no credential and stop here.
2. Each rule that matched runs alone (``finditer``) for its spans; each span is checked for
   its boundaries and by the rule's ``check`` (placeholders, names, shapes).
3. A finding that overlaps a marker already in the text is dropped (markers are never
   rewritten), then overlapping findings are merged into one span of the kind of the rule listed first (so a
   redaction never leaves part of a secret behind), and allow-listed values are dropped first.

RE2 is used rather than Python's ``re`` because the context rules (a secret-ish word anywhere
in a name, case-insensitive) are slow in ``re``: RE2 ran the secret-assignment pattern 11 to
120 times faster over the real transcripts' text (bench/redaction.py), and RE2's time is
linear in the text whatever it holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import re2

from loomsync.core.secrets.rules import Rule
from loomsync.core.secrets.views import views

#: RE2's memory budget for each regex and for the set's DFA cache (bytes; a bound, not an
#: allocation: these patterns' DFAs stay small). RE2::Set reports no match when its DFA runs
#: out of budget, so errors stay logged; six adversarial 2 MB texts of rule prefixes gave the
#: same rules by the set as by each regex alone, at RE2's default 8 MiB and at this budget.
MAX_MEM = 64 << 20


@dataclass(frozen=True, slots=True)
class Span:
    """A finding in a text: kind and character span (``text[start:end]``)."""

    kind: str
    start: int
    end: int


#: A marker already in a text (``[REDACTED:<kind>]``, maybe numbered as a key: ``#2``).
_MARKER = re.compile(rb"\[REDACTED:[a-z0-9\-]+\]")
_MARKER_TEXT = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")

#: The counted repetition a trigger ends with is cut to this (see :func:`trigger`).
TRIGGER_REPEAT = 4

_REPEAT_RE = re.compile(r"\{(\d+)(?:,\d*)?\}")


def trigger(pattern: str) -> str:
    """The pattern the set matches for a rule: ``pattern`` cut after its first counted
    repetition outside any group, with that count cut to at most :data:`TRIGGER_REPEAT`
    (``gh[pousr]_[A-Za-z0-9_]{36,251}`` → ``gh[pousr]_[A-Za-z0-9_]{4}``); the whole pattern
    if it has none.

    Every match of ``pattern`` begins with a match of its trigger, so the set never misses a
    rule; with every pattern whole, the set's DFA has so many states that building them cost
    1.3 s on the first pass over the real transcripts (0.16 s with triggers).
    """
    depth = 0
    in_class = False
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\":
            at += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern.startswith("]", at + 1) or pattern.startswith("^]", at + 1):
                at += 2 if pattern[at + 1] == "]" else 3
                continue
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "{" and depth == 0:
            repeat = _REPEAT_RE.match(pattern, at)
            if repeat is not None:
                return f"{pattern[:at]}{{{min(int(repeat.group(1)), TRIGGER_REPEAT)}}}"
        at += 1
    return pattern


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_MEM
    return options


class Engine:
    """Rules compiled once (an ``RE2::Set`` and one RE2 regex each); :meth:`scan` is
    thread-safe. Raises ``re2.error`` when a rule does not compile."""

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.rules = tuple(rules)
        options = _options()
        self._compiled = [re2.compile(rule.pattern, options) for rule in self.rules]
        self._groups = [
            (rule.group,)
            if isinstance(rule.group, int)
            else tuple(c.groupindex[g] for g in rule.group)
            for rule, c in zip(self.rules, self._compiled, strict=True)
        ]
        self._set = re2.Set.SearchSet(options)
        for rule in self.rules:
            self._set.Add(rule.trigger or trigger(rule.pattern))
        self._set.Compile()

    def clean(self, text: str) -> bool:
        """Whether no rule can match in ``text`` nor in any of its views (views.py: the set's
        one pass each; most texts stop here)."""
        if len(text) < 8:
            return True
        if self._set.Match(text.encode("utf-8", "surrogatepass")):
            return False
        return not any(
            self._set.Match(v.text.encode("utf-8", "surrogatepass")) for v in views(text)
        )

    def scan(self, text: str, allowed: Callable[[str], bool] | None = None) -> list[Span]:
        """The findings in ``text`` and in its views (views.py: the text unescaped, argv
        arrays as one command), mapped back to ``text``, in order, not overlapping (a text
        finding wins over a view's it overlaps); ``allowed(value)`` True drops a finding
        whose value it names."""
        spans = self._scan(text, allowed)
        for view in views(text) if len(text) >= 8 else ():
            more = [
                Span(span.kind, *view.to_source(span.start, span.end))
                for span in self._scan(view.text, allowed)
            ]
            if more:
                spans = _union(text, spans, more)
        return spans

    def _scan(self, text: str, allowed: Callable[[str], bool] | None) -> list[Span]:
        """The findings of the rules in ``text`` as it is."""
        if len(text) < 8:
            return []
        data = text.encode("utf-8", "surrogatepass")
        hits = self._set.Match(data)
        if not hits:
            return []
        found: list[tuple[int, int, int]] = []  # (start byte, end byte, rule index)
        for index in sorted(hits):
            found.extend(self._matches(index, data))
        if not found:
            return []
        ascii_text = len(data) == len(text)
        markers = [m.span() for m in _MARKER.finditer(data)] if b"[REDACTED:" in data else []
        spans: list[tuple[int, int, int]] = []
        for start, end, index in found:
            if markers and any(s < end and start < e for s, e in markers):
                continue  # a marker is never rewritten (review P2-8)
            if allowed is not None and allowed(_decode(data, start, end)):
                continue
            spans.append((start, end, index))
        return _merge(spans, self.rules, data, ascii_text)

    def _matches(self, index: int, data: bytes) -> list[tuple[int, int, int]]:
        rule = self.rules[index]
        out = []
        for match in self._compiled[index].finditer(data):
            start, end = _span(match, self._groups[index])
            if start < 0 or end <= start:
                continue
            if rule.before and start > 0 and _glued(data, start, rule.before):
                continue
            if rule.after and end < len(data) and chr(data[end]) in rule.after:
                continue
            start, end = _whole_chars(data, start, end)
            if rule.check is not None:
                value = _decode(data, start, end)
                whole = _decode(data, *_whole_chars(data, match.start(), match.end()))
                if not rule.check(value, whole):
                    continue
            out.append((start, end, index))
        return out


def _union(text: str, spans: list[Span], more: list[Span]) -> list[Span]:
    """``spans`` with the findings of ``more`` that overlap none of them and no marker in
    ``text`` (markers are never rewritten), in order; overlapping ones of ``more`` merged."""
    markers = [m.span() for m in _MARKER_TEXT.finditer(text)] if "[REDACTED:" in text else []
    taken = [(s.start, s.end) for s in spans] + markers
    added: list[Span] = []
    for span in sorted(more, key=lambda s: (s.start, s.end)):
        if any(s < span.end and span.start < e for s, e in taken):
            continue
        if added and span.start < added[-1].end:
            last = added[-1]
            added[-1] = Span(last.kind, last.start, max(last.end, span.end))
            continue
        added.append(span)
    return sorted([*spans, *added], key=lambda s: s.start)


def _glued(data: bytes, start: int, before: frozenset[str]) -> bool:
    """Whether the span at ``start`` is glued to a character of ``before`` (so a token prefix
    inside a longer random string is not a token). An escape (``\\n``, ``\\t`` of a JSON or
    C string printed raw) and a percent-encoded byte (``%3D``, ``%22``) end a word: a token
    after them is not glued."""
    if chr(data[start - 1]) not in before:
        return False
    if start >= 2 and data[start - 2] == 0x5C:  # backslash
        return False
    return not (start >= 3 and data[start - 3] == 0x25 and _is_hex(data[start - 2 : start]))


def _is_hex(pair: bytes) -> bool:
    return all(chr(byte) in "0123456789abcdefABCDEF" for byte in pair)


class _Spans(Protocol):
    """What :func:`_span` reads of a match (``re2``'s match type is private)."""

    def span(self, group: int) -> tuple[int, int]:
        """The ``(start, end)`` of ``group``, ``(-1, -1)`` when it took no part."""
        ...


def _span(match: _Spans, groups: tuple[int, ...]) -> tuple[int, int]:
    """The span of the first of ``groups`` that took part in ``match``, or (-1, -1)."""
    for group in groups:
        start, end = match.span(group)
        if start >= 0:
            return start, end
    return -1, -1


def _whole_chars(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen a byte span to whole UTF-8 sequences (RE2 may split the bytes of a lone
    surrogate, which are not valid UTF-8)."""
    while start > 0 and data[start] & 0xC0 == 0x80:
        start -= 1
    while end < len(data) and data[end] & 0xC0 == 0x80:
        end += 1
    return start, end


def _decode(data: bytes, start: int, end: int) -> str:
    return data[start:end].decode("utf-8", "surrogatepass")


def _merge(
    spans: list[tuple[int, int, int]], rules: Sequence[Rule], data: bytes, ascii_text: bool
) -> list[Span]:
    """Overlapping byte spans merged (kind of the lowest rule index), as character spans."""
    spans.sort()
    merged: list[list[int]] = []
    for start, end, index in spans:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            last[2] = min(last[2], index)
        else:
            merged.append([start, end, index])
    if ascii_text:
        return [Span(rules[i].kind, s, e) for s, e, i in merged]
    result = []
    at_byte = at_char = 0
    for start, end, index in merged:
        char_start = at_char + len(_decode(data, at_byte, start))
        char_end = char_start + len(_decode(data, start, end))
        result.append(Span(rules[index].kind, char_start, char_end))
        at_byte, at_char = end, char_end
    return result
