"""The scorer of bench.search_quality on hand-made rankings, with values worked out by hand.

Judgments used throughout: thread A message 0 graded 2 and message 1 graded 1, B message 3
graded 1, C message 5 graded 2; so thread grades A 2, B 1, C 2, and the ideal DCG is
2/log2(2) + 2/log2(3) + 1/log2(4) = 2 + 1.26186 + 0.5 = 3.76186.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench.quality_judged import (
    Query,
    aggregate,
    dcg,
    load_queries,
    ndcg,
    recall,
    reciprocal_rank,
    score,
)

QUERY = Query("q1", "keywords", "x", "tune", {("A", 0): 2, ("A", 1): 1, ("B", 3): 1, ("C", 5): 2})
IDEAL_DCG = 2 + 2 / math.log2(3) + 1 / 2


def test_dcg_discounts_by_log2_of_rank_plus_one() -> None:
    assert dcg([2, 0, 1]) == pytest.approx(2 + 0 + 1 / 2)
    assert IDEAL_DCG == pytest.approx(3.76186, abs=1e-5)


def test_perfect_ranking_scores_one_everywhere() -> None:
    metrics = score(QUERY, [("A", 0), ("C", 5), ("B", 3)])
    assert metrics == pytest.approx(
        {f"{level}_{m}": 1.0 for level in ("thread", "message") for m in ("ndcg", "recall", "mrr")}
    )


def test_mixed_ranking_by_hand() -> None:
    # Ranks: B (grade 1, its message 3 graded 1), X (unjudged), A pointing at message 1
    # (thread 2, message 1), C at message 5 (2, 2).
    metrics = score(QUERY, [("B", 3), ("X", 0), ("A", 1), ("C", 5)])
    thread_dcg = 1 + 0 + 2 / 2 + 2 / math.log2(5)  # 2.86135
    message_dcg = 1 + 0 + 1 / 2 + 2 / math.log2(5)  # 2.36135
    assert metrics["thread_ndcg"] == pytest.approx(thread_dcg / IDEAL_DCG)
    assert metrics["thread_ndcg"] == pytest.approx(0.7606, abs=1e-4)
    assert metrics["message_ndcg"] == pytest.approx(message_dcg / IDEAL_DCG)
    assert metrics["message_ndcg"] == pytest.approx(0.6277, abs=1e-4)
    assert metrics["thread_recall"] == 1.0
    assert metrics["message_recall"] == 1.0
    assert metrics["thread_mrr"] == 1.0
    assert metrics["message_mrr"] == 1.0


def test_wrong_message_counts_at_message_level_only() -> None:
    # A at rank 1 pointing at an unjudged message; C at rank 2 without a message.
    metrics = score(QUERY, [("A", 7), ("C", None)])
    assert metrics["thread_ndcg"] == pytest.approx((2 + 2 / math.log2(3)) / IDEAL_DCG)
    assert metrics["thread_recall"] == pytest.approx(2 / 3)
    assert metrics["thread_mrr"] == 1.0
    assert metrics["message_ndcg"] == 0.0
    assert metrics["message_recall"] == 0.0
    assert metrics["message_mrr"] == 0.0


def test_only_the_first_hit_of_a_thread_counts() -> None:
    # The second A hit is ignored; C comes in at rank 3.
    metrics = score(QUERY, [("X", 0), ("A", 0), ("A", 1), ("C", 5)])
    assert metrics["thread_mrr"] == 0.5
    expected = (2 / math.log2(3) + 2 / math.log2(4)) / IDEAL_DCG
    assert metrics["thread_ndcg"] == pytest.approx(expected)


def test_hits_past_the_cutoff_are_not_counted() -> None:
    ranking = [(f"X{i}", 0) for i in range(10)] + [("A", 0)]
    metrics = score(QUERY, ranking)
    assert metrics["thread_ndcg"] == metrics["thread_recall"] == metrics["thread_mrr"] == 0.0
    assert score(QUERY, [])["message_mrr"] == 0.0


def test_small_functions_edge_cases() -> None:
    assert ndcg([1.0], [], k=10) == 0.0
    assert recall([1.0, 0.0, 2.0], relevant=4, k=2) == 0.25
    assert recall([], relevant=0) == 0.0
    assert reciprocal_rank([0.0, 0.0, 1.0]) == pytest.approx(1 / 3)
    assert reciprocal_rank([0.0, 1.0], k=1) == 0.0


def test_aggregate_means_by_overall_split_and_type() -> None:
    other = Query("q2", "identifier", "y", "heldout", {("B", 3): 2})
    groups = aggregate([QUERY, other], [{"thread_ndcg": 1.0}, {"thread_ndcg": 0.5}])
    assert groups["overall"] == {"n": 2, "thread_ndcg": 0.75}
    assert groups["tune"]["thread_ndcg"] == 1.0
    assert groups["heldout"]["thread_ndcg"] == 0.5
    assert groups["identifier"] == {"n": 1, "thread_ndcg": 0.5}


def test_load_queries_rejects_a_bad_grade(tmp_path: Path) -> None:
    row = {"id": "q1", "type": "t", "query": "x", "split": "tune",
           "judgments": [{"thread": "T-a", "message": 0, "grade": 3}]}  # fmt: skip
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(ValueError, match="bad or repeated"):
        load_queries(path)


def test_the_committed_judged_set_loads() -> None:
    queries = load_queries()
    assert len(queries) >= 60
    assert all(q.grades and 2 in q.grades.values() for q in queries)
    assert 0.15 <= sum(q.split == "heldout" for q in queries) / len(queries) <= 0.25
