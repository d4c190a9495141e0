"""Fixtures for the browser side: a real uvicorn serving the test database, and a real headless
Chromium (Debian's ``/usr/bin/chromium``, driven by playwright; scripts/test-setup.sh installs it).

``LOOMSYNC_CHROMIUM`` names another Chromium binary. Without one, the browser tests fail (they
are never skipped: a viewer nobody ran in a browser is not tested).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from app.config import Settings
from tests.servers import Server, app_env, uvicorn_server


def chromium_path() -> str:
    """The Chromium binary the browser tests drive."""
    path = os.environ.get("LOOMSYNC_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail(
            f"no Chromium at {path}: apt-get install chromium (scripts/test-setup.sh does, as root)"
        )
    return path


@pytest.fixture(scope="session")
def web_server(database_url: str, settings: Settings) -> Iterator[Server]:
    """One real uvicorn for the browser tests (same database and JWT secret as ``client``)."""
    with uvicorn_server(app_env(database_url, settings)) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """A headless Chromium for one test module.

    Not for the whole run: while sync playwright runs, its event loop is the thread's running
    loop, so an async test (pytest-asyncio) after it in the run cannot start its own
    ("Runner.run() cannot be called from a running event loop"). Stopped at the end of each
    module, the loop is gone before the next module's async tests."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    """A fresh browser profile (no cookies) per test."""
    made = browser.new_context()
    yield made
    made.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    """A tab of :func:`context`."""
    return context.new_page()
