"""Cost of keeping JSON numbers as written (issue 11 item 9): parse + dump, before and after.

For each real thread of ``../shared/data/threads/`` (and two synthetic ones), the JSON work a
PUT does on the server — parse the body, dump every message, dump the rest of the document —
and the work a client save does — parse a thread file, dump it pretty — timed with the code
before the change (the standard library with the old hooks, copied below) and with
``loomsync.core.document.jsontext`` (what the server and client use now). Best of ``--repeat`` runs of
enough loops to take about 0.1 s, old and new alternately; no database, no HTTP: only the JSON layer changed.

Synthetic threads: ``numbers`` holds 20,000 ordinary integers and floats in tool arguments (the
parse hooks run once per number: the worst case for ordinary numbers); ``kept`` holds 2,000
numbers such as ``1E2`` and ``-0`` that Python would change (the simplejson path).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

from bench.harness import ROOT, record
from loomsync.core.document import jsontext

THREADS = ROOT.parent / "shared" / "data" / "threads"


# The code before the change (app/threads/documents.py and loomsync/core/document/codec.py at 8e1a649).
def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("a number is out of range")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def old_loads(data: bytes) -> Any:
    return json.loads(data, parse_float=_finite, parse_constant=_no_constant)


def old_dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def old_pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, separators=(",", ": "), allow_nan=False)


def new_dump(value: Any) -> str:
    return jsontext.dumps(value)


def new_pretty(value: Any) -> str:
    return jsontext.dumps(value, indent=2, separators=(",", ": "))


def server_put(
    loads: Callable[[bytes], Any], dump: Callable[[Any], str]
) -> Callable[[bytes], None]:
    """The JSON work of a PUT: parse the body, dump each message and the rest."""

    def run(body: bytes) -> None:
        doc = loads(body)
        messages = doc.get("conversation", {}).pop("messages", [])
        for message in messages:
            dump(message)
        dump(doc)

    return run


def client_save(
    loads: Callable[[bytes], Any], pretty: Callable[[Any], str]
) -> Callable[[bytes], None]:
    """The JSON work of a client save of a thread read from its file."""

    def run(body: bytes) -> None:
        pretty(loads(body))

    return run


def best_ms(
    old: Callable[[bytes], None], new: Callable[[bytes], None], body: bytes, repeat: int
) -> tuple[float, float]:
    """Best time of one call of ``old`` and of ``new``, in milliseconds: ``repeat`` rounds,
    each timing both (alternately, so a busy machine slows both alike) for ~0.1 s of CPU
    time (process time: time spent waiting for a core on a shared machine is left out)."""
    timers = [
        timeit.Timer(lambda run=run: run(body), timer=time.process_time) for run in (old, new)
    ]
    loops = max(1, timers[1].autorange()[0] // 2)
    best = [math.inf, math.inf]
    for _ in range(repeat):
        for index, timer in enumerate(timers):
            best[index] = min(best[index], timer.timeit(loops) / loops * 1000)
    return best[0], best[1]


def synthetic(kind: str) -> bytes:
    """A thread whose tool arguments hold many ordinary (``numbers``) or kept (``kept``) numbers."""
    if kind == "numbers":
        args = "[" + ",".join(f"{i},{i}.5" for i in range(10_000)) + "]"
    else:
        args = "[" + ",".join("1E2,-0" for _ in range(1_000)) + "]"
    message = f'{{"role":"assistant","content":"x","tool_calls":[{{"arguments_json":{args}}}]}}'
    return f'{{"conversation":{{"messages":[{message}]}}}}'.encode()


def measure(repeat: int) -> list[str]:
    """One line per thread: size, then old/new milliseconds for server PUT and client save."""
    bodies = [(p.name[:14], p.read_bytes()) for p in sorted(THREADS.glob("T-*.json"))]
    bodies += [("synthetic:nums", synthetic("numbers")), ("synthetic:kept", synthetic("kept"))]
    old_put, new_put = server_put(old_loads, old_dump), server_put(jsontext.loads, new_dump)
    old_save, new_save = client_save(old_loads, old_pretty), client_save(jsontext.loads, new_pretty)
    header = f"{'thread':15} {'KB':>6} | {'PUT old ms':>10} {'new ms':>8} {'ratio':>6} | "
    header += f"{'save old ms':>11} {'new ms':>8} {'ratio':>6}"
    lines = [header]
    total = {"put_old": 0.0, "put_new": 0.0, "save_old": 0.0, "save_new": 0.0}
    for name, body in bodies:
        try:
            put_old, put_new = best_ms(old_put, new_put, body, repeat)
            save_old, save_new = best_ms(old_save, new_save, body, repeat)
        except ValueError:  # the old code refuses it (a number out of range)
            put_old = save_old = math.nan
            put_new = best_ms(new_put, new_put, body, repeat)[1]
            save_new = best_ms(new_save, new_save, body, repeat)[1]
        if not name.startswith("synthetic"):
            total["put_old"] += put_old
            total["put_new"] += put_new
            total["save_old"] += save_old
            total["save_new"] += save_new
        lines.append(
            f"{name:15} {len(body) / 1024:6.0f} | {put_old:10.3f} {put_new:8.3f} "
            f"{put_new / put_old:6.2f} | {save_old:11.3f} {save_new:8.3f} {save_new / save_old:6.2f}"
        )
    lines.append(
        f"{'real (sum)':15} {'':6} | {total['put_old']:10.3f} {total['put_new']:8.3f} "
        f"{total['put_new'] / total['put_old']:6.2f} | {total['save_old']:11.3f} "
        f"{total['save_new']:8.3f} {total['save_new'] / total['save_old']:6.2f}"
    )
    return lines


def main() -> None:
    """Measure, print, and append to RESULTS.md."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15, help="rounds per case (best is kept)")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    lines = measure(args.repeat)
    print("\n".join(lines))
    if not args.no_record:
        record(
            "JSON numbers kept as written (issue 11 item 9): parse + dump before and after",
            "python -m bench.jsonnumbers " + " ".join(sys.argv[1:]),
            lines,
        )


if __name__ == "__main__":
    main()
