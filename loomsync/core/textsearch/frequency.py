"""How often a lexeme occurs, as ranking may use it: quantized, so that an IDF says nothing that a
small tenant's private use of a word could move (issue 14 review: IDFs read from ``pg_stats``
told another organisation that 200 private threads held a codename).

The server's statistics are shared by every organisation of a database (``pg_stats`` of
``thread_messages``), and a score or a search cursor shows the IDF a query word got. So the
share of messages holding a lexeme is only used coarsely (:func:`quantize`):

- every share under :data:`RARE_SHARE` (0.1% of all messages) is "rare", one value for all, so a
  word that only one tenant uses looks like any unknown word until that tenant alone holds it
  in 0.1% of the whole database's messages;
- above, geometric buckets of ratio :data:`BUCKET_RATIO` (0.1-0.2%, 0.2-0.4%, ... 51.2-100%),
  each read as its geometric middle: what a tenant's use can still move is which bucket an
  already common word falls in, when its share is near a bucket's edge.

The IDF of a quantized share ``s`` is ``ln(1 / s)`` (:func:`idf`): Lucene's BM25 IDF
(:func:`loomsync.core.textsearch.scoring.idf`) for a large corpus, with no ``N`` in it, so that the
number of messages in the database does not show either. The local search puts its exact
counts through the same functions, so both rank alike.
"""

from __future__ import annotations

import math

from loomsync.core.textsearch.scoring import IDF_DIGITS

#: Shares of messages under this are all "rare" (one IDF).
RARE_SHARE = 0.001
#: Above :data:`RARE_SHARE`, a bucket's upper edge is this times its lower edge.
BUCKET_RATIO = 2.0
_STEP = math.log(BUCKET_RATIO)


def quantize(share: float) -> float:
    """The share (a fraction of messages, any float; NaN or below 0 read as 0) ranking uses for
    ``share``: ``RARE_SHARE / sqrt(BUCKET_RATIO)`` under :data:`RARE_SHARE`, else the geometric
    middle of its bucket (at most 1). Idempotent: a quantized share quantizes to itself."""
    if not share >= RARE_SHARE:
        return RARE_SHARE / math.sqrt(BUCKET_RATIO)
    bucket = math.floor(math.log(min(share, 1.0) / RARE_SHARE) / _STEP + 1e-9)
    return min(RARE_SHARE * math.exp((bucket + 0.5) * _STEP), 1.0)


def idf(share: float) -> float:
    """The IDF of a lexeme or unit held by ``share`` of all messages: ``ln(1 / quantize(share))``
    rounded to :data:`~loomsync.core.textsearch.scoring.IDF_DIGITS` (it travels in a cursor and must
    read back equal); between 0.32 (the top bucket) and 7.26 (rare) with the defaults."""
    return round(-math.log(quantize(share)), IDF_DIGITS)


__all__ = ["BUCKET_RATIO", "RARE_SHARE", "idf", "quantize"]
