"""The viewer's first page (issue 13): time to first byte and to the full page, and the HTML
bytes of the first page, for a 699-message real thread and a 10,000-message thread.

    .venv/bin/python -m bench.viewer [--quick] [--record]

Recreates the database ``loomsync_bench_viewer``, runs a real uvicorn (one worker) and PUTs,
as public threads, the longest real thread of ``../shared/data/threads/`` (699 messages) and a
10,000-message thread of the same real messages repeated in order (so both first pages show the
same 50 messages, and any difference in their bytes comes from the thread's length). Then, per
thread:

- HTTP (httpx, one kept-alive connection, after a warm-up): ``GET /t/{id}`` N times, timing the
  first byte of the body (TTFB) and the last, with the server's ``Server-Timing``; one
  ``GET /t/{id}/messages?from=…`` from the middle (a page loaded on scroll); and, for scale,
  ``GET /api/threads/{id}`` (the whole thread as JSON, what a page of everything would start
  from).
- Browser (Debian's Chromium, headless, a fresh profile each run): ``first-contentful-paint``
  and the load event of the page, from the page's own Performance API.

Also a 1-message thread (the floor: what the browser and the page's fixed parts cost), and
each page opened twice in one tab (the second time as a returning reader's tab). The machine's
load average is printed: on shared cores the browser's own start-up dominates first paint.

Targets: first contentful paint p50 (fresh profile) < 300 ms for both threads; first-page HTML of the 10,000-
message thread within 1% of the 699-message one's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright

from app.auth import create_token
from app.config import Settings
from app.web.reading import PAGE
from bench.corpus import REAL_THREADS
from bench.harness import (
    Section,
    fresh_database,
    percentiles,
    record,
    server_dsn,
    server_ms,
    uvicorn_process,
)
from loomsync.core.document.ids import ThreadId
from tests.web.conftest import chromium_path

DATABASE = "loomsync_bench_viewer"
REAL = "T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.json"  # the longest real thread: 699 messages
LONG = 10_000
RUNS, QUICK_RUNS = 20, 5
BROWSER_RUNS, QUICK_BROWSER_RUNS = 15, 3
FIRST_PAINT_MS = 300.0
USER = "bench-viewer"


@dataclass
class Measured:
    """What was measured of one thread."""

    label: str
    messages: int
    json_bytes: int = 0
    page_bytes: int = 0
    ttfb_ms: list[float] = field(default_factory=list)
    full_ms: list[float] = field(default_factory=list)
    server_ms: list[float] = field(default_factory=list)
    fragment_ms: float = 0.0
    api_ms: float = 0.0
    paint_ms: list[float] = field(default_factory=list)  # fresh profile
    load_ms: list[float] = field(default_factory=list)  # fresh profile
    warm_paint_ms: list[float] = field(default_factory=list)  # the same tab, again


def _threads() -> list[dict[str, Any]]:
    """The floor (the real thread's first message alone), the real thread, the long one."""
    real = json.loads((REAL_THREADS / REAL).read_text())
    messages = real["conversation"]["messages"]
    long = {
        **real,
        "conversation": {"messages": [messages[n % len(messages)] for n in range(LONG)]},
    }
    floor = {**real, "conversation": {"messages": messages[:1]}}
    documents = []
    for doc in (floor, real, long):
        documents.append({**doc, "id": ThreadId.new(), "visibility": "public", "version": 0})
    return documents


def _timed_get(client: httpx.Client, url: str) -> tuple[float, float, httpx.Response, int]:
    """(ms to the first body byte, ms to the last, the response, body bytes)."""
    started = time.perf_counter()
    with client.stream("GET", url) as response:
        chunks = response.iter_raw()
        size = len(next(chunks, b""))
        first = time.perf_counter()
        for chunk in chunks:
            size += len(chunk)
        done = time.perf_counter()
    if response.status_code != 200:
        raise RuntimeError(f"GET {url}: {response.status_code}")
    return (first - started) * 1000, (done - started) * 1000, response, size


def _http(base: str, headers: dict[str, str], m: Measured, thread_id: str, runs: int) -> None:
    with httpx.Client(base_url=base, timeout=120) as client:
        _timed_get(client, f"/t/{thread_id}")  # warm-up
        for _ in range(runs):
            ttfb, full, response, size = _timed_get(client, f"/t/{thread_id}")
            m.ttfb_ms.append(ttfb)
            m.full_ms.append(full)
            m.server_ms.append(server_ms(response))
            m.page_bytes = size
        middle = (m.messages // 2) - (m.messages // 2) % PAGE
        m.fragment_ms = _timed_get(client, f"/t/{thread_id}/messages?from={middle}")[1]
        api = client.get(f"/api/threads/{thread_id}", headers=headers)
        started = time.perf_counter()
        api = client.get(f"/api/threads/{thread_id}", headers=headers)
        m.api_ms = (time.perf_counter() - started) * 1000
        m.json_bytes = len(api.content)


_PAINT = """() => new Promise((resolve) => {
  const done = () => {
    const paint = performance.getEntriesByName("first-contentful-paint")[0];
    const nav = performance.getEntriesByType("navigation")[0];
    if (!paint || !nav || nav.loadEventEnd === 0) return setTimeout(done, 20);
    resolve({paint: paint.startTime, load: nav.loadEventEnd});
  };
  done();
})"""


def _browser(base: str, measured: list[tuple[Measured, str]], runs: int) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox"]
        )
        try:
            for run in range(runs + 1):  # interleaved: the machine's load hits all alike
                for m, thread_id in measured:
                    context = browser.new_context()
                    page = context.new_page()
                    page.goto(f"{base}/t/{thread_id}")
                    timing = page.evaluate(_PAINT)
                    page.goto(f"{base}/t/{thread_id}")
                    warm = page.evaluate(_PAINT)
                    context.close()
                    if run:  # the first round warms the browser itself
                        m.paint_ms.append(timing["paint"])
                        m.load_ms.append(timing["load"])
                        m.warm_paint_ms.append(warm["paint"])
        finally:
            browser.close()


def _load_average() -> str:
    try:
        return (
            " ".join(Path("/proc/loadavg").read_text().split()[:3]) + f" ({os.cpu_count()} cores)"
        )
    except OSError:
        return "unknown"


def run(dsn_of_server: str, *, quick: bool = False) -> Section:
    """Build the two threads, measure them; the report section with its targets."""
    runs = QUICK_RUNS if quick else RUNS
    dsn = fresh_database(dsn_of_server, DATABASE)
    results: list[tuple[Measured, str]] = []
    with uvicorn_process(dsn) as (base, secret, _):
        settings = Settings(jwt_secret=secret, _env_file=None)
        headers = {"Authorization": f"Bearer {create_token(settings, USER)}"}
        for doc in _threads():
            stored = httpx.put(
                f"{base}/api/threads/{doc['id']}", json=doc, headers=headers, timeout=300
            )
            stored.raise_for_status()
            count = len(doc["conversation"]["messages"])
            m = Measured("floor" if count == 1 else "real" if count < LONG else "long", count)
            _http(base, headers, m, doc["id"], runs)
            results.append((m, doc["id"]))
        _browser(base, results, QUICK_BROWSER_RUNS if quick else BROWSER_RUNS)
    section = Section("Viewer first page (issue 13)")
    section.lines = [
        f"GET /t/{{id}}: {runs} runs after a warm-up, one kept-alive connection; browser: "
        f"{QUICK_BROWSER_RUNS if quick else BROWSER_RUNS} fresh Chromium profiles after one warm-up",
        "FCP: first-contentful-paint in a fresh profile (p50 p95), then in the same tab again;"
        " load: the load event (fresh profile); floor: a 1-message thread (the browser's own cost)",
        f"load average at the start: {_load_average()}",
        "thread     messages  JSON MB | page KB | TTFB p50/p95 ms | full p50/p95 ms | server p50"
        " | next page ms | whole JSON ms | FCP p50/p95 ms | again p50 | load p50 ms",
    ]
    for m, _ in results:
        t50, t95 = percentiles(m.ttfb_ms)
        f50, f95 = percentiles(m.full_ms)
        p50, p95 = percentiles(m.paint_ms)
        section.lines.append(
            f"{m.label:8} {m.messages:10,} {m.json_bytes / 1e6:8.2f} | {m.page_bytes / 1024:7.1f} |"
            f" {t50:7.1f} {t95:7.1f} | {f50:7.1f} {f95:7.1f} | {percentiles(m.server_ms)[0]:10.1f}"
            f" | {m.fragment_ms:12.1f} | {m.api_ms:13.1f} | {p50:6.1f} {p95:7.1f} |"
            f" {percentiles(m.warm_paint_ms)[0]:9.1f} | {percentiles(m.load_ms)[0]:11.1f}"
        )
    for m, _ in results[1:]:
        p50 = percentiles(m.paint_ms)[0]
        section.target(
            f"{m.label} ({m.messages:,} messages): first contentful paint p50 {p50:.0f} ms"
            f" < {FIRST_PAINT_MS:.0f} ms",
            p50 < FIRST_PAINT_MS,
        )
    real, long = results[1][0], results[2][0]
    ratio = long.page_bytes / real.page_bytes
    section.target(
        f"first page {long.page_bytes:,} B ({LONG:,} messages) vs {real.page_bytes:,} B"
        f" ({real.messages} messages): ratio {ratio:.4f} within 1%",
        abs(ratio - 1) <= 0.01,
    )
    return section


def main() -> None:
    """``python -m bench.viewer [--quick] [--record]``: print the section (and append it to
    bench/RESULTS.md with ``--record``); exit 1 when a target was missed."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer samples (a smoke test)")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    section = run(server_dsn(), quick=args.quick)
    lines = section.render()
    print("\n".join(lines))
    if args.record:
        command = ".venv/bin/python -m bench.viewer" + (" --quick" if args.quick else "")
        record(section.title, command, lines[1:])
    sys.exit(1 if any(not met for _, met in section.targets) else 0)


if __name__ == "__main__":
    main()
