"""Sign-in in the real headless Chromium (issue 13, "Done means"): ``loomsync open`` signs the
browser in, logout ends the session, a page of another site cannot sign out or sign in, and
search jumps to the matching message of the viewer."""

from __future__ import annotations

from collections.abc import Callable
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


def open_link(tmp_path: Path, server: Server, token: str, *args: str) -> str:
    """``loomsync login`` then ``loomsync open [ARGS] --print``; the link it prints."""
    login = loomsync(tmp_path, "login", "--server", server.base_url, "--token", token)
    assert login.returncode == 0, login.stderr
    opened = loomsync(tmp_path, "open", *args, "--print")
    assert opened.returncode == 0, opened.stderr
    url = opened.stdout.strip()
    assert url.startswith(f"{server.base_url}/login?code="), opened.stdout
    return url


def continue_sign_in(page: Page, url: str, user: str) -> None:
    """Open the sign-in link and press "Continue as <user>"."""
    page.goto(url)
    button = page.locator("#continue")
    assert button.inner_text() == f"Continue as {user}"
    with page.expect_navigation():
        button.click()


def session_cookie(context: BrowserContext) -> dict[str, Any]:
    found = [dict(c) for c in context.cookies() if c["name"] == COOKIE]
    assert len(found) == 1, context.cookies()
    return found[0]


def test_loomsync_open_signs_in_and_logout_ends_the_session(
    web_server: Server,
    settings: Settings,
    context: BrowserContext,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    user = new_user("alice")
    token = create_token(settings, user, org="acme")
    put_thread(web_server, token, "Fix the flaky upload test", ["why does it fail?", "timing"])
    continue_sign_in(page, open_link(tmp_path, web_server, token), user)
    assert page.url == f"{web_server.base_url}/"
    assert page.locator(".site-nav .who strong").inner_text() == user
    assert page.get_by_role("link", name="Fix the flaky upload test").is_visible()
    cookie = session_cookie(context)
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Strict"
    assert COOKIE not in page.evaluate("document.cookie")  # HttpOnly: no script reads it
    with page.expect_navigation():
        page.get_by_role("button", name="Sign out").click()
    assert page.locator(".site-nav .who").inner_text() == "Not signed in"
    assert not [c for c in context.cookies() if c["name"] == COOKIE]
    context.add_cookies([cookie])  # a copy kept: the server ended the session all the same
    page.goto(f"{web_server.base_url}/")
    assert page.locator(".site-nav .who").inner_text() == "Not signed in"


def test_loomsync_open_with_an_id_lands_on_that_thread(
    web_server: Server,
    settings: Settings,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    user = new_user("alice")
    token = create_token(settings, user)
    thread_id = put_thread(web_server, token, "one thread", ["hello"])
    continue_sign_in(page, open_link(tmp_path, web_server, token, thread_id), user)
    assert page.url == f"{web_server.base_url}/t/{thread_id}"


def test_a_used_link_does_not_sign_in_again(
    web_server: Server,
    settings: Settings,
    browser_context_factory: Callable[[], BrowserContext],
    tmp_path: Path,
    new_user: Names,
) -> None:
    user = new_user("alice")
    url = open_link(tmp_path, web_server, create_token(settings, user))
    first = browser_context_factory().new_page()
    continue_sign_in(first, url, user)
    second = browser_context_factory().new_page()
    response = second.goto(url)
    assert response is not None
    assert response.status == 410
    assert second.locator("#continue").count() == 0


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


def test_a_page_of_another_site_cannot_sign_the_browser_out(
    web_server: Server,
    settings: Settings,
    context: BrowserContext,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    user = new_user("alice")
    continue_sign_in(page, open_link(tmp_path, web_server, create_token(settings, user)), user)
    csrf = page.locator("input[name=csrf_token]").get_attribute("value")
    form = (
        f'<form id="f" method="post" action="{web_server.base_url}/logout">'
        f'<input name="csrf_token" value="{csrf}"></form>'
        '<script>document.getElementById("f").submit()</script>'
    )
    attacker_page(context, form)
    evil = context.new_page()
    with evil.expect_navigation(url=f"{web_server.base_url}/logout"):
        evil.goto(f"{ATTACKER}/logout-trap")
    page.goto(f"{web_server.base_url}/")
    assert page.locator(".site-nav .who strong").inner_text() == user


def test_a_page_of_another_site_cannot_sign_the_browser_in_as_someone_else(
    web_server: Server,
    settings: Settings,
    context: BrowserContext,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    """Login CSRF: mallory's code, posted from mallory's page, opens no session here."""
    mallory = new_user("mallory")
    url = open_link(tmp_path, web_server, create_token(settings, mallory))
    code = url.split("code=")[1].split("&")[0]
    form = (
        f'<form id="f" method="post" action="{web_server.base_url}/login">'
        f'<input name="code" value="{code}"><input name="form_token" value="x"></form>'
        '<script>document.getElementById("f").submit()</script>'
    )
    attacker_page(context, form)
    with page.expect_navigation(url=f"{web_server.base_url}/login"):
        page.goto(f"{ATTACKER}/login-trap")
    assert not [c for c in context.cookies() if c["name"] == COOKIE]
    page.goto(f"{web_server.base_url}/")
    assert page.locator(".site-nav .who").inner_text() == "Not signed in"


def test_search_jumps_to_the_message(
    web_server: Server,
    settings: Settings,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    user = new_user("alice")
    token = create_token(settings, user)
    contents = [f"routine step {i} of the migration" for i in range(300)]
    contents[250] = "the axolotl regenerates its gills"
    thread_id = put_thread(web_server, token, "a long thread", contents)
    continue_sign_in(page, open_link(tmp_path, web_server, token), user)
    page.goto(f"{web_server.base_url}/search?q=axolotl")
    hit = page.locator(f'a[href="/t/{thread_id}#m-250"]')
    assert hit.count() == 1
    assert "axolotl" in page.locator(".snippet b").first.inner_text()
    hit.click()
    target = page.locator("#m-250")
    target.wait_for(state="visible")
    assert page.url.endswith("#m-250")
    assert "axolotl" in target.inner_text()
    box = target.bounding_box()
    viewport = page.viewport_size
    assert box is not None
    assert viewport is not None
    assert box["y"] < viewport["height"]
    assert box["y"] + box["height"] > 0


def test_a_link_from_another_site_arrives_signed_in(
    web_server: Server,
    settings: Settings,
    context: BrowserContext,
    page: Page,
    tmp_path: Path,
    new_user: Names,
) -> None:
    """SameSite=Strict leaves the session cookie out of a navigation another site started;
    the Lax hint makes the server reload the page from its own origin (app/web/bounce.py)."""
    user = new_user("alice")
    token = create_token(settings, user)
    put_thread(web_server, token, "linked from chat", ["hello"])
    continue_sign_in(page, open_link(tmp_path, web_server, token), user)
    attacker_page(context, f'<a id="go" href="{web_server.base_url}/">my threads</a>')
    chat = context.new_page()
    chat.goto(f"{ATTACKER}/chat")
    with chat.expect_navigation(url=f"{web_server.base_url}/"):
        chat.click("#go")
    chat.locator(".site-nav .who strong").wait_for()
    assert chat.locator(".site-nav .who strong").inner_text() == user
    assert chat.get_by_role("link", name="linked from chat").is_visible()
