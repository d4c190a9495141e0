"""Screenshots of the viewer on a real imported thread (issue 13 "Done means"): light, dark and
phone width, saved as ``docs/screenshots/thread-{light,dark,phone}.png``. Not a benchmark; it
uses the benchmarks' harness for a fresh database and a real uvicorn.

    .venv/bin/python -m bench.screenshots [--thread T-….json]

The thread is one of ``../shared/data/threads/`` (default: "create hello.py, md and js", which
has Markdown, code, tool calls and their output), PUT through the API as a public thread and
opened in Debian's Chromium (headless) with ``prefers-color-scheme`` set; the first tool call
of the page is opened so that a collapsed box shows what it holds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from app.auth import create_token
from app.config import Settings
from bench.corpus import REAL_THREADS
from bench.harness import ROOT, fresh_database, server_dsn, uvicorn_process
from loomsync.core.document.ids import ThreadId
from tests.web.conftest import chromium_path

DATABASE = "loomsync_bench_screenshots"
DEFAULT_THREAD = "T-4c2ddfdc-b619-4525-8d03-1950fb1b0257.json"
OUT = ROOT / "docs" / "screenshots"
#: (file name, viewport, colour scheme)
SHOTS = (
    ("thread-light.png", {"width": 1100, "height": 1400}, "light"),
    ("thread-dark.png", {"width": 1100, "height": 1400}, "dark"),
    ("thread-phone.png", {"width": 390, "height": 844}, "light"),
)


def take(thread: Path) -> list[Path]:
    """Store ``thread`` and write the screenshots; returns their paths."""
    doc = {**json.loads(thread.read_text()), "id": ThreadId.new(), "visibility": "public"}
    doc["version"] = 0
    dsn = fresh_database(server_dsn(), DATABASE)
    written = []
    with uvicorn_process(dsn) as (base, secret, _):
        settings = Settings(jwt_secret=secret, _env_file=None)
        headers = {"Authorization": f"Bearer {create_token(settings, 'screenshots')}"}
        httpx.put(
            f"{base}/api/threads/{doc['id']}", json=doc, headers=headers, timeout=120
        ).raise_for_status()
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), headless=True, args=["--no-sandbox"]
            )
            for name, viewport, scheme in SHOTS:
                context = browser.new_context(
                    viewport=viewport,  # type: ignore[arg-type]
                    color_scheme=scheme,  # type: ignore[arg-type]
                    device_scale_factor=2 if viewport["width"] < 600 else 1,
                )
                page = context.new_page()
                page.goto(f"{base}/t/{doc['id']}")
                page.locator("details.box.call").first.evaluate("(d) => { d.open = true; }")
                path = OUT / name
                page.screenshot(path=str(path))
                written.append(path)
                context.close()
            browser.close()
    return written


def main() -> None:
    """``python -m bench.screenshots [--thread NAME]``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--thread", default=DEFAULT_THREAD, help="a file of ../shared/data/threads")
    for path in take(REAL_THREADS / parser.parse_args().thread):
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
