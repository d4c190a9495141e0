"""Sign-in in the real headless Chromium (issue 13, "Done means"): ``loomsync open`` signs the
browser in, logout ends the session, a page of another site cannot sign out or sign in, and
search jumps to the matching message of the viewer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from app.auth import create_token
from app.config import Settings
from app.web.session import COOKIE
from tests.servers import Server
from tests.web.clients import loomsync, put_thread

Names = Callable[[str], str]
ATTACKER = "http://attacker.example"
WHO = ".site-nav .who"


@dataclass(frozen=True)
class Site:
    """The live server, and what signing a browser in to it through ``loomsync open`` takes."""

    server: Server
    settings: Settings
    home: Path
    new_user: Names

    def url(self, path: str = "/") -> str:
        return f"{self.server.base_url}{path}"

    def user(self, name: str, **claims: Any) -> tuple[str, str]:
        """A new user named after ``name``, and a bearer token of theirs."""
        user = self.new_user(name)
        return user, create_token(self.settings, user, **claims)

    def put_thread(self, token: str, title: str, contents: list[str]) -> str:
        return put_thread(self.server, token, title, contents)

    def open_link(self, token: str, *args: str) -> str:
        """``loomsync login`` then ``loomsync open [ARGS] --print``; the link it prints."""
        login = loomsync(self.home, "login", "--server", self.server.base_url, "--token", token)
        assert login.returncode == 0, login.stderr
        opened = loomsync(self.home, "open", *args, "--print")
        assert opened.returncode == 0, opened.stderr
        url = opened.stdout.strip()
        assert url.startswith(self.url("/login?code=")), opened.stdout
        return url

    def sign_in(self, page: Page, user: str, token: str, *args: str) -> None:
        """Sign ``page``'s browser in as ``user`` with the link ``loomsync open`` prints."""
        continue_sign_in(page, self.open_link(token, *args), user)


@pytest.fixture
def site(web_server: Server, settings: Settings, tmp_path: Path, new_user: Names) -> Site:
    return Site(web_server, settings, tmp_path, new_user)


def continue_sign_in(page: Page, url: str, user: str) -> None:
    """Open the sign-in link and press "Continue as <user>"."""
    page.goto(url)
    button = page.locator("#continue")
    assert button.inner_text() == f"Continue as {user}"
    with page.expect_navigation():
        button.click()


def session_cookies(context: BrowserContext) -> list[dict[str, Any]]:
    return [dict(c) for c in context.cookies() if c["name"] == COOKIE]


def session_cookie(context: BrowserContext) -> dict[str, Any]:
    found = session_cookies(context)
    assert len(found) == 1, context.cookies()
    return found[0]


def signed_in_as(page: Page) -> str:
    """Who the page's navigation says is signed in."""
    return page.locator(f"{WHO} strong").inner_text()


def not_signed_in(page: Page) -> bool:
    return page.locator(WHO).inner_text() == "Not signed in"


def test_loomsync_open_signs_in_and_logout_ends_the_session(
    site: Site, context: BrowserContext, page: Page
) -> None:
    user, token = site.user("alice", org="acme")
    site.put_thread(token, "Fix the flaky upload test", ["why does it fail?", "timing"])
    site.sign_in(page, user, token)
    assert page.url == site.url("/")
    assert signed_in_as(page) == user
    assert page.get_by_role("link", name="Fix the flaky upload test").is_visible()
    cookie = session_cookie(context)
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert COOKIE not in page.evaluate("document.cookie")  # HttpOnly: no script reads it
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    assert not_signed_in(page)
    assert not session_cookies(context)
    context.add_cookies([cookie])  # a copy kept: the server ended the session all the same
    page.goto(site.url("/"))
    assert not_signed_in(page)


def test_loomsync_open_with_an_id_lands_on_that_thread(site: Site, page: Page) -> None:
    user, token = site.user("alice")
    thread_id = site.put_thread(token, "one thread", ["hello"])
    site.sign_in(page, user, token, thread_id)
    assert page.url == site.url(f"/t/{thread_id}")


def test_a_used_link_does_not_sign_in_again(
    site: Site, browser_context_factory: Callable[[], BrowserContext]
) -> None:
    user, token = site.user("alice")
    url = site.open_link(token)
    first = browser_context_factory().new_page()
    continue_sign_in(first, url, user)
    second = browser_context_factory().new_page()
    response = second.goto(url)
    assert response is not None
    assert response.status == 410
    assert second.locator("#continue").count() == 0


def test_two_sign_in_links_in_two_tabs_each_sign_in(
    site: Site, context: BrowserContext, page: Page
) -> None:
    alice, alice_token = site.user("alice")
    bob, bob_token = site.user("bob")
    thread_id = site.put_thread(alice_token, "alice's", ["hello"])
    first_url = site.open_link(alice_token, thread_id)
    second_url = site.open_link(bob_token)
    second = context.new_page()
    page.goto(first_url)
    second.goto(second_url)  # shown after the first: it used to replace the first's cookie
    with page.expect_navigation():
        page.locator("#continue").click()
    assert page.url == site.url(f"/t/{thread_id}"), page.locator("main").inner_text()
    assert signed_in_as(page) == alice
    with second.expect_navigation():
        second.locator("#continue").click()
    assert second.url == site.url("/")
    assert signed_in_as(second) == bob  # the second link switches the browser to bob
    assert len(session_cookies(context)) == 1
    left = [c["name"] for c in context.cookies() if c["name"].startswith("loomsync_login")]
    assert left == []  # each form's cookie went with its sign-in


@pytest.fixture
def browser_context_factory(context: BrowserContext) -> Any:
    """Fresh browser profiles (each its own cookies), closed after the test."""
    browser = context.browser
    assert browser is not None
    made: list[BrowserContext] = []

    def make() -> BrowserContext:
        made.append(browser.new_context())
        return made[-1]

    yield make
    for each in made:
        each.close()


def attacker_page(context: BrowserContext, html: str) -> None:
    """Serve ``html`` as the page of another site, ``ATTACKER``."""
    context.route(
        f"{ATTACKER}/**",
        lambda route: route.fulfill(status=200, content_type="text/html", body=html),
    )


def attacker_post(context: BrowserContext, action: str, fields: dict[str, str]) -> None:
    """Serve, as the page of another site, a form that posts ``fields`` to ``action`` as soon
    as it loads."""
    inputs = "".join(f'<input name="{name}" value="{value}">' for name, value in fields.items())
    attacker_page(
        context,
        f'<form id="f" method="post" action="{action}">{inputs}</form>'
        '<script>document.getElementById("f").submit()</script>',
    )


def test_a_page_of_another_site_cannot_sign_the_browser_out(
    site: Site, context: BrowserContext, page: Page
) -> None:
    user, token = site.user("alice")
    site.sign_in(page, user, token)
    csrf = page.locator("input[name=csrf_token]").get_attribute("value")
    attacker_post(context, site.url("/logout"), {"csrf_token": f"{csrf}"})
    evil = context.new_page()
    with evil.expect_navigation(url=site.url("/logout")):
        evil.goto(f"{ATTACKER}/logout-trap")
    page.goto(site.url("/"))
    assert signed_in_as(page) == user


def test_a_page_of_another_site_cannot_sign_the_browser_in_as_someone_else(
    site: Site, context: BrowserContext, page: Page
) -> None:
    """Login CSRF: mallory's code, posted from mallory's page, opens no session here."""
    _, token = site.user("mallory")
    code = site.open_link(token).split("code=")[1].split("&")[0]
    attacker_post(context, site.url("/login"), {"code": code, "form_token": "x"})
    with page.expect_navigation(url=site.url("/login")):
        page.goto(f"{ATTACKER}/login-trap")
    assert not session_cookies(context)
    page.goto(site.url("/"))
    assert not_signed_in(page)


def test_search_jumps_to_the_message(site: Site, page: Page) -> None:
    user, token = site.user("alice")
    contents = [f"routine step {i} of the migration" for i in range(300)]
    contents[250] = "the axolotl regenerates its gills"
    thread_id = site.put_thread(token, "a long thread", contents)
    site.sign_in(page, user, token)
    page.goto(site.url("/search?q=axolotl"))
    hit = page.locator(f'a[href="/t/{thread_id}?from=250#m-250"]')
    assert hit.count() == 1
    assert "axolotl" in page.locator(".snippet b").first.inner_text()
    hit.click()
    target = page.locator("#m-250")
    target.wait_for(state="visible")
    assert page.url.endswith("?from=250#m-250")
    assert "axolotl" in target.inner_text()
    box = target.bounding_box()
    viewport = page.viewport_size
    assert box is not None
    assert viewport is not None
    assert box["y"] < viewport["height"]
    assert box["y"] + box["height"] > 0


def test_a_link_from_another_site_arrives_signed_in(
    site: Site, context: BrowserContext, page: Page
) -> None:
    """SameSite=Strict leaves the session cookie out of a navigation another site started;
    the Lax hint makes the server reload the page from its own origin (app/web/bounce.py)."""
    user, token = site.user("alice")
    site.put_thread(token, "linked from chat", ["hello"])
    site.sign_in(page, user, token)
    attacker_page(context, f'<a id="go" href="{site.url("/")}">my threads</a>')
    chat = context.new_page()
    chat.goto(f"{ATTACKER}/chat")
    with chat.expect_navigation(url=site.url("/")):
        chat.click("#go")
    chat.locator(f"{WHO} strong").wait_for()
    assert signed_in_as(chat) == user
    assert chat.get_by_role("link", name="linked from chat").is_visible()


def test_search_controls_are_one_height_at_phone_width(site: Site, page: Page) -> None:
    user, token = site.user("pat")
    site.sign_in(page, user, token)
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(site.url("/search?q=anything"))
    box = page.locator(".search-box input[type=search]").bounding_box()
    assert box is not None
    for select in page.locator(".search-box select").all():
        size = select.bounding_box()
        assert size is not None
        assert abs(size["height"] - box["height"]) <= 2, (size, box)
        assert size["height"] >= 36  # a finger's target, not 18 px
