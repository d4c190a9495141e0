"""The client fixtures (a real server, people running the real CLI) and the browser ones
(a headless Chromium, a uvicorn for pages) for these tests."""

from tests.client.conftest import account, live_server  # noqa: F401  (fixtures)
from tests.web.conftest import browser, context, page, web_server  # noqa: F401  (fixtures)
