"""False positives of the secret detector on random text (issue 12 item 2, found by CI).

``python -m bench.secrets_random [--strings N] [--length L] [--seed S] [--no-record]``

Random strings are what transcripts carry in bulk besides prose: base64 image data, hashes,
nonces, minified bundles, ids. A credential's prefix (``sk-``, ``AIza``, ``ghp_``) turns up inside
such a string by chance, and a rule that does not look at its neighbours then cuts the string
up. For each alphabet (URL-safe base64, standard base64, hex, letters and digits) this makes
``N`` seeded random strings of ``L`` characters and prints how many the redactor alters (target:
none), with the kinds it claimed. Exits 1 when any string is altered.
"""

from __future__ import annotations

import argparse
import collections
import random
import string
import sys

from bench.harness import record
from loomsync.core.secrets import default_redactor

ALPHABETS = {
    "urlsafe": string.ascii_letters + string.digits + "-_",
    "base64": string.ascii_letters + string.digits + "+/",
    "hex": "0123456789abcdef",
    "alnum": string.ascii_letters + string.digits,
}


def measure(
    strings: int, length: int, seed: int
) -> list[tuple[str, int, collections.Counter[str]]]:
    """``(alphabet, strings altered, kinds found)`` per alphabet."""
    redactor = default_redactor()
    rows = []
    for name, alphabet in ALPHABETS.items():
        rng = random.Random(f"{seed}-{name}")
        kinds: collections.Counter[str] = collections.Counter()
        altered = 0
        for _ in range(strings):
            found = redactor.find("".join(rng.choices(alphabet, k=length)))
            altered += bool(found)
            kinds.update(finding.kind for finding in found)
        rows.append((name, altered, kinds))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run, print, record; 1 when a random string was altered."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--strings", type=int, default=1000)
    parser.add_argument("--length", type=int, default=8000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args(argv)
    rows = measure(args.strings, args.length, args.seed)
    lines = [f"{'alphabet':10} {'altered':>9}  kinds"]
    for name, altered, kinds in rows:
        lines.append(f"{name:10} {altered:>4}/{args.strings:<4}  {dict(kinds) or '-'}")
    print("\n".join(lines))
    if not args.no_record:
        command = f"python -m bench.secrets_random --strings {args.strings} --length {args.length}"
        record("Secret detector on random strings (false positives)", command, lines)
    return 1 if any(altered for _, altered, _ in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
