"""The CLI's start-up (issue 15 item 2: ``loomsync list`` of 100,000 threads under a second,
start-up included): what a listing needs is all that is imported before a command runs; the
HTTP client, the secret detector, the search and import code load in the commands that use
them."""

from __future__ import annotations

import subprocess
import sys

from loomsync.importers import FORMATS
from tests.client.conftest import LOOMSYNC

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


def test_the_cli_loads_no_importer_to_start_and_names_every_registered_one_when_asked() -> None:
    """No hard-coded copy of the importer names (issue 28: an importer registered through the
    entry-point group is never missing from a list of the CLI's): the help does not list
    them, so nothing loads them before a command runs; an unknown format is answered with
    every registered name."""
    code = "import sys, loomsync.cli.main; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    assert [name for name in loaded if name.startswith("loomsync.importers")] == []
    refused = subprocess.run(
        [str(LOOMSYNC), "import", "no-such-agent"], capture_output=True, text=True, check=False
    )
    assert refused.returncode == 2
    said = " ".join(refused.stderr.split())
    assert all(name in said for name in FORMATS), said
