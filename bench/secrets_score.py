"""Scoring a secret detector on the labelled set and on real transcripts (issue 12 item 2).

The labelled set is ``tests/secrets/labelled/*.jsonl`` (its README gives the format). The real
set is every file of ``../shared/data/transcripts`` that :mod:`loomsync.importers` imports; each
message is its ``content`` and the string leaves of its tool calls' ``arguments_json``.

Rules (the same for every candidate):

- a planted value is **caught** by a redacting candidate when the redacted text holds neither
  the value nor any :data:`PIECE`-character piece of it (pieces the text also holds outside the
  planted values do not count); by a report-only candidate when its spans cover every
  occurrence of the value. **Line** recall, for every candidate, only asks that each line an
  occurrence touches holds a finding (what a redactor that drops flagged lines would catch).
- the **kind** is right when every finding overlapping the value names the case's kind or one
  of its ``accept`` kinds (only for caught values of a redacting candidate).
- a hard negative or a real message is **altered** when there is any finding in it.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.secrets_candidates import Candidate, Span

#: A piece of a planted value this long that survives redaction means the value leaked.
PIECE = 8
#: Characters of context on each side of a finding in a report.
CONTEXT = 20


@dataclass(frozen=True)
class Planted:
    """One planted value of a labelled case, with the kinds a marker may name for it."""

    case_id: str
    kind: str
    value: str
    accept: frozenset[str]


@dataclass(frozen=True)
class Case:
    """One line of the labelled set; ``kind`` is None for a hard negative."""

    id: str
    kind: str | None
    shape: str
    text: str
    planted: tuple[Planted, ...]
    why: str = ""
    #: ``text`` is the JSON of a tool call's arguments (issue 27 item 1): a candidate that
    #: redacts JSON values (``redact_json``) gets the parsed value, the others the text
    structured: bool = False
    #: what a negative is (``csrf-token``, ``digest``, ``public-key``…; ``other`` when unsaid)
    klass: str = "other"


def load_labelled(folder: Path) -> list[Case]:
    """Every case of ``folder/*.jsonl``, file by file in name order.

    Raises ValueError when a planted value is not in its text (a broken case)."""
    cases = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            raw = json.loads(line)
            kind = raw["kind"]
            accept = frozenset(raw.get("accept", ()))
            values = [(kind, v) for v in raw["secrets"]]
            values += [(m["kind"], m["value"]) for m in raw.get("more", ())]
            planted = tuple(
                Planted(raw["id"], k, v, accept | {k} if k == kind else frozenset({k}))
                for k, v in values
            )
            for item in planted:
                if item.value not in raw["text"]:
                    raise ValueError(f"{path.name}: {raw['id']}: a planted value is not in text")
            structured = bool(raw.get("structured"))
            klass = raw.get("class", kind or "other")
            text, why = raw["text"], raw.get("why", "")
            cases.append(Case(raw["id"], kind, raw["shape"], text, planted, why, structured, klass))
    return cases


def occurrences(text: str, value: str) -> list[tuple[int, int]]:
    """Every (start, end) of ``value`` in ``text``, overlaps included."""
    found = []
    at = text.find(value)
    while at >= 0:
        found.append((at, at + len(value)))
        at = text.find(value, at + 1)
    return found


def survives(value: str, original: str, redacted: str, planted: Iterable[str]) -> bool:
    """Whether ``value`` or a :data:`PIECE`-character piece of it is still in ``redacted``;
    pieces that ``original`` also holds outside every ``planted`` value are not evidence."""
    if value in redacted:
        return True
    outside = original
    for other in planted:
        outside = outside.replace(other, "\0")
    return any(
        value[i : i + PIECE] in redacted and value[i : i + PIECE] not in outside
        for i in range(len(value) - PIECE + 1)
    )


def _covered(spans: list[Span], start: int, end: int) -> bool:
    at = start
    for s, e, _ in sorted(spans):
        if s <= at < e:
            at = e
        if at >= end:
            return True
    return at >= end


def _lines_flagged(text: str, spans: list[Span], start: int, end: int) -> bool:
    first = text.rfind("\n", 0, start) + 1
    while first < end:
        last = text.find("\n", first)
        last = len(text) if last < 0 else last
        if not any(s < last + 1 and e > first for s, e, _ in spans):
            return False
        first = last + 1
    return True


def mask(text: str, span: Span) -> str:
    """``span`` of ``text`` replaced by ``[kind:length]`` with :data:`CONTEXT` characters either
    side, escaped onto one line (the finding itself is never shown)."""
    start, end, kind = span
    left = text[max(0, start - CONTEXT) : start]
    right = text[end : end + CONTEXT]
    return f"{_one_line(left)}[{kind}:{end - start}]{_one_line(right)}"


def _one_line(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


@dataclass
class LabelledScore:
    """A candidate's figures on the labelled set."""

    planted: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)
    line_caught: Counter[str] = field(default_factory=Counter)
    kind_ok: int = 0
    kind_judged: int = 0
    missed: list[tuple[str, str, str]] = field(default_factory=list)
    wrong_kind: list[tuple[str, str, str]] = field(default_factory=list)
    negatives: int = 0
    altered: list[tuple[str, str, str]] = field(default_factory=list)
    by_class: Counter[str] = field(default_factory=Counter)
    altered_by_class: Counter[str] = field(default_factory=Counter)
    #: findings by the candidate's own kind name: on a planted value, and anywhere else
    true_findings: Counter[str] = field(default_factory=Counter)
    false_findings: Counter[str] = field(default_factory=Counter)

    @property
    def precision(self) -> float:
        """Caught values / (caught values + altered negatives): of what the candidate changed
        or reported, how much was a credential (a case-level precision, comparable between
        tools whatever they call their findings)."""
        caught = sum(self.caught.values())
        return caught / max(1, caught + len(self.altered))

    def kind_precision(self, kind: str) -> float | None:
        """Of the candidate's findings of ``kind`` (its own name), the share on a planted
        value; None when it made none."""
        total = self.true_findings[kind] + self.false_findings[kind]
        return self.true_findings[kind] / total if total else None

    @property
    def recall(self) -> float:
        """Caught / planted values over every kind."""
        return sum(self.caught.values()) / max(1, sum(self.planted.values()))

    @property
    def line_recall(self) -> float:
        """Line-caught / planted values over every kind."""
        return sum(self.line_caught.values()) / max(1, sum(self.planted.values()))

    @property
    def kind_accuracy(self) -> float | None:
        """Right kind / caught values, or None for a report-only candidate."""
        return self.kind_ok / self.kind_judged if self.kind_judged else None


def _preview(value: str) -> str:
    return f"{value[:6]}…({len(value)} chars)"


def _run(candidate: Candidate, case: Case) -> tuple[list[Span], str | None]:
    """A candidate's findings in a case and its redacted text (None for a report-only one).
    A structured case goes to ``redact_json`` when the candidate has one: its findings are
    then located by the strings they were found in (:func:`_json_spans`)."""
    if case.structured and candidate.redact_json is not None:
        value = json.loads(case.text)
        new, found = candidate.redact_json(value)
        redacted = json.dumps(new)
        return _json_spans(case.text, value, found), redacted
    spans = candidate.find(case.text)
    return spans, candidate.redact(case.text) if candidate.redact else None


def _json_spans(text: str, value: Any, found: list[tuple[tuple[Any, ...], str]]) -> list[Span]:
    """Findings of a JSON walk as spans of ``text``: each covers the JSON text of the string
    at its path (the whole text when the path no longer resolves: a renamed key)."""
    spans: list[Span] = []
    for path, kind in found:
        item = value
        for step in path:
            try:
                item = item[step]
            except (KeyError, IndexError, TypeError):
                item = None
                break
        where = text.find(json.dumps(item)[1:-1]) if isinstance(item, str) and item else -1
        if where < 0:
            spans.append((0, len(text), kind))
        else:
            spans.append((where, where + len(json.dumps(item)) - 2, kind))
    return spans


def score_labelled(candidate: Candidate, cases: list[Case]) -> LabelledScore:
    """Run ``candidate`` on every case (inside its session) and score it."""
    score = LabelledScore()
    with candidate.session():
        for case in cases:
            spans, redacted = _run(candidate, case)
            if case.kind is None:
                score.negatives += 1
                score.by_class[case.klass] += 1
                if spans or (redacted is not None and redacted != case.text):
                    kinds = ",".join(sorted({k for _, _, k in spans}))
                    score.altered.append((case.id, case.why, kinds))
                    score.altered_by_class[case.klass] += 1
                    score.false_findings.update(k for _, _, k in spans)
                continue
            _score_case(case, spans, redacted, score)
    return score


def _score_case(case: Case, spans: list[Span], redacted: str | None, score: LabelledScore) -> None:
    values = [p.value for p in case.planted]
    places = [w for v in values for w in occurrences(case.text, v)]
    for s, e, k in spans:
        on_value = any(s < b and e > a for a, b in places)
        (score.true_findings if on_value else score.false_findings)[k] += 1
    for item in case.planted:
        score.planted[item.kind] += 1
        where = occurrences(case.text, item.value)
        if all(_lines_flagged(case.text, spans, s, e) for s, e in where):
            score.line_caught[item.kind] += 1
        if redacted is not None:
            caught = not survives(item.value, case.text, redacted, values)
        else:
            caught = all(_covered(spans, s, e) for s, e in where)
        if not caught:
            score.missed.append((case.id, item.kind, case.shape))
            continue
        score.caught[item.kind] += 1
        if redacted is not None:
            kinds = {k for s, e, k in spans for a, b in where if s < b and e > a}
            score.kind_judged += 1
            if kinds and kinds <= item.accept:
                score.kind_ok += 1
            else:
                score.wrong_kind.append((case.id, item.kind, ",".join(sorted(kinds)) or "-"))


@dataclass(frozen=True)
class RealMessage:
    """One real message: where it is, and the strings a redactor sees in it."""

    file: str
    index: int
    strings: tuple[str, ...]


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)


def load_real(folder: Path) -> tuple[list[RealMessage], list[str]]:
    """Every message of every importable file under ``folder`` (files in name order), and the
    files that do not import (relative paths, with the reason)."""
    from loomsync.importers import detect_format, import_path

    messages: list[RealMessage] = []
    skipped: list[str] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = str(path.relative_to(folder))
        if detect_format(path) is None:
            skipped.append(f"{name} (no importer recognises it)")
            continue
        result = import_path(path)
        if not result.threads:
            skipped.append(f"{name} (imported no thread: {result.warnings[:1]})")
        for n, thread in enumerate(result.threads):
            label = name if len(result.threads) == 1 else f"{name}#{n}"
            for index, message in enumerate(thread.conversation.messages):
                strings = [message.content]
                for call in message.tool_calls or ():
                    strings += _leaves(call.arguments_json)
                messages.append(RealMessage(label, index, tuple(s for s in strings if s)))
    return messages, skipped


@dataclass
class RealScore:
    """A candidate's figures on the real messages: what it altered and how fast it ran."""

    messages: int = 0
    megabytes: float = 0.0
    seconds: float = 0.0
    altered: list[tuple[str, int, str, str]] = field(default_factory=list)

    @property
    def altered_messages(self) -> int:
        """Messages with at least one finding."""
        return len({(f, i) for f, i, _, _ in self.altered})

    @property
    def per_thousand(self) -> float:
        """Altered messages per 1,000 messages."""
        return 1000 * self.altered_messages / max(1, self.messages)


def score_real(candidate: Candidate, messages: list[RealMessage]) -> RealScore:
    """Run ``candidate`` over every real string, timed (a redacting candidate is timed on
    ``redact``, what the client runs; the others on ``find``), and list every finding."""
    score = RealScore(messages=len(messages))
    strings = [s for m in messages for s in m.strings]
    score.megabytes = sum(len(s.encode("utf-8", "surrogatepass")) for s in strings) / 1e6
    with candidate.session():
        run = candidate.redact or candidate.find
        started = time.perf_counter()
        results = [run(s) for s in strings]
        score.seconds = time.perf_counter() - started
        at = 0
        for message in messages:
            for text in message.strings:
                result = results[at]
                at += 1
                if isinstance(result, str):
                    if result == text:
                        continue
                    spans = candidate.find(text) or [(0, 0, "?")]
                elif not result:
                    continue
                else:
                    spans = result
                for span in spans:
                    score.altered.append((message.file, message.index, span[2], mask(text, span)))
    return score
