"""The CLI's start-up (issue 15 item 2: ``loomsync list`` of 100,000 threads under a second,
start-up included): what a listing needs is all that is imported before a command runs; the
HTTP client, the secret detector, the search and import code load in the commands that use
them."""

from __future__ import annotations

import subprocess
import sys

from loomsync.cli.main import FORMAT_NAMES
from loomsync.importers import FORMATS

#: Imported by ``loomsync list`` (the modules its store is made of), nothing more.
LISTING = "loomsync.cli.main, loomsync.http.connect, loomsync.store.local, loomsync.sync.syncing"
#: Each costs tens of milliseconds to import; ``loomsync list`` needs none of them.
HEAVY = (
    "httpx",
    "rich.progress",
    "markdown_it",
    "regex",
    "loomsync.core.secrets",
    "loomsync.core.textsearch.analyzer",
    "loomsync.store.localsearch",
    "loomsync.importers.codex",
    "loomsync.export",
    "loomsync.git",
)


def test_a_listing_imports_none_of_the_heavy_modules() -> None:
    code = f"import sys, {LISTING}; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert [name for name in HEAVY if name in loaded] == []


def test_the_format_names_the_help_shows_are_the_importers() -> None:
    assert tuple(FORMATS) == FORMAT_NAMES
