"""A browser that may reach only the server under test: every request to another origin is
failed (playwright route interception) and remembered, and every CSP violation or page error
the console reports is kept, so a test can assert there were none."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.sync_api import BrowserContext, ConsoleMessage, Page, Route

#: Hosts a page may load from: the loopback names the test servers listen on.
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
#: Schemes that are not network requests (inline images, the page's own blobs).
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})


def is_local(url: str) -> bool:
    """True for a URL on a loopback host, or one with no network behind it (``data:``)."""
    parts = urlsplit(url)
    return parts.scheme in LOCAL_SCHEMES or (parts.hostname or "") in LOCAL_HOSTS


@dataclass
class Watch:
    """What one offline browser context saw: requests refused, CSP and script errors."""

    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def watch(self, page: Page) -> Page:
        """Record ``page``'s console CSP reports and uncaught errors; returns ``page``."""

        def on_console(message: ConsoleMessage) -> None:
            text = message.text
            if "Content Security Policy" in text or "Refused to" in text:
                self.csp_violations.append(text)

        page.on("console", on_console)
        page.on("pageerror", lambda error: self.page_errors.append(str(error)))
        return page

    def assert_clean(self) -> None:
        """Fail when anything went off the machine, broke the CSP or threw."""
        assert self.blocked == [], f"requests to other origins: {self.blocked}"
        assert self.csp_violations == [], f"CSP violations: {self.csp_violations}"
        assert self.page_errors == [], f"script errors: {self.page_errors}"


@contextmanager
def offline(context: BrowserContext) -> Iterator[Watch]:
    """Make ``context`` fail every request that is not to a loopback host, and watch it."""
    seen = Watch()

    def handle(route: Route) -> None:
        url = route.request.url
        seen.requested.append(url)
        if is_local(url):
            route.continue_()
        else:
            seen.blocked.append(url)
            route.abort("internetdisconnected")

    context.route("**/*", handle)
    context.on("page", seen.watch)
    try:
        yield seen
    finally:
        context.unroute("**/*")
