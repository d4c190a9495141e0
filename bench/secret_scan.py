"""What the server's secret scan (``LOOMSYNC_SECRET_SCAN``, issue 12 item 4) costs a write.

    .venv/bin/python -m bench.secret_scan [--quick] [--no-record]

1. **The scan alone**, in this process: :meth:`app.threads.scanning.SecretScan.scan` (redact)
   of the bodies the write path scans, none holding a credential (the common case: one pass of
   the detector, the body returned as is), median of repeated runs: an append of one real turn
   (4 messages, as bench.writes), a PUT of a new small thread (a real thread's metadata and
   that turn), and a PUT of each real thread of ``../shared/data/threads`` whole (the scan of
   a PUT is O(body); a real thread holding a finding, such as a placeholder key that the
   detector flags, is measured redacted); with ``off`` the scan is one comparison.
2. **Server time a request**, redact against off: two in-process apps (``httpx.ASGITransport``)
   on one fresh database, requests alternating between them so that machine noise falls on
   both; the median of each one's ``Server-Timing`` for appends of one turn, PUTs of a new
   small thread, and PUT replaces of the largest real thread (each a new version).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import time
from typing import Any

import httpx
from prometheus_client import CollectorRegistry, Counter

from app.auth import create_token
from app.config import Settings
from app.database import migrate_async
from app.main import create_app
from app.threads.scanning import SecretScan
from bench.corpus import REAL_THREADS
from bench.harness import Section, fresh_database, record, server_ms
from bench.harness import server_dsn as default_server_dsn
from bench.writes import _turn, new_thread_doc
from loomsync.core.document.ids import ThreadId
from loomsync.core.secrets import default_redactor

DATABASE = "loomsync_bench_secret_scan"


def _scan_us(scan: SecretScan, body: Any, runs: int) -> float:
    """Median microseconds of ``scan.scan(body)`` over ``runs`` runs."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        scan.scan(body)
        samples.append((time.perf_counter() - started) * 1e6)
    return statistics.median(samples)


def scan_alone(section: Section, runs: int) -> None:
    """Part 1: the scan's CPU per body, redact and off."""
    counter = Counter("bench_secrets", "-", ("kind", "action"), registry=CollectorRegistry())
    redact = SecretScan("redact", default_redactor(), counter)
    off = SecretScan("off", default_redactor(), counter)
    bodies: list[tuple[str, Any]] = [
        ("append, one turn", {"messages": _turn(1)}),
        ("PUT, new small thread", new_thread_doc(1)),
    ]
    for path in sorted(REAL_THREADS.glob("T-*.json")):
        bodies.append((f"PUT, real {path.name[:15]}…", json.loads(path.read_text())))
    section.lines.append(f"{'body':<34} {'bytes':>9} {'redact µs':>10} {'off µs':>7} {'MB/s':>6}")
    for name, found in bodies:
        body = redact.scan(found).value  # a body with findings is measured once redacted
        size = len(json.dumps(body).encode())
        many = runs if size < 100_000 else max(5, runs // 20)
        took = _scan_us(redact, body, many)
        section.lines.append(
            f"{name:<34} {size:>9,} {took:>10.1f} {_scan_us(off, body, many):>7.2f}"
            f" {size / took:>6.1f}"
        )


async def server_times(dsn: str, requests: int) -> dict[str, dict[str, float]]:
    """Part 2: median server milliseconds a request of each workload, by mode."""
    await migrate_async(dsn)
    jwt = secrets.token_urlsafe(48)
    apps = {
        mode: create_app(
            Settings(  # type: ignore[call-arg]
                database_url=dsn,
                jwt_secret=jwt,
                rate_limit="off",
                secret_scan=mode,
                _env_file=None,
            )
        )
        for mode in ("redact", "off")
    }
    settings = apps["off"].state.settings
    headers = {"Authorization": f"Bearer {create_token(settings, 'bench-scan')}"}
    big = max(REAL_THREADS.glob("T-*.json"), key=lambda p: p.stat().st_size)
    big_doc = default_redactor().redact_value(json.loads(big.read_text()))
    big_doc = {k: v for k, v in big_doc.items() if k not in ("id", "version")}
    times: dict[str, dict[str, list[float]]] = {m: {} for m in apps}
    clients = {
        mode: httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b")
        for mode, app in apps.items()
    }
    state: dict[str, dict[str, Any]] = {}
    try:
        for mode, client in clients.items():
            tid, big_id = ThreadId.new(), ThreadId.new()
            await client.put(f"/api/threads/{tid}", json=new_thread_doc(0), headers=headers)
            await client.put(f"/api/threads/{big_id}", json=big_doc, headers=headers)
            state[mode] = {"tid": tid, "version": 1, "big": big_id, "big_version": 1}
        for i in range(requests):
            for mode, client in clients.items():
                s = state[mode]
                appended = await client.post(
                    f"/api/threads/{s['tid']}/messages",
                    json={"messages": _turn(i)},
                    headers={**headers, "If-Match": f'"{s["version"]}"'},
                )
                assert appended.status_code == 200, appended.text
                s["version"] += 1
                put = await client.put(
                    f"/api/threads/{ThreadId.new()}", json=new_thread_doc(i), headers=headers
                )
                assert put.status_code == 201, put.text
                times[mode].setdefault("append, one turn", []).append(server_ms(appended))
                times[mode].setdefault("PUT, new small thread", []).append(server_ms(put))
                if i % 5 == 0:
                    replaced = await client.put(
                        f"/api/threads/{s['big']}",
                        json={**big_doc, "version": s["big_version"]},
                        headers=headers,
                    )
                    assert replaced.status_code == 200, replaced.text
                    s["big_version"] += 1
                    label = f"PUT replace, {big.stat().st_size // 1024} KiB thread"
                    times[mode].setdefault(label, []).append(server_ms(replaced))
    finally:
        for mode, client in clients.items():
            await client.aclose()
            await apps[mode].state.engine.dispose()
    return {m: {k: statistics.median(v) for k, v in w.items()} for m, w in times.items()}


def run(server_dsn: str, *, quick: bool = False) -> Section:
    """Both parts; no targets (the cost is reported beside the write path's, bench.writes)."""
    section = Section("Secret scan on the write path (issue 12 item 4), nothing found")
    scan_alone(section, 50 if quick else 400)
    medians = asyncio.run(server_times(fresh_database(server_dsn, DATABASE), 40 if quick else 300))
    section.lines += ["", f"{'server time, median':<34} {'redact ms':>10} {'off ms':>7} {'+ms':>6}"]
    for workload, off_ms in medians["off"].items():
        redact_ms = medians["redact"][workload]
        section.lines.append(
            f"{workload:<34} {redact_ms:>10.2f} {off_ms:>7.2f} {redact_ms - off_ms:>+6.2f}"
        )
    return section


def main() -> None:
    """``python -m bench.secret_scan``: run, print, and record in bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--no-record", action="store_true", help="print only")
    args = parser.parse_args()
    section = run(default_server_dsn(), quick=args.quick)
    lines = section.render()
    print("\n".join(lines))
    if not args.no_record:
        command = "python -m bench.secret_scan" + (" --quick" if args.quick else "")
        record(section.title, command, lines)
    sys.exit(0)


if __name__ == "__main__":
    main()
