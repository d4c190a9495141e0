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
- a plain query of two units or more has one more unit, its units in order as a phrase
  (:attr:`loomsync.core.textsearch.query.Query.phrase`), which only scores: its IDF is
  :func:`phrase_idf` (:data:`PHRASE_WEIGHT` times the sum of its units' IDFs, as Lucene's
  phrase weight sums its terms'), its ``tf`` and contribution a unit's, so a text that holds
  the words as written outranks one that holds them scattered;
- a message's score is the sum over units; a thread's is its best message's plus
  :data:`SPREAD` times what its other messages add for units the best one lacks (words
  spread over messages still find their thread), plus its title, tags and git metadata scored
  the same way (:data:`THREAD_WEIGHTS`, times :data:`THREAD_BOOST`), plus :data:`COMMIT_SCORE`
  for a commit SHA prefix.
"""

from __future__ import annotations

import decimal
import math
import struct
from collections.abc import Sequence

#: Tuned on the tune split of bench/search_judged (bench/search_tune.py; never on held-out
#: queries): a weaker length normalisation than BM25's usual 0.75 (messages here run from one
#: line to 100 KB, and the answer is often in a long one), git metadata (B) at 0.9 and thread
#: fields x 1.75, so that a title, tag or branch hit still ranks above the same word in one
#: message (API.md section 6). Tool results (C) at 0.73: below the user's and the model's own
#: words, but a query copied from a tool's output ("389 tests passing") is answered by that
#: output, not by the assistant's message quoting it (tune split: message nDCG@10 0.80 -> 0.82,
#: the same on a plateau of K1 0.8-1.2 and B 0.25-0.3). Set again once the phrase bonus was in:
#: C 0.68 to 0.78 is a plateau of tune message nDCG@10 0.821 (0.8: 0.816; 0.65: 0.812); 0.73
#: is its middle.
K1 = 1.2
B = 0.25
#: ``ts_rank`` weights of message vectors: user content, assistant content, other roles'
#: content (tool results, system), tool names and arguments (loomsync.core.textsearch.fields).
MESSAGE_WEIGHTS = {"A": 1.0, "B": 0.9, "C": 0.73, "D": 0.3}
#: ``ts_rank`` weights of thread vectors: title and tags, git metadata.
THREAD_WEIGHTS = {"A": 1.0, "B": 0.9, "C": 0.0, "D": 0.0}
THREAD_BOOST = 1.75
SPREAD = 0.3
#: The phrase bonus (module docstring), on the tune split of bench/search_judged only
#: (bench/search_tune.py --set PHRASE_WEIGHT=...): 0 gives thread nDCG@10 0.990 and message
#: 0.810; 0.25 to 1.0 a plateau of 0.993 and 0.816 (keywords 0.98 -> 1.00, tool output
#: messages 0.89 -> 0.94, morphology messages 0.75 -> 0.73); 1.5 drops morphology messages to
#: 0.69. The middle of the plateau, enough for words written together to outrank the same
#: words scattered over a shorter message (tests/threads/test_search_rank.py).
PHRASE_WEIGHT = 0.5
COMMIT_SCORE = 10.0
#: Digits statistics and scores are rounded to, on the server and locally alike: IDFs (they
#: travel in a cursor and must read back equal), average vector lengths, and thread scores (a
#: float sum added up in another order on the next page, or in Python, compares equal).
IDF_DIGITS = 4
LENGTH_DIGITS = 2
SCORE_DIGITS = 6
#: PostgreSQL's normaliser of ``calc_rank_or`` (the sum of 1/i^2, pi^2/6).
_ZETA2 = 1.64493406685
_SINGLE = struct.Struct("f")


def weights_sql(weights: dict[str, float]) -> str:
    """``weights`` as the ``float4[]`` literal ``ts_rank`` takes (order D, C, B, A)."""
    return "'{" + ",".join(str(weights[w]) for w in "DCBA") + "}'::float4[]"


def _f4(value: float) -> float:
    """``value`` rounded to a ``float4`` (IEEE single), as ``ts_rank`` computes: each ``+ - *
    /`` of two singles done in double and rounded is the single-precision result (double holds
    more than twice the bits, so no double rounding)."""
    single: float = _SINGLE.unpack(_SINGLE.pack(value))[0]
    return single


def _entry_rank(weights: Sequence[float]) -> float:
    """``calc_rank_or``'s term for one vector entry (a lexeme's occurrences, position order),
    in its float4 steps, before the division by ``_ZETA2``."""
    total = 0.0
    best, at = -1.0, 0
    for j, weight in enumerate(weights):
        w = _f4(weight)
        total = _f4(total + _f4(w / ((j + 1) * (j + 1))))
        if w > best:
            best, at = w, j
    return _f4(_f4(best + total) - _f4(best / ((at + 1) * (at + 1))))


def rank_or(weights: Sequence[float]) -> float:
    """PostgreSQL's ``ts_rank`` of one lexeme (``calc_rank_or``, src/backend/utils/adt/
    tsrank.c) from the weights of its occurrences in position order, in float4 as PostgreSQL
    computes it: in (0, 1] for at least one occurrence, 0 for none."""
    return unit_tf([[weights]]) if weights else 0.0


def rank_order(lexemes: Sequence[str]) -> list[str]:
    """The distinct lexemes of a unit (a prefix keeps its ``*``) in the order ``calc_rank_or``
    visits them (``SortAndUniqItems``: by the lexeme's bytes, shorter first on a common start;
    a prefix and the same word counted once)."""
    seen: dict[str, str] = {}
    for lexeme in lexemes:
        seen.setdefault(lexeme.removesuffix("*"), lexeme)
    return [seen[key] for key in sorted(seen, key=lambda key: key.encode("utf-8"))]


def unit_tf(items: Sequence[Sequence[Sequence[float]]]) -> float:
    """A matching unit's ``tf``: ``ts_rank(weights, vector, 'a' | 'b' | ...)`` of the unit's
    distinct lexemes, exactly as PostgreSQL computes it (float4 steps, same order).

    ``items``: per distinct lexeme in :func:`rank_order`, the vector entries it finds, each
    the weights of that entry's occurrences in position order: no entry when the text lacks
    the lexeme (e.g. a joined identifier written as separate words), one for a word, one per
    lexeme of the text a prefix (``'x':*``) starts, in the vector's (byte) order. The mean over
    the items of each entry's :func:`rank_or`."""
    result = 0.0
    for entries in items:
        for weights in entries:
            result = _f4(result + _entry_rank(weights) / _ZETA2)
    if items:
        result = _f4(result / len(items))
    return result


def round_score(score: float) -> float:
    """A thread score as the server rounds it: ``round(CAST(score AS numeric), 6)``, i.e. the
    double's 15 significant digits (``float8_numeric``), then half away from zero."""
    exact = decimal.Decimal(f"{score:.15g}")
    return float(exact.quantize(decimal.Decimal(1).scaleb(-SCORE_DIGITS), decimal.ROUND_HALF_UP))


def idf(holding: float, total: float) -> float:
    """Lucene's BM25 IDF: ``ln(1 + (N - n + 0.5) / (n + 0.5))`` for ``n`` = ``holding`` of
    ``N`` = ``total`` messages (both may be estimates; never negative)."""
    n = min(max(holding, 0.0), total)
    return math.log(1.0 + (total - n + 0.5) / (n + 0.5))


def phrase_idf(idfs: Sequence[float]) -> float:
    """The IDF the phrase bonus scores with, from its units' (rounded) IDFs, rounded to
    :data:`IDF_DIGITS`: server and local search compute it here, from the same numbers (the
    server's travel in the cursor, so every page scores the phrase alike)."""
    return round(PHRASE_WEIGHT * sum(idfs), IDF_DIGITS)


def bm25(idf_value: float, tf: float, length: float, average_length: float) -> float:
    """One unit's contribution to a message's score (module docstring), in the operation
    order of the server's SQL (app.threads.ranking), so that both round alike."""
    if tf <= 0:
        return 0.0
    norm = K1 * (1.0 - B) + K1 * B * length / max(average_length, 1.0)
    return idf_value * tf * (K1 + 1.0) / (tf + norm)
