"""The detector meets issue 12 item 2's targets on the labelled set (tests/secrets/labelled):
recall >= 0.98, no hard negative altered, the marker names the labelled kind for >= 0.95 of the
caught values. Scored by bench.secrets_quality's own rules (bench/secrets_score.py), so the test
and the benchmark cannot disagree; the benchmark adds the real transcripts and speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.secrets_candidates import Candidate, loomsync_candidate
from bench.secrets_quality import LABELLED
from bench.secrets_score import LabelledScore, load_labelled, score_labelled, survives

CASES = load_labelled(LABELLED)


@pytest.fixture(scope="module")
def score() -> LabelledScore:
    return score_labelled(loomsync_candidate(), CASES)


def test_recall_is_at_least_98_percent(score: LabelledScore) -> None:
    assert score.recall >= 0.98, (
        f"recall {score.recall:.3f}; {len(score.missed)} missed: {score.missed[:20]}"
    )


def test_no_hard_negative_is_altered(score: LabelledScore) -> None:
    assert score.altered == []


def test_markers_name_the_labelled_kind(score: LabelledScore) -> None:
    accuracy = score.kind_accuracy
    assert accuracy is not None
    assert accuracy >= 0.95, f"kind accuracy {accuracy:.3f}; wrong: {score.wrong_kind[:20]}"


# The scoring rules themselves, so that a pass above means what it says.


def test_the_set_covers_every_kind_with_several_cases_and_many_negatives() -> None:
    kinds: dict[str, int] = {}
    for case in CASES:
        if case.kind is not None:
            kinds[case.kind] = kinds.get(case.kind, 0) + 1
    assert len(kinds) == 28
    assert min(kinds.values()) >= 5
    assert sum(kinds.values()) >= 150
    assert sum(case.kind is None for case in CASES) >= 60


def _keeps_tail(keep: int) -> Candidate:
    """A redactor that replaces each planted value but its last ``keep`` characters."""
    values = sorted({p.value for c in CASES for p in c.planted}, key=len, reverse=True)

    def redact(text: str) -> str:
        for value in values:
            text = text.replace(value, "[REDACTED:x]" + value[len(value) - keep :])
        return text

    def find(text: str) -> list[tuple[int, int, str]]:
        return []

    return Candidate("tail", find, redact=redact)


def test_a_surviving_piece_of_eight_characters_is_a_miss() -> None:
    positives = [c for c in CASES if c.kind is not None]
    assert score_labelled(_keeps_tail(8), positives).recall < 0.05
    assert score_labelled(_keeps_tail(7), positives).recall == 1.0


def test_pieces_the_text_holds_elsewhere_are_not_evidence() -> None:
    text = "cert LS0tLS1CRUdJTiBD key LS0tLS1CRUdJTiBSU0EgUFJJ"
    planted = "LS0tLS1CRUdJTiBSU0EgUFJJ"
    redacted = text.replace(planted, "[REDACTED:private-key]")
    assert not survives(planted, text, redacted, [planted])
    assert survives(planted, text, redacted.replace("cert", "SU0EgUFJJ"), [planted])


def test_report_only_candidates_must_cover_the_whole_value() -> None:
    [case] = [c for c in CASES if c.id == "aws-access-key-01"]
    value = case.planted[0].value
    start = case.text.index(value)

    def half(text: str) -> list[tuple[int, int, str]]:
        return [(start, start + len(value) // 2, "x")] if text == case.text else []

    def whole(text: str) -> list[tuple[int, int, str]]:
        return [(start - 3, start + len(value), "x")] if text == case.text else []

    assert score_labelled(Candidate("half", half), [case]).recall == 0.0
    assert score_labelled(Candidate("half", half), [case]).line_recall == 1.0
    assert score_labelled(Candidate("whole", whole), [case]).recall == 1.0


def test_a_case_whose_value_is_not_in_its_text_is_refused(tmp_path: Path) -> None:
    line = {"id": "x-01", "kind": "jwt", "shape": "json", "text": "abc", "secrets": ["abd"]}
    (tmp_path / "jwt.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="x-01"):
        load_labelled(tmp_path)
