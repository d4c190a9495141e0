"""The judged query set of bench.search_quality and the metrics that score a ranking against it.

A *ranking* is what a system answers for one query: threads in rank order, each with the message
it points to (``message_index``; None when it names none). Judgments grade messages 0/1/2
(bench/search_judged/README.md); a thread's grade is the best grade of its messages.

Metrics, each at a cutoff ``k`` (10), linear gains, ``log2(rank + 1)`` discount:

- *thread level*: the gain at a rank is the thread's grade. nDCG@k divides by the DCG of the
  judged threads' grades sorted best first; recall@k is the share of the threads graded 1 or 2
  found in the top k; MRR is 1 / the rank of the first such thread (0 when none is in the top k).
- *message level*: the gain at a rank is the grade of the message the system points to (0 when
  it points to none). The ideal is the same as at thread level (one message a thread, as the
  systems answer), so the two are equal exactly when every returned thread's message is its best
  one; recall@k is the share of relevant threads whose returned message is graded 1 or 2, MRR the
  rank of the first such message.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

JUDGED = Path(__file__).resolve().parent / "search_judged" / "queries.jsonl"
K = 10
METRICS = ("ndcg", "recall", "mrr")

#: One hit of a ranking: (thread id, message index or None).
Hit = tuple[str, int | None]


@dataclass(frozen=True)
class Query:
    """One judged query: ``grades`` maps (thread id, message index) to 1 or 2."""

    id: str
    type: str
    text: str
    split: str
    grades: dict[tuple[str, int], int] = field(hash=False)

    @property
    def thread_grades(self) -> dict[str, int]:
        """Each judged thread's grade: the best grade of its messages."""
        best: dict[str, int] = {}
        for (thread, _), grade in self.grades.items():
            best[thread] = max(best.get(thread, 0), grade)
        return best


def load_queries(path: Path = JUDGED) -> list[Query]:
    """The judged queries of a ``queries.jsonl`` file, in file order.

    Raises:
        ValueError: a grade outside 1-2, a repeated query id or message, or an unknown split.
    """
    queries: list[Query] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        grades: dict[tuple[str, int], int] = {}
        for judgment in row["judgments"]:
            key = (judgment["thread"], int(judgment["message"]))
            if key in grades or judgment["grade"] not in (1, 2):
                raise ValueError(f"{row['id']}: bad or repeated judgment {judgment}")
            grades[key] = int(judgment["grade"])
        if row["split"] not in ("tune", "heldout"):
            raise ValueError(f"{row['id']}: split must be tune or heldout")
        queries.append(Query(row["id"], row["type"], row["query"], row["split"], grades))
    if len({q.id for q in queries}) != len(queries):
        raise ValueError("query ids repeat")
    return queries


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: sum of ``gain / log2(rank + 1)``, ranks from 1."""
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1))


def ndcg(gains: Sequence[float], ideal: Iterable[float], k: int = K) -> float:
    """nDCG@k of ``gains`` (in rank order) against all the ``ideal`` gains (any order); 0 when
    the ideal has no gain."""
    best = dcg(sorted(ideal, reverse=True)[:k])
    return dcg(gains[:k]) / best if best > 0 else 0.0


def recall(gains: Sequence[float], relevant: int, k: int = K) -> float:
    """Share of the ``relevant`` items found: the gains above 0 in the top k, over ``relevant``."""
    return sum(1 for gain in gains[:k] if gain > 0) / relevant if relevant else 0.0


def reciprocal_rank(gains: Sequence[float], k: int = K) -> float:
    """1 / the rank (from 1) of the first gain above 0 in the top k; 0 when there is none."""
    return next((1.0 / rank for rank, gain in enumerate(gains[:k], 1) if gain > 0), 0.0)


def dedupe(ranking: Iterable[Hit]) -> list[Hit]:
    """The ranking with each thread kept at its first (best) rank only."""
    seen: set[str] = set()
    out: list[Hit] = []
    for thread, message in ranking:
        if thread not in seen:
            seen.add(thread)
            out.append((thread, message))
    return out


def score(query: Query, ranking: Iterable[Hit], k: int = K) -> dict[str, float]:
    """Six metrics of one ranking: ``thread_ndcg``, ``thread_recall``, ``thread_mrr`` and the
    same three at ``message_`` level (module docstring), each in [0, 1]."""
    hits = dedupe(ranking)
    thread_grades = query.thread_grades
    ideal = list(thread_grades.values())
    relevant = len(ideal)
    thread_gains = [float(thread_grades.get(thread, 0)) for thread, _ in hits]
    message_gains = [
        float(query.grades.get((thread, message), 0)) if message is not None else 0.0
        for thread, message in hits
    ]
    out: dict[str, float] = {}
    for level, gains in (("thread", thread_gains), ("message", message_gains)):
        out[f"{level}_ndcg"] = ndcg(gains, ideal, k)
        out[f"{level}_recall"] = recall(gains, relevant, k)
        out[f"{level}_mrr"] = reciprocal_rank(gains, k)
    return out


def groups(query: Query) -> list[str]:
    """The report rows a query counts in: ``overall``, its split and its type."""
    return ["overall", query.split, query.type]


def aggregate(
    queries: Sequence[Query], scores: Sequence[dict[str, float]]
) -> dict[str, dict[str, float]]:
    """Mean of every metric by group (:func:`groups`), plus ``n`` (queries in the group)."""
    sums: dict[str, dict[str, float]] = {}
    for query, metrics in zip(queries, scores, strict=True):
        for group in groups(query):
            bucket = sums.setdefault(group, {"n": 0.0})
            bucket["n"] += 1
            for name, value in metrics.items():
                bucket[name] = bucket.get(name, 0.0) + value
    return {
        group: {name: (v if name == "n" else v / bucket["n"]) for name, v in bucket.items()}
        for group, bucket in sums.items()
    }
