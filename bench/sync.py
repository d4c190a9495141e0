"""Issue 7: the cost of a turn stays flat as threads grow, measured against raw SQL.

    .venv/bin/python -m bench.sync [--only turns,reads,writes,list,coldstart] [--quick] [--no-record]

Five parts, each against a server this benchmark starts on this machine's PostgreSQL
(LOOMSYNC_BENCH_DATABASE_URL, default postgresql://postgres@127.0.0.1:5432/postgres), each in a
database of its own (``loomsync_bench_*``):

- ``turns``: per-turn cost curve, one turn appended to threads of 10 to 10,000 messages
  (bench/turns.py);
- ``reads``: GET of 1, 10 and 30 MB threads against the asyncpg floor (bench/reads.py);
- ``writes``: 32 concurrent writers, PUTs and appends, against the asyncpg floor
  (bench/writes.py);
- ``list``: first and deep pages for a user with 50,000 of 100,000 threads (bench/listing.py);
- ``coldstart``: ``loomsync-server serve`` with the embedded database to a ready server
  (bench/coldstart.py).

Prints each part's table and verdicts, appends them to bench/RESULTS.md with the command, the
machine and the date, and exits 1 when a target is missed. bench/README.md says how each figure
is produced and what bounds it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable

from bench import coldstart, listing, reads, turns, writes
from bench.harness import Section, postgres_version, record, server_dsn

PARTS: dict[str, Callable[..., Section]] = {
    "turns": turns.run,
    "reads": reads.run,
    "writes": writes.run,
    "list": listing.run,
    "coldstart": coldstart.run,
}


def main() -> None:
    """Run the chosen parts, print, record, and exit 1 if any target was missed. A part that
    fails is recorded as such, after the parts that finished, and its error is raised."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", default=",".join(PARTS), help="comma-separated parts")
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in PARTS]
    if unknown or not chosen:
        parser.error(f"choose one or more parts of {list(PARTS)} (got {args.only!r})")
    dsn = server_dsn()
    lines: list[str] = []
    missed = 0
    try:
        for name in chosen:
            started = time.monotonic()
            print(f"== {name} …", flush=True)
            try:
                section = PARTS[name](dsn, quick=args.quick)
            except BaseException as exc:
                lines += [f"# {name}: FAILED after {time.monotonic() - started:.0f} s: {exc!r}", ""]
                raise
            rendered = [*section.render()[:-1], f"({time.monotonic() - started:.0f} s)", ""]
            print("\n".join(rendered), flush=True)
            lines += rendered
            missed += sum(not met for _, met in section.targets)
    finally:
        if not args.no_record and lines:
            record(
                "Sync performance (issue 7)",
                "python -m bench.sync " + " ".join(sys.argv[1:]),
                lines,
                {
                    "PostgreSQL": asyncio.run(postgres_version(dsn)),
                    "Parts": ", ".join(chosen) + (" (quick)" if args.quick else ""),
                },
            )
    if missed:
        print(f"{missed} target(s) missed")
        sys.exit(1)


if __name__ == "__main__":
    main()
