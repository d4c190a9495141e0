"""Corpus statistics for search ranking: how many messages hold a lexeme, how long vectors are
(issue 14; the scoring rules are :mod:`loomsync.core.textsearch.scoring`).

Exact document frequencies would cost a count over the GIN index per query word (a common
word: 50,000+ entries), so they are read from what ``ANALYZE`` already keeps, the numbers the
planner itself estimates ``@@`` by (PostgreSQL documentation, "pg_stats"; ``ts_selfuncs.c``):

- ``pg_stats.most_common_elems`` / ``most_common_elem_freqs`` of
  ``thread_messages.search_vector``: the share of messages holding each frequent lexeme (the
  array's last three numbers are the minimum, the maximum and the null share);
- a lexeme not listed is rarer than every listed one: the planner's rule, half the smallest
  listed frequency (at most :data:`DEFAULT_FREQ`);
- ``pg_class.reltuples`` for the number of messages ``N``, and the average vector length
  (distinct lexemes) of messages and of threads from a bounded sample (:data:`SAMPLE_ROWS`).

Every share is quantized before use (:mod:`loomsync.core.textsearch.frequency`: under 0.1% of all
messages "rare", coarse buckets above), because these statistics are every organisation's and a
score or a cursor shows them: a word only one small tenant uses privately gets the IDF of any
unknown word (docs/search.md, "What the statistics reveal").

With no statistics at all (a table never analysed, e.g. right after a load) every lexeme gets
:data:`DEFAULT_FREQ`, so IDFs are uniform and ranking falls back to term frequency and length.
A snapshot is cached per process and database for :data:`TTL_SECONDS`; a search page passes the
IDFs it used on in its cursor, so later pages score with the very same numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from loomsync.core.textsearch import frequency, scoring
from loomsync.core.textsearch.query import Unit

TTL_SECONDS = 300.0
#: How long a snapshot *without* statistics is kept: a table not analysed yet (a new server, a
#: first import) is analysed by autovacuum within about a minute, and five minutes of uniform
#: IDFs after it made the first searches rank differently from the local search (newcomer).
UNANALYSED_TTL_SECONDS = 10.0
SAMPLE_ROWS = 2_000
#: The planner's ``DEFAULT_TS_MATCH_SEL``: the share assumed for a lexeme without statistics.
DEFAULT_FREQ = 0.005
#: IDFs are rounded so that they fit a cursor and read back to exactly the same value.
IDF_DIGITS = scoring.IDF_DIGITS

_ELEMS = """
SELECT most_common_elems::text AS elems, most_common_elem_freqs AS freqs
FROM pg_stats
WHERE schemaname = current_schema() AND tablename = 'thread_messages'
  AND attname = 'search_vector'
"""
_COUNTS = """
SELECT (SELECT reltuples FROM pg_class WHERE oid = 'thread_messages'::regclass) AS messages,
       (SELECT reltuples FROM pg_class WHERE oid = 'threads'::regclass) AS threads
"""
_AVERAGE = """
SELECT avg(length(s.search_vector)) FROM (
    SELECT search_vector FROM {table} TABLESAMPLE SYSTEM (:percent) LIMIT :rows
) AS s
"""
_AVERAGE_HEAD = (
    "SELECT avg(length(s.search_vector)) FROM (SELECT search_vector FROM {table} LIMIT :rows) AS s"
)


@dataclass(frozen=True)
class Stats:
    """A statistics snapshot: ``messages`` (N; 0 when unknown), frequent lexemes' share of
    messages (``freqs``), the share of an unlisted lexeme (``floor``), average distinct
    lexemes of a message vector and of a thread vector."""

    messages: float
    freqs: dict[str, float] = field(default_factory=dict)
    floor: float = DEFAULT_FREQ
    message_length: float = 1.0
    thread_length: float = 1.0

    def freq(self, lexeme: str) -> float:
        """Share of messages holding ``lexeme`` (a trailing ``*``: any lexeme it prefixes),
        quantized (:func:`loomsync.core.textsearch.frequency.quantize`): the statistics are every
        organisation's, so only coarse shares reach a score, a cursor or the candidates."""
        if lexeme.endswith("*"):
            stem = lexeme[:-1]
            listed = sum(f for lex, f in self.freqs.items() if lex.startswith(stem))
            return frequency.quantize(min(1.0, max(listed, self.floor)))
        return frequency.quantize(self.freqs.get(lexeme, self.floor))

    def unit_freq(self, unit: Unit) -> float:
        """Estimated share of messages holding ``unit``: a slot is as frequent as its most
        frequent alternative, an alternative (a phrase of lexemes) as its rarest lexeme, and
        the unit as its rarest slot (an upper bound of a phrase's share)."""
        return min(
            max(min(self.freq(lex) for lex in alternative) for alternative in slot)
            for slot in unit.slots
        )

    def unit_rows(self, unit: Unit) -> float:
        """Estimated messages holding ``unit``."""
        return self.unit_freq(unit) * max(self.messages, 1.0)

    def unit_idf(self, unit: Unit) -> float:
        """The unit's IDF (:func:`loomsync.core.textsearch.frequency.idf` of :meth:`unit_freq`),
        rounded to :data:`IDF_DIGITS`; uniform when there are no statistics."""
        return frequency.idf(self.unit_freq(unit))


_cache: dict[str, tuple[float, Stats]] = {}


def _parse_elems(elems: str | None) -> list[str]:
    """The lexemes of ``most_common_elems`` read as text (``{a,"b c"}``; lexemes hold only
    letters, digits and marks, so never a quote or a comma)."""
    if not elems or elems == "{}":
        return []
    return [e.strip('"') for e in elems[1:-1].split(",")]


async def _average(session: AsyncSession, table: str, rows: float) -> float:
    if rows > SAMPLE_ROWS * 4:
        percent = min(100.0, 100.0 * SAMPLE_ROWS * 2 / rows)
        value = (
            await session.execute(
                text(_AVERAGE.format(table=table)), {"percent": percent, "rows": SAMPLE_ROWS}
            )
        ).scalar()
    else:
        value = (
            await session.execute(text(_AVERAGE_HEAD.format(table=table)), {"rows": SAMPLE_ROWS})
        ).scalar()
    return max(float(value), 1.0) if value is not None else 1.0


async def read(session: AsyncSession) -> Stats:
    """A fresh snapshot from the catalogue and a sample (three short statements)."""
    counts = (await session.execute(text(_COUNTS))).one()
    messages = max(float(counts.messages or 0), 0.0)
    threads = max(float(counts.threads or 0), 0.0)
    row = (await session.execute(text(_ELEMS))).first()
    freqs: dict[str, float] = {}
    floor = DEFAULT_FREQ
    if row is not None and row.freqs:
        lexemes = _parse_elems(row.elems)
        numbers = list(row.freqs)
        freqs = dict(zip(lexemes, numbers[: len(lexemes)], strict=False))
        if len(numbers) >= len(lexemes) + 2:
            floor = min(DEFAULT_FREQ, numbers[len(lexemes)] / 2)
    return Stats(
        messages=messages,
        freqs=freqs,
        floor=floor,
        message_length=await _average(session, "thread_messages", messages),
        thread_length=await _average(session, "threads", threads),
    )


async def current(session: AsyncSession, ttl: float = TTL_SECONDS) -> Stats:
    """The cached snapshot of this session's database, read again after ``ttl`` seconds
    (:data:`UNANALYSED_TTL_SECONDS` while it holds no statistics)."""
    key = str(session.get_bind().engine.url)
    now = time.monotonic()
    cached = _cache.get(key)
    if cached is not None:
        kept = ttl if cached[1].freqs else min(ttl, UNANALYSED_TTL_SECONDS)
        if now - cached[0] < kept:
            return cached[1]
    stats = await read(session)
    _cache[key] = (now, stats)
    return stats


def forget() -> None:
    """Drop every cached snapshot (tests; after a bulk load)."""
    _cache.clear()
