"""Search quality (issue 14 item 1): nDCG@10, recall@10 and MRR on judged queries over the real
transcripts, for loomsync's server and local search and two baselines.

    .venv/bin/python -m bench.search_quality [--systems server,local,bm25,fts5] [--json]
        [--details] [--no-record]

The corpus is every thread loomsync's importers read from ../shared/data/transcripts/ (59 threads,
2,526 messages; bench/search_judged/README.md says why ../shared/data/threads/ is not loaded
again). The queries and their message-level judgments are bench/search_judged/queries.jsonl.
Systems and how each is run: bench/quality_systems.py; metrics: bench/quality_judged.py.
Prints a thread-level and a message-level table (per query type, overall, and the tune and
held-out splits) and the share of returned snippets that highlight nothing; ``--json`` prints
everything, per query included, as JSON instead; ``--details`` adds each query's thread nDCG
per system. Appends the tables to bench/RESULTS.md unless ``--no-record`` (or ``--json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.harness import record
from bench.quality_judged import K, Query, aggregate, load_queries, score
from bench.quality_systems import (
    Answer,
    Bm25Search,
    Fts5Search,
    Search,
    load_corpus,
    local_search,
    server_search,
)
from loomsync.core.document.model import Thread

SYSTEMS = ("server", "local", "bm25", "fts5")
TYPES = ("identifier", "keywords", "paraphrase", "morphology", "tool_output", "non_english")
ROWS = ("overall", "tune", "heldout", *TYPES)


def start(name: str, threads: list[Thread], stack: ExitStack) -> Search:
    """Build system ``name`` over ``threads``; whatever it holds open is closed by ``stack``."""
    if name == "server":
        return stack.enter_context(server_search(threads))
    if name == "local":
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="loomsync-quality-"))
        return local_search(threads, Path(folder))
    if name == "bm25":
        return Bm25Search(threads)
    if name == "fts5":
        return Fts5Search(threads)
    raise ValueError(f"unknown system {name!r}")


def snippet_share(answers: Iterator[list[Answer]]) -> dict[str, float]:
    """Of the top-K hits that carry a snippet: how many, and the share with no ``<b>``."""
    snippets = [a.snippet for hits in answers for a in hits[:K] if a.snippet is not None]
    blank = sum(1 for s in snippets if "<b>" not in s)
    return {"snippets": len(snippets), "unhighlighted": blank / len(snippets) if snippets else 0.0}


def evaluate(search: Search, queries: list[Query]) -> dict[str, Any]:
    """Run every query on one system: groups, snippet share, and per query its metrics and top
    hits as ``[thread, message, snippet, score]``."""
    answers = [search(q.text) for q in queries]
    scores = [
        score(q, [(a.thread, a.message) for a in hits])
        for q, hits in zip(queries, answers, strict=True)
    ]
    return {
        "groups": aggregate(queries, scores),
        "snippets": snippet_share(iter(answers)),
        "queries": {
            q.id: {
                "metrics": s,
                "top": [[a.thread, a.message, a.snippet, a.score] for a in hits[:K]],
            }
            for q, s, hits in zip(queries, scores, answers, strict=True)
        },
    }


def table(results: dict[str, dict[str, Any]], level: str) -> list[str]:
    """One table: a row per group, nDCG@10 / recall@10 / MRR per system, at ``level``."""
    names = list(results)
    head = f"{level + ' level':<13}{'n':>3} |" + "|".join(f" {n:<17}" for n in names)
    sub = f"{'':<16} |" + "|".join(f" {'nDCG  R@10   MRR':<17}" for _ in names)
    lines = [head, sub]
    for row in ROWS:
        cells = []
        n = 0
        for name in names:
            group = results[name]["groups"].get(row)
            if group is None:
                cells.append(f" {'-':<17}")
                continue
            n = int(group["n"])
            values = (group[f"{level}_{m}"] for m in ("ndcg", "recall", "mrr"))
            cells.append(" " + "  ".join(f"{v:4.2f}" for v in values).ljust(17))
        lines.append(f"{row:<13}{n:>3} |" + "|".join(cells))
    return lines


def details(results: dict[str, dict[str, Any]], queries: list[Query]) -> list[str]:
    """A line per query: id, type, split, thread nDCG@10 per system, the query text."""
    names = list(results)
    lines = [
        f"{'id':<4} {'type':<11} {'split':<7} " + " ".join(f"{n:>6}" for n in names) + "  query"
    ]
    for q in queries:
        values = " ".join(
            f"{results[n]['queries'][q.id]['metrics']['thread_ndcg']:6.2f}" for n in names
        )
        lines.append(f"{q.id:<4} {q.type:<11} {q.split:<7} {values}  {q.text}")
    return lines


def main() -> None:
    """Parse arguments, build the systems, score them, print and record."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset")
    parser.add_argument("--json", action="store_true", help="print JSON (nothing is recorded)")
    parser.add_argument("--details", action="store_true", help="also each query's thread nDCG")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    names = [n for n in args.systems.split(",") if n]
    queries = load_queries()
    threads = load_corpus()
    messages = sum(len(t.messages) for t in threads)
    corpus = (
        f"{len(threads)} threads, {messages} messages (importers over ../shared/data/transcripts)"
    )
    results: dict[str, dict[str, Any]] = {}
    with ExitStack() as stack:
        for name in names:
            print(f"building {name} …", file=sys.stderr, flush=True)
            results[name] = evaluate(start(name, threads, stack), queries)
    if args.json:
        print(json.dumps({"corpus": corpus, "queries": len(queries), "k": K, "systems": results}))
        return
    lines = [*table(results, "thread"), "", *table(results, "message"), ""]
    lines.append("snippets without a highlight (top 10): " + ", ".join(
        f"{n} {r['snippets']['unhighlighted']:.0%} of {r['snippets']['snippets']}"
        for n, r in results.items() if r["snippets"]["snippets"]
    ))  # fmt: skip
    if args.details:
        lines += ["", *details(results, queries)]
    print("\n".join(lines))
    if not args.no_record:
        record(
            "Search quality (issue 14 item 1)",
            "python -m bench.search_quality " + " ".join(sys.argv[1:]),
            lines,
            {"Corpus": corpus, "Queries": f"{len(queries)} judged (bench/search_judged)"},
        )


if __name__ == "__main__":
    main()
