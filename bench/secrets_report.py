"""Tables of bench.secrets_quality (issue 27 item 2): per labelled set, recall per kind and
false positives per class of non-secret, precision, for each candidate and for the detector
of a baseline git ref (``loomsync@main``: before) beside this tree's (``loomsync``: after).

Every table reads the JSON form of a score (:func:`score_json`), so a baseline measured in
another process (its own ``loomsync`` on ``sys.path``) is printed like the others.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

from bench.secrets_score import LabelledScore

Row = dict[str, Any]


def score_json(name: str, score: LabelledScore) -> Row:
    """A candidate's score on one labelled set as JSON (what every table reads)."""
    kinds = sorted(set(score.true_findings) | set(score.false_findings))
    return {
        "candidate": name,
        "recall": score.recall,
        "precision": score.precision,
        "kind_accuracy": score.kind_accuracy,
        "by_kind": {k: [score.caught[k], n] for k, n in sorted(score.planted.items())},
        "by_class": {c: [score.altered_by_class[c], n] for c, n in sorted(score.by_class.items())},
        "negatives": score.negatives,
        "negatives_altered": len(score.altered),
        "kind_precision": {k: score.kind_precision(k) for k in kinds},
        "missed": score.missed,
        "altered": score.altered,
    }


def _cells(rows: list[Row], key: str, item: str) -> list[str]:
    out = []
    for row in rows:
        pair = row[key].get(item)
        out.append("-" if pair is None else f"{pair[0]}/{pair[1]}")
    return out


def _table(head: str, names: list[str], lines: list[tuple[str, list[str]]]) -> list[str]:
    widths = [max(9, len(n)) for n in names]
    rows = [f"{head:24} " + " ".join(f"{n:>{w}}" for n, w in zip(names, widths, strict=True))]
    for label, cells in lines:
        rows.append(
            f"{label:24} " + " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True))
        )
    return rows


def set_lines(title: str, rows: list[Row]) -> list[str]:
    """One labelled set: recall and precision per candidate, then caught/planted per kind
    (recall per class of credential) and altered/total per class of non-secret (its false
    positives; a class altered nowhere is precision 1 for it)."""
    names = [r["candidate"] for r in rows]
    kinds = sorted({k for r in rows for k in r["by_kind"]})
    classes = sorted({c for r in rows for c in r["by_class"]})
    out = [f"== {title}"]
    out += _table(
        "candidate",
        names,
        [
            ("recall", [f"{r['recall']:.3f}" for r in rows]),
            ("precision", [f"{r['precision']:.3f}" for r in rows]),
            ("negatives altered", [f"{r['negatives_altered']}/{r['negatives']}" for r in rows]),
        ],
    )
    if kinds:
        out += ["", "recall per kind (caught/planted):"]
        out += _table("kind", names, [(k, _cells(rows, "by_kind", k)) for k in kinds])
    if classes:
        out += ["", "false positives per class of non-secret (altered/cases):"]
        out += _table("class", names, [(c, _cells(rows, "by_class", c)) for c in classes])
    for row in rows:
        if not row["candidate"].startswith("loomsync"):
            continue
        precise = ", ".join(
            f"{k} {'-' if p is None else f'{p:.2f}'}" for k, p in row["kind_precision"].items()
        )
        out.append(f"{row['candidate']} precision per marker kind: {precise or '-'}")
        for case, kind, shape in row["missed"]:
            out.append(f"  {row['candidate']} missed: {case} ({kind}, {shape})")
        for case, why, kinds in row["altered"]:
            out.append(f"  {row['candidate']} altered: {case} ({why}) [{kinds}]")
    return out


def baseline(ref: str, root: Path, args: list[str]) -> tuple[dict[str, Any] | None, str]:
    """Run this benchmark (``--candidates loomsync --json``, with ``args``) on the ``loomsync``
    package of git ``ref`` (extracted by ``git archive`` into a temporary folder that comes
    first on ``sys.path``; the benchmark and the labelled sets stay this tree's): its JSON
    document and a note, or None and why it could not run."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(root), "archive", "--format=tar", ref, "loomsync"],
            capture_output=True,
            check=True,
        ).stdout
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", ref],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        return None, f"baseline {ref}: git archive failed ({error})"
    with tempfile.TemporaryDirectory(prefix="secrets-baseline-") as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(root)])}
        command = [sys.executable, "-m", "bench.secrets_quality", "--candidates", "loomsync"]
        command += ["--json", "--no-record", "--baseline", "", *args]
        done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True)
    if not done.stdout.strip():
        return None, f"baseline {ref}: failed: {done.stderr.strip()[-400:]}"
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc, f"loomsync@{ref} is the detector of git {ref} ({sha}): before; loomsync: after"
