"""Secret detection quality (issue 12 item 2): recall on the labelled set, false positives on
real transcripts, speed; loomsync's redactor beside detect-secrets and trufflehog3.

``python -m bench.secrets_quality [--candidates loomsync,detect-secrets,...] [--labelled DIR]
[--transcripts DIR] [--show N] [--json] [--note TEXT] [--no-record]``

- Labelled set: ``tests/secrets/labelled`` of this tree (written before the detector was
  tuned; every value invented). Per candidate: recall per kind and overall (target >= 0.98),
  line recall, kind accuracy (loomsync only: the marker names the labelled kind), and every hard
  negative it alters (target: none). Scoring rules: :mod:`bench.secrets_score`.
- Real set: every file of ``../shared/data/transcripts`` that ``loomsync.importers`` imports
  (the others are listed as skipped); messages altered / messages (target under 1 in 1,000),
  every altered message as (file, message index, kind, masked context), and the time the
  candidate takes over the whole corpus (seconds, MB/s of UTF-8 text).
- ``loomsync`` is whatever ``import loomsync`` finds: run this from another tree (``cd
  <worktree> && python -m bench.secrets_quality``) to measure that tree's detector; the report
  names the file and its git commit.

Prints the tables (or, with ``--json``, one JSON document), appends them to RESULTS.md unless
``--no-record``, and exits 1 when loomsync misses a target.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.harness import ROOT, record
from bench.secrets_candidates import BUILDERS, Candidate
from bench.secrets_report import baseline, score_json, set_lines
from bench.secrets_score import (
    LabelledScore,
    RealScore,
    load_labelled,
    load_real,
    score_labelled,
    score_real,
)

LABELLED = ROOT / "tests" / "secrets" / "labelled"
#: The labelled sets scored by default (name, folder): issue 12's set, and issue 27's two
#: halves (tuned on, and held out: written before the detector was changed, scored both).
SETS = (
    ("main", LABELLED),
    ("issue27-tuning", LABELLED / "issue27"),
    ("issue27-heldout", LABELLED / "issue27" / "heldout"),
)
TRANSCRIPTS = ROOT.parent / "shared" / "data" / "transcripts"
RECALL_TARGET = 0.98
FP_TARGET = 1.0  # altered real messages per 1,000


def _commit(path: str) -> str:
    """``<short sha>[+dirty]`` of the git tree holding ``path``, or ``?``."""
    where = Path(path).parent
    try:
        sha = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return sha + ("+dirty" if dirty else "")


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def summary_lines(results: list[tuple[Candidate, LabelledScore, RealScore]]) -> list[str]:
    """The comparison table: one row a candidate."""
    head = (
        f"{'candidate':27} {'recall':>6} {'lines':>6} {'kinds':>6} {'negatives':>10} "
        f"{'real altered':>13} {'/1000':>6} {'s':>7} {'MB/s':>7}"
    )
    rows = [head]
    for cand, lab, real in results:
        rows.append(
            f"{cand.name:27} {lab.recall:6.3f} {lab.line_recall:6.3f} {_fmt(lab.kind_accuracy):>6} "
            f"{len(lab.altered):>4}/{lab.negatives:<5} "
            f"{real.altered_messages:>6}/{real.messages:<6} {real.per_thousand:6.2f} "
            f"{real.seconds:7.2f} {real.megabytes / max(real.seconds, 1e-9):7.2f}"
        )
    return rows


def kind_lines(results: list[tuple[Candidate, LabelledScore, RealScore]]) -> list[str]:
    """Recall by kind: caught/planted for each candidate."""
    kinds = sorted({k for _, lab, _ in results for k in lab.planted})
    widths = [max(9, len(c.name)) for c, _, _ in results]
    rows = [
        f"{'kind':22} "
        + " ".join(f"{c.name:>{w}}" for (c, _, _), w in zip(results, widths, strict=True))
    ]
    for kind in kinds:
        cells = [f"{lab.caught[kind]:>3}/{lab.planted[kind]:<3}" for _, lab, _ in results]
        rows.append(
            f"{kind:22} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))
        )
    return rows


def target_lines(results: list[tuple[Candidate, LabelledScore, RealScore]]) -> list[str]:
    """One met/MISSED line a target and candidate."""
    rows = []
    for cand, lab, real in results:
        rows.append(
            f"  [{'met' if lab.recall >= RECALL_TARGET else 'MISSED'}] {cand.name}: recall "
            f"{lab.recall:.3f} >= {RECALL_TARGET}"
        )
        rows.append(
            f"  [{'met' if real.per_thousand < FP_TARGET else 'MISSED'}] {cand.name}: "
            f"{real.per_thousand:.2f} real messages altered per 1000 < {FP_TARGET:g}"
        )
    return rows


def detail_lines(
    results: list[tuple[Candidate, LabelledScore, RealScore]], show: int | None
) -> list[str]:
    """What each candidate missed, named wrongly and altered (all of it, or for a report-only
    candidate the first ``show`` of each list)."""
    rows: list[str] = []
    for cand, lab, real in results:
        limit = None if cand.redact or show is None else show
        sections: list[tuple[str, Sequence[tuple[object, ...]]]] = [
            ("missed (case, kind, shape)", lab.missed),
            ("wrong kind (case, labelled, marker)", lab.wrong_kind),
            ("hard negatives altered (case, why, kinds)", lab.altered),
            ("real messages altered (file, message, kind, context)", real.altered),
        ]
        for title, items in sections:
            if not items:
                continue
            rows.append(f"{cand.name}: {title}: {len(items)}")
            rows += ["  " + " | ".join(map(str, item)) for item in items[:limit]]
            if limit is not None and len(items) > limit:
                rows.append(f"  ... {len(items) - limit} more (--show)")
    return rows


def _as_json(cand: Candidate, lab: LabelledScore, real: RealScore) -> dict[str, Any]:
    return {
        "candidate": cand.name,
        "version": cand.version,
        "recall": lab.recall,
        "line_recall": lab.line_recall,
        "kind_accuracy": lab.kind_accuracy,
        "by_kind": {k: [lab.caught[k], n] for k, n in sorted(lab.planted.items())},
        "missed": lab.missed,
        "wrong_kind": lab.wrong_kind,
        "negatives": lab.negatives,
        "negatives_altered": lab.altered,
        "real_messages": real.messages,
        "real_altered_messages": real.altered_messages,
        "real_per_thousand": real.per_thousand,
        "real_altered": real.altered,
        "seconds": real.seconds,
        "megabytes": real.megabytes,
    }


def _sets(folders: list[Path] | None) -> list[tuple[str, Path]]:
    """The labelled sets to score: ``--labelled`` folders, else :data:`SETS`."""
    if not folders:
        return list(SETS)
    return [(str(f.relative_to(LABELLED)) if f.is_relative_to(LABELLED) else str(f), f)
            for f in folders]  # fmt: skip


def main() -> None:
    """Parse arguments, run each candidate, print, record; exit 1 when loomsync misses."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--candidates", default=",".join(BUILDERS), help="comma-separated")
    parser.add_argument(
        "--labelled", type=Path, action="append", help="a labelled set folder (repeatable)"
    )
    parser.add_argument("--transcripts", type=Path, default=TRANSCRIPTS, help="real transcripts")
    parser.add_argument(
        "--baseline",
        default="main",
        help="git ref whose loomsync detector is scored beside this tree's ('' for none)",
    )
    parser.add_argument(
        "--show",
        type=int,
        default=None,
        help="list at most N details of each kind per report-only tool",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--note", default="", help="a line for the report, e.g. which tree")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()

    sets = [(name, load_labelled(folder)) for name, folder in _sets(args.labelled)]
    cases = sets[0][1]
    messages, skipped = load_real(args.transcripts)
    results, absent = [], []
    per_set: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in sets}
    for name in args.candidates.split(","):
        cand = BUILDERS[name]()
        if cand.missing:
            absent.append(f"{name}: {cand.missing}")
            continue
        print(f"running {name} ...", file=sys.stderr)
        scores = [(set_name, score_labelled(cand, items)) for set_name, items in sets]
        for set_name, score in scores:
            per_set[set_name].append(score_json(cand.name, score))
        results.append((cand, scores[0][1], score_real(cand, messages)))

    notes: list[str] = []
    before: dict[str, Any] | None = None
    if args.baseline:
        forwarded = ["--transcripts", str(args.transcripts)]
        for folder in args.labelled or ():
            forwarded += ["--labelled", str(folder)]
        before, note = baseline(args.baseline, ROOT, forwarded)
        notes.append(note)
        if before is not None:
            for set_name, rows in before["sets"].items():
                for row in rows:
                    per_set.setdefault(set_name, []).insert(0, {**row, "candidate": "loomsync@"
                                                                + args.baseline})  # fmt: skip

    positives = [c for c in cases if c.kind is not None]
    megabytes = (
        sum(len(t.encode("utf-8", "surrogatepass")) for m in messages for t in m.strings) / 1e6
    )
    loom = next((c for c, _, _ in results if c.name == "loomsync"), None)
    header = [
        f"labelled: {len(positives)} cases, {sum(len(c.planted) for c in positives)} planted "
        f"values in {len({c.kind for c in positives})} kinds, {len(cases) - len(positives)} "
        f"hard negatives ({_sets(args.labelled)[0][1]})",
        *(f"set {name}: {len(items)} cases ({sum(c.kind is None for c in items)} negatives)"
          for name, items in sets[1:]),
        f"real: {len(messages)} messages ({megabytes:.2f} MB of text) from {args.transcripts}; "
        f"skipped: {len(skipped)} files no importer recognises (listed with --json)",
    ]  # fmt: skip
    if loom is not None:
        header.append(f"loomsync: {loom.note} (git {_commit(loom.note)})")
    header += [f"not run: {line}" for line in absent]
    header += [f"note: {line}" for line in [*notes, args.note] if line]
    real_before = before["results"][0] if before and before["results"] else None
    if args.json:
        doc = {
            "header": header,
            "skipped": skipped,
            "results": [_as_json(*r) for r in results],
            "sets": per_set,
        }
        print(json.dumps(doc, indent=2))
    else:
        tables = [
            *summary_lines(results),
            *(_before_line(args.baseline, real_before) if real_before else []),
            "",
            *(line for name, rows in per_set.items() for line in [*set_lines(name, rows), ""]),
        ]
        lines = [
            *header,
            "",
            *tables,
            "targets:",
            *target_lines(results),
            "",
            *detail_lines(results, args.show),
        ]
        print("\n".join(lines))
        if not args.no_record:
            command = shlex.join(["python", "-m", "bench.secrets_quality", *sys.argv[1:]])
            record("Secret detection quality (issues 12 and 27)", command, [*header, "", *tables])
    own = [r for rows in per_set.values() for r in rows if r["candidate"] == "loomsync"]
    short = any(r["negatives_altered"] or r["recall"] < RECALL_TARGET for r in own)
    missed = [
        r
        for r in results
        if r[0].name == "loomsync"
        and (r[1].recall < RECALL_TARGET or r[2].per_thousand >= FP_TARGET or r[1].altered)
    ]
    sys.exit(1 if missed or short else 0)


def _before_line(name: str, real: dict[str, Any]) -> list[str]:
    """The baseline's row (git ref ``name``) of the real-transcripts table (no timing: it ran
    in another process)."""
    return [
        f"{'loomsync@' + name:27} {real['recall']:6.3f} {real['line_recall']:6.3f} "
        f"{_fmt(real['kind_accuracy']):>6} {len(real['negatives_altered']):>4}/"
        f"{real['negatives']:<5} {real['real_altered_messages']:>6}/{real['real_messages']:<6} "
        f"{real['real_per_thousand']:6.2f}"
    ]


if __name__ == "__main__":
    main()
