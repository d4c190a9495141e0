"""What an ``Idempotency-Key`` costs an append (issue 11 item 10): one writer, one thread.

A fresh database and a real one-worker uvicorn. One client (``httpx.Client``, one connection)
appends one real turn (user, assistant, two tool results: the same four messages each time) to
a thread of its own, ``--rounds`` times per variant, interleaved round by round (the order
alternating) so drift falls on every variant alike:

- *no key*: the append as before;
- *new key*: with a fresh ``Idempotency-Key`` (one more statement: the answer inserted in the
  write's transaction);
- *replay*: the previous keyed append sent again: its write is refused (the base version moved
  on: the 409 path, which renders the current thread), rolled back, and the stored answer
  looked up and replayed. A retry is rare; it costs a refused write.

Reported per variant: server time (``Server-Timing``) and client time, p50 and p95, in ms, and
the machine's load average (other work on it moves every figure). Target: a keyed append's
server p50 at most 1.5 x an unkeyed one's (one statement more than its four to six).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from typing import Any

import httpx

from app.auth import create_token
from app.config import Settings
from bench.harness import (
    Section,
    fresh_database,
    percentiles,
    record,
    server_dsn,
    server_ms,
    uvicorn_server,
)
from bench.realdata import real_messages
from loomsync.core.document.ids import ThreadId

DATABASE = "loomsync_bench_idempotency"
TARGET_RATIO = 1.5
VARIANTS = ("no key", "new key", "replay")


def _turn() -> list[dict[str, Any]]:
    pool = real_messages()
    return [pool[kind][0] for kind in ("user", "assistant", "tool", "tool") if kind in pool]


def run(dsn_server: str, *, rounds: int) -> Section:
    """Measure ``rounds`` appends per variant; the section with the table and the target."""
    dsn = fresh_database(dsn_server, DATABASE)
    samples: dict[str, tuple[list[float], list[float]]] = {v: ([], []) for v in VARIANTS}
    turn = {"messages": _turn()}
    with uvicorn_server(dsn) as (base, secret):
        settings = Settings(jwt_secret=secret, _env_file=None)  # type: ignore[call-arg]
        auth = {"Authorization": f"Bearer {create_token(settings, 'appender')}"}
        with httpx.Client(base_url=base, headers=auth, timeout=60) as client:
            tid = ThreadId.new()
            created = client.put(f"/api/threads/{tid}", json={"id": str(tid)})
            created.raise_for_status()
            version = 1
            url = f"/api/threads/{tid}/messages"

            def append(key: str | None, base_version: int, variant: str) -> int:
                headers = {"If-Match": f'"{base_version}"'}
                if key is not None:
                    headers["Idempotency-Key"] = key
                start = time.perf_counter()
                response = client.post(url, json=turn, headers=headers)
                elapsed = (time.perf_counter() - start) * 1000
                response.raise_for_status()
                samples[variant][0].append(server_ms(response))
                samples[variant][1].append(elapsed)
                return int(response.json()["version"])

            for i in range(rounds + 3):  # 3 warm-up rounds
                if i == 3:
                    for server, client_ms in samples.values():
                        server.clear()
                        client_ms.clear()
                key = str(uuid.uuid4())
                if i % 2:
                    version = append(None, version, "no key")
                    keyed_base = version
                    version = append(key, keyed_base, "new key")
                else:
                    keyed_base = version
                    version = append(key, keyed_base, "new key")
                    version = append(None, version, "no key")
                append(key, keyed_base, "replay")
    load = os.getloadavg()
    section = Section(f"bench.idempotency: one append, {rounds} rounds")
    section.lines.append(
        f"{'variant':<10} {'server p50':>11} {'server p95':>11} {'client p50':>11} "
        f"{'client p95':>11}"
    )
    p50s = {}
    for variant, (server, client_ms) in samples.items():
        s50, s95 = percentiles(server)
        c50, c95 = percentiles(client_ms)
        p50s[variant] = s50
        section.lines.append(f"{variant:<10} {s50:>11.2f} {s95:>11.2f} {c50:>11.2f} {c95:>11.2f}")
    section.lines.append("load average (1, 5, 15 min): " + ", ".join(f"{x:.1f}" for x in load))
    ratio = p50s["new key"] / p50s["no key"]
    section.target(
        f"keyed append server p50 {p50s['new key']:.2f} ms = {ratio:.2f} x unkeyed "
        f"{p50s['no key']:.2f} ms (at most {TARGET_RATIO:g} x)",
        ratio <= TARGET_RATIO,
    )
    return section


def main() -> None:
    """``python -m bench.idempotency [--rounds N] [--no-record]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300, help="appends per variant")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    args = parser.parse_args()
    section = run(server_dsn(), rounds=args.rounds)
    lines = section.render()
    print("\n".join(lines))
    if not args.no_record:
        record(section.title, " ".join(["python -m bench.idempotency", *sys.argv[1:]]), lines)
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


if __name__ == "__main__":
    main()
