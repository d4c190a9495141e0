"""Importer speed per agent (issue 28): ``python -m bench.importers [--sessions N] [--max-mb M]
[--record]``.

For every registered importer (:data:`loomsync.importers.FORMATS`, so the ones added later are
measured with no change here): its real files in ../shared/data/transcripts (each corpus folder
holding a file ``detect_format`` names it for) are replicated, folder and all (session folders,
SQLite stores with their ``-wal``), into a temporary folder until about ``--sessions`` session
units (files ``discover`` finds) or ``--max-mb`` megabytes, whichever comes first; hard links
where the filesystem allows (the bytes are read either way). Then, in the same run:

- **agent**: ``discover`` over the copies and ``parse`` of every unit: sessions (threads made)
  per second and MB per second;
- **floor**: reading the same files and JSON-parsing their bytes (``.jsonl`` line by line,
  other JSON as one document, falling back to lines; Markdown decoded), or for a SQLite database reading every
  row of every table read-only: the least any importer must do.

Target: each agent within :data:`TARGET_RATIO` times its floor (an importer builds documents,
pairs tool calls, redacts titles; ten times the bare parse is the most that is fair). Exits 1
when an agent misses it. ``--record`` appends the table to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.harness import record
from loomsync.importers import FORMATS, detect_format
from loomsync.importers.common import Importer

TRANSCRIPTS = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"
#: The most an agent may take, in times its floor.
TARGET_RATIO = 10.0
_SQLITE = b"SQLite format 3\x00"


def corpus_folders(importer: Importer) -> list[Path]:
    """The top-level corpus folders holding a file that ``detect_format`` names for
    ``importer`` (the same folders any new agent's sample files land in)."""
    folders = []
    for folder in sorted(p for p in TRANSCRIPTS.iterdir() if p.is_dir()):
        units = importer.discover(folder)
        if any(detect_format(unit) == importer.name for unit in units[:20]):
            folders.append(folder)
    return folders


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _link_tree(source: Path, target: Path) -> None:
    """``source``'s files under ``target``: hard links, copies where links are refused."""
    for path in source.rglob("*"):
        out = target / path.relative_to(source)
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            out.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, out)
            except OSError:
                shutil.copy2(path, out)


@dataclass
class Replica:
    """An agent's corpus replicated under ``root``: ``copies`` of its folders, ``units``
    session units and ``size`` bytes in all."""

    root: Path
    copies: int
    units: int
    size: int


def replicate(
    importer: Importer, folders: list[Path], root: Path, sessions: int, max_mb: float
) -> Replica:
    """Copy ``folders`` into ``root/copy-N/`` until about ``sessions`` units or ``max_mb`` MB."""
    units = sum(len(importer.discover(folder)) for folder in folders)
    size = sum(_size(folder) for folder in folders)
    copies = max(1, min(math.ceil(sessions / max(units, 1)), int(max_mb * 1e6 // max(size, 1))))
    for n in range(copies):
        for folder in folders:
            _link_tree(folder, root / f"copy-{n}" / folder.name)
    return Replica(root, copies, units * copies, size * copies)


def run_agent(importer: Importer, replica: Replica) -> tuple[float, int]:
    """Seconds for ``discover`` and ``parse`` of every unit, and the threads made."""
    started = time.perf_counter()
    threads = 0
    for unit in importer.discover(replica.root):
        threads += len(importer.parse(unit).threads)
    return time.perf_counter() - started, threads


def _parse_text(path: Path, data: bytes) -> None:
    if data.lstrip()[:1] not in (b"{", b"["):  # Markdown (Aider): reading it is the floor
        data.decode("utf-8", "replace")
        return
    if path.suffix != ".jsonl":
        try:
            json.loads(data)
            return
        except ValueError:
            pass
    for line in data.split(b"\n"):
        if line.strip():
            try:
                json.loads(line)
            except ValueError:
                continue


def _read_rows(path: Path) -> None:
    db = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)
    try:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for _ in db.execute(f'SELECT * FROM "{table}"'):
                pass
    except sqlite3.Error:
        pass
    finally:
        db.close()


def run_floor(replica: Replica) -> float:
    """Seconds to read and JSON-parse every file of the replica (SQLite: read every row)."""
    started = time.perf_counter()
    for path in sorted(replica.root.rglob("*")):
        if not path.is_file() or path.name.endswith(("-wal", "-shm")):
            continue
        data = path.read_bytes()
        if data.startswith(_SQLITE):
            _read_rows(path)
        else:
            _parse_text(path, data)
    return time.perf_counter() - started


def measure(sessions: int, max_mb: float) -> tuple[list[str], bool]:
    """The table lines and whether every agent met the target."""
    lines = [
        f"{'agent':<14} {'units':>6} {'threads':>8} {'MB':>7} | {'sess/s':>8} {'MB/s':>7}"
        f" | {'floor MB/s':>10} | {'x floor':>7} | target <= {TARGET_RATIO:.0f}x"
    ]
    ok = True
    for name, importer in FORMATS.items():
        folders = corpus_folders(importer)
        if not folders:
            lines.append(f"{name:<14} (no sample file in the corpus)")
            continue
        with tempfile.TemporaryDirectory(prefix=f"bench-importers-{name}-") as tmp:
            replica = replicate(importer, folders, Path(tmp), sessions, max_mb)
            floor = run_floor(replica)
            seconds, threads = run_agent(importer, replica)
        mb = replica.size / 1e6
        ratio = seconds / floor if floor > 0 else math.inf
        met = ratio <= TARGET_RATIO
        ok &= met
        lines.append(
            f"{name:<14} {replica.units:>6} {threads:>8} {mb:>7.1f} | {threads / seconds:>8.0f}"
            f" {mb / seconds:>7.1f} | {mb / floor:>10.1f} | {ratio:>6.1f}x | {'ok' if met else 'MISS'}"
        )
    return lines, ok


def main() -> None:
    """Parse the arguments, measure, print, maybe record, exit 1 on a missed target."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sessions", type=int, default=2000, help="session units per agent (about)"
    )
    parser.add_argument("--max-mb", type=float, default=100.0, help="most MB replicated per agent")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    lines, ok = measure(args.sessions, args.max_mb)
    sys.stdout.write("\n".join(lines) + "\n")
    if args.record:
        command = f"python -m bench.importers --sessions {args.sessions} --max-mb {args.max_mb:g} --record"
        record("Importers per agent vs read+JSON-parse floor (issue 28)", command, lines)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
