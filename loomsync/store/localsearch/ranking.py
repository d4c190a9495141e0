"""The thread score of the local search: the server's rules (:mod:`loomsync.core.textsearch.scoring`)
applied to exact statistics from the local index (issue 14 item 3).

For each unit ``u`` and message ``m``, ``c(u, m) = bm25(idf_u, tf(u, m), length_m, average
message length)``; a message scores ``Σ_u c(u, m)``; a thread scores its best message, plus
``SPREAD * (Σ_u max_m c(u, m) - best)`` for units its other messages add, plus
``THREAD_BOOST * Σ_u bm25(idf_u, tf(u, thread vector), thread length, average thread
length)``, plus ``COMMIT_SCORE`` when a commit SHA starts with the query. ``idf_u`` is
:func:`~loomsync.core.textsearch.frequency.idf` of the share of messages the unit matches, counted
exactly (the server estimates it from ``pg_stats``) and quantized alike. The phrase bonus of a
plain query is one more ``u`` of these sums, its IDF
:func:`~loomsync.core.textsearch.scoring.phrase_idf` of the units'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from loomsync.core.textsearch import frequency, scoring

THREAD_SEQ = -1
"""The ``seq`` of a thread's own vector (title, tags, git metadata) among its documents."""


@dataclass(frozen=True, slots=True)
class DocInfo:
    """A document of the index: its thread's row id, its message index (:data:`THREAD_SEQ`
    for the thread vector) and its vector's length (distinct lexemes)."""

    tid: int
    seq: int
    length: int


@dataclass(slots=True)
class ThreadScore:
    """A thread's score and the index of its best message (None: only its title, tags, git
    metadata or a commit matched); ``units`` are the indexes of the units it holds."""

    score: float
    best_seq: int | None
    units: set[int]


def unit_idf(matches: Mapping[int, float], docs: Mapping[int, DocInfo], messages: int) -> float:
    """The IDF of a unit from the messages it matches (``matches``: doc → tf) of ``messages``:
    the exact share through the server's quantization (:func:`loomsync.core.textsearch.frequency.
    idf`), so that local and server rank alike."""
    holding = sum(1 for doc in matches if docs[doc].seq != THREAD_SEQ)
    return frequency.idf(holding / max(messages, 1))


def score_threads(
    units: Sequence[Mapping[int, float]],
    docs: Mapping[int, DocInfo],
    *,
    messages: int,
    average_message: float,
    average_thread: float,
    commits: Iterable[int] = (),
    phrase: Mapping[int, float] | None = None,
) -> dict[int, ThreadScore]:
    """Thread row id → :class:`ThreadScore` for every thread a unit or a commit matched, as
    the server scores it: statistics and scores rounded as it rounds them
    (:data:`~loomsync.core.textsearch.scoring.IDF_DIGITS`, :func:`~loomsync.core.textsearch.scoring.
    round_score`), the best message the first of equal ones.

    Args:
        units: per unit of the query, doc → tf (``tf`` from message weights for messages,
            from thread weights for thread vectors).
        docs: what each matched document is.
        messages: messages in the index (N of the IDF).
        average_message / average_thread: average vector lengths.
        commits: threads a commit SHA of which starts with the query.
        phrase: the phrase bonus (``Query.phrase``), doc → tf, or None: it scores as one more
            unit, with :func:`~loomsync.core.textsearch.scoring.phrase_idf` of the units' IDFs, and
            is not counted in :attr:`ThreadScore.units`.
    """
    average_message = max(round(average_message, scoring.LENGTH_DIGITS), 1.0)
    average_thread = max(round(average_thread, scoring.LENGTH_DIGITS), 1.0)
    message_scores: dict[int, dict[int, float]] = {}  # tid → seq → score
    best_of_unit: dict[int, dict[int, float]] = {}  # tid → unit → best contribution
    thread_part: dict[int, float] = {}
    held: dict[int, set[int]] = {}
    scored = [(matches, unit_idf(matches, docs, messages)) for matches in units]
    if phrase is not None:
        scored.append((phrase, scoring.phrase_idf([weight for _, weight in scored])))
    for index, (matches, weight) in enumerate(scored):
        for doc, tf in matches.items():
            info = docs[doc]
            if index < len(units):
                held.setdefault(info.tid, set()).add(index)
            if info.seq == THREAD_SEQ:
                part = scoring.bm25(weight, tf, info.length, average_thread)
                thread_part[info.tid] = thread_part.get(info.tid, 0.0) + part
                continue
            part = scoring.bm25(weight, tf, info.length, average_message)
            scores = message_scores.setdefault(info.tid, {})
            scores[info.seq] = scores.get(info.seq, 0.0) + part
            bests = best_of_unit.setdefault(info.tid, {})
            if part > bests.get(index, 0.0):
                bests[index] = part
    commit_threads = set(commits)
    out: dict[int, ThreadScore] = {}
    for tid in held.keys() | commit_threads:
        score, best_seq = 0.0, None
        per_message = message_scores.get(tid)
        if per_message:
            best_seq, best = max(per_message.items(), key=lambda item: (item[1], -item[0]))
            score = best + scoring.SPREAD * (sum(best_of_unit[tid].values()) - best)
        score += scoring.THREAD_BOOST * thread_part.get(tid, 0.0)
        out[tid] = ThreadScore(score, best_seq, held.get(tid, set()))
    for tid in commit_threads:
        out[tid].score += scoring.COMMIT_SCORE
    for found in out.values():
        found.score = scoring.round_score(found.score)
    return out


__all__ = ["THREAD_SEQ", "DocInfo", "ThreadScore", "score_threads", "unit_idf"]
