"""Tuning aid for the ranking constants (issue 14): the server's ranking statement run
in-process on the database bench.search_quality leaves behind, for a grid of constants.

    .venv/bin/python -m bench.search_tune [--analyze] [--heldout] [--set NAME=VALUE ...]

Run ``bench.search_quality --systems server`` once first (it loads ``loomsync_bench_quality``).
Prints thread and message nDCG@10 per type on the **tune** split only, unless ``--heldout``
(reporting, never for choosing constants). ``--set`` overrides a constant of
:mod:`loomsync.core.textsearch.scoring` (``K1=1.5``, ``SPREAD=0.3``, ``MESSAGE_WEIGHTS.D=0.2``).
No timing; the statement is :func:`app.threads.ranking.scored_hits`, as the API runs it.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

from app.auth import Principal
from app.config import normalize_database_url
from app.threads import searchstats
from app.threads.ranking import SearchFilters, plan_ranking, scored_hits
from bench.harness import database_dsn, server_dsn
from bench.quality_judged import aggregate, load_queries, score
from bench.quality_systems import DATABASE
from loomsync.core.textsearch import scoring
from loomsync.core.textsearch.commits import commit_prefix, with_hex_prefix
from loomsync.core.textsearch.query import parse

PRINCIPAL = Principal(user_id="quality", org_id="quality", roles=frozenset())


def apply(setting: str) -> None:
    """Set one constant of :mod:`loomsync.core.textsearch.scoring` (``NAME=VALUE`` or
    ``DICT.KEY=VALUE``)."""
    name, value = setting.split("=", 1)
    if "." in name:
        table, key = name.split(".", 1)
        getattr(scoring, table)[key] = float(value)
    else:
        setattr(scoring, name, float(value))


async def rank(session: AsyncSession, q: str, stats: searchstats.Stats) -> list[tuple[str, Any]]:
    """The top 20 (thread id, best message seq) of ``q``, as the API ranks them."""
    query = with_hex_prefix(parse(q), commit_prefix(q))
    ranking = plan_ranking(query, stats)
    statement = scored_hits(PRINCIPAL, query, ranking, SearchFilters(), None, 20, commit_prefix(q))
    rows = (await session.execute(statement)).all()
    return [(str(r.id), r.best_seq) for r in rows]


async def main_async(args: argparse.Namespace) -> None:
    engine = create_async_engine(normalize_database_url(database_dsn(server_dsn(), DATABASE)))
    async with engine.connect() as conn:
        if args.analyze:
            autocommit = await conn.execution_options(isolation_level="AUTOCOMMIT")
            await autocommit.execute(text("ANALYZE"))
    queries = [q for q in load_queries() if (q.split == "heldout") == args.heldout]
    async with AsyncSession(engine) as session:
        stats = await searchstats.read(session)
        scores = []
        for q in queries:
            hits = await rank(session, q.text, stats)
            scores.append(score(q, [(f"T-{t}", m) for t, m in hits]))
    await engine.dispose()
    groups = aggregate(queries, scores)
    print(f"stats: N={stats.messages:.0f} listed={len(stats.freqs)} floor={stats.floor:.5f}")
    for name in ["overall", *sorted({q.type for q in queries})]:
        g = groups[name]
        print(
            f"{name:12} {g['n']:3.0f} thread {g['thread_ndcg']:.3f}  message {g['message_ndcg']:.3f}"
        )
    if args.details:
        for q, s in zip(queries, scores, strict=True):
            print(f"{q.id} {q.type:12} {s['thread_ndcg']:.2f} {s['message_ndcg']:.2f} {q.text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--analyze", action="store_true")
    parser.add_argument("--heldout", action="store_true")
    parser.add_argument("--details", action="store_true")
    parser.add_argument("--set", action="append", default=[])
    args = parser.parse_args()
    for setting in args.set:
        apply(setting)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
