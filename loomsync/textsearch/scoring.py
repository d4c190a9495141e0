"""How matches are scored, on the server (in SQL) and in the local search (in Python) alike.

BM25-like (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
2009), with PostgreSQL's own term-frequency function for what a ``tsvector`` holds:

- per unit and message that matches it (a phrase: its words in order), ``tf`` is
  :func:`unit_tf`: the mean, over the unit's distinct lexemes, of :func:`rank_or` of the
  weights of that lexeme's occurrences, which is what ``ts_rank(weights, vector, 'a' | 'b' |
  …)`` returns (``calc_rank_or``: operands sorted and deduplicated, averaged; for one word, the
  word's own ``ts_rank``). ``rank_or`` grows with repeats and saturates at the best
  occurrence's weight, and the weight says where the word is (:data:`MESSAGE_WEIGHTS`: the
  user's and the model's words above tool output). Not ``ts_rank`` of the phrase itself:
  ``calc_rank_and`` compares every pair of its words' positions, quadratic in a hostile
  phrase of one repeated word;
- the unit's contribution is ``idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length /
  average length))`` (:func:`bm25`), ``length`` being the message vector's distinct lexemes,
  so a 40 KB tool dump does not outrank a short answer by sheer size;
- :func:`idf` is Lucene's BM25 IDF over the share of messages that hold the lexeme;
- a message's score is the sum over units; a thread's is its best message's plus
  :data:`SPREAD` times what its other messages add for units the best one lacks (words
  spread over messages still find their thread), plus its title, tags and git metadata scored
  the same way (:data:`THREAD_WEIGHTS`, times :data:`THREAD_BOOST`), plus :data:`COMMIT_SCORE`
  for a commit SHA prefix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: Tuned on the tune split of bench/search_judged (bench/search_tune.py; never on held-out
#: queries): a weaker length normalisation than BM25's usual 0.75 (messages here run from one
#: line to 100 KB, and the answer is often in a long one), tool results (C) at 0.6, git
#: metadata (B) at 0.9 and thread fields x 1.75, so that a title, tag or branch hit still ranks
#: above the same word in one message (API.md section 6).
K1 = 1.2
B = 0.3
#: ``ts_rank`` weights of message vectors: user content, assistant content, other roles'
#: content (tool results, system), tool names and arguments (loomsync.textsearch.fields).
MESSAGE_WEIGHTS = {"A": 1.0, "B": 0.9, "C": 0.6, "D": 0.3}
#: ``ts_rank`` weights of thread vectors: title and tags, git metadata.
THREAD_WEIGHTS = {"A": 1.0, "B": 0.9, "C": 0.0, "D": 0.0}
THREAD_BOOST = 1.75
SPREAD = 0.3
COMMIT_SCORE = 10.0
#: PostgreSQL's normaliser of ``calc_rank_or`` (the sum of 1/i^2, pi^2/6).
_ZETA2 = 1.64493406685


def weights_sql(weights: dict[str, float]) -> str:
    """``weights`` as the ``float4[]`` literal ``ts_rank`` takes (order D, C, B, A)."""
    return "'{" + ",".join(str(weights[w]) for w in "DCBA") + "}'::float4[]"


def rank_or(weights: Sequence[float]) -> float:
    """PostgreSQL's ``ts_rank`` of one lexeme (``calc_rank_or``, src/backend/utils/adt/
    tsrank.c) from the weights of its occurrences in position order: in (0, 1] for at least
    one occurrence, 0 for none."""
    if not weights:
        return 0.0
    total = sum(w / ((j + 1) * (j + 1)) for j, w in enumerate(weights))
    best = max(weights)
    at = weights.index(best)
    return (best + total - best / ((at + 1) * (at + 1))) / _ZETA2


def unit_tf(ranks: Sequence[float]) -> float:
    """A matching unit's ``tf`` from one rank per distinct lexeme of the unit: :func:`rank_or`
    of its occurrences' weights (0 when the text lacks it, e.g. a joined identifier written as
    separate words); for a prefix lexeme (``'x':*``), the sum of :func:`rank_or` over every
    lexeme of the text it prefixes (``calc_rank_or`` visits each). The mean of them."""
    return sum(ranks) / len(ranks) if ranks else 0.0


def idf(holding: float, total: float) -> float:
    """Lucene's BM25 IDF: ``ln(1 + (N - n + 0.5) / (n + 0.5))`` for ``n`` = ``holding`` of
    ``N`` = ``total`` messages (both may be estimates; never negative)."""
    n = min(max(holding, 0.0), total)
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def bm25(idf_value: float, tf: float, length: float, average_length: float) -> float:
    """One unit's contribution to a message's score (module docstring)."""
    if tf <= 0:
        return 0.0
    norm = K1 * (1.0 - B + B * length / max(average_length, 1.0))
    return idf_value * tf * (K1 + 1.0) / (tf + norm)
