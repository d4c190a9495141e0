"""What a newcomer tripped on in the web viewer (issue 30 item 8), in a real headless Chromium
against a real uvicorn: a collapsed tool call says what it runs, a Claude Code slash-command
turn reads as the command, an anonymous reader's 410 page offers no "your threads", and the
home page's search box shows its whole placeholder on a phone."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from app.config import Settings
from tests.conftest import TokenFactory
from tests.servers import Server
from tests.web.documents import document
from tests.web.test_signin_browser import Names, Site
from tests.web.test_viewer_browser import TIMEOUT_MS, _store


def _headers(auth: TokenFactory) -> dict[str, str]:
    return auth(f"newcomer-{uuid.uuid4().hex[:10]}", org=f"org-{uuid.uuid4().hex[:10]}")


def test_a_collapsed_call_shows_its_command_and_a_slash_command_reads_as_one(
    web_server: Server, auth: TokenFactory, page: Page
) -> None:
    page.set_default_timeout(TIMEOUT_MS)
    hostile = "echo <img src=x onerror=window.__pwned=1>\nrm -rf build " + "x" * 300
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": "<command-message>review is running…</command-message>\n"
            "<command-name>/review</command-name>\n<command-args>PR 12 & more</command-args>",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"tool_name": "shell", "arguments_json": {"command": ["bash", "-lc", hostile]}},
                {"tool_name": "Read", "arguments_json": {"file_path": "/src/app.py", "limit": 5}},
            ],
        },
    ]
    thread_id = _store(web_server, _headers(auth), document(messages, visibility="public"))
    page.goto(f"{web_server.base_url}/t/{thread_id}")
    first = page.locator("#m-0")
    expect(first.locator("p.command")).to_have_text("/review PR 12 & more")
    expect(first).not_to_contain_text("<command-")
    summaries = page.locator("#m-1 details.box > summary")
    expect(summaries.nth(0).locator(".gist")).to_contain_text(
        "bash -lc echo <img src=x onerror=window.__pwned=1> ⏎ rm -rf build xxx"
    )
    gist = summaries.nth(0).locator(".gist").inner_text()
    assert gist.endswith("…"), gist
    assert len(gist) <= 120, gist
    expect(summaries.nth(1).locator(".gist")).to_have_text("/src/app.py")
    assert page.locator("main img").count() == 0
    assert page.evaluate("() => window.__pwned === undefined")


def test_an_anonymous_readers_410_page_offers_no_threads_of_theirs(
    web_server: Server, auth: TokenFactory, page: Page
) -> None:
    headers = _headers(auth)
    thread_id = _store(web_server, headers, document([{"role": "user", "content": "hi"}]))
    links = f"{web_server.base_url}/api/threads/{thread_id}/share-links"
    made = httpx.post(links, json={}, headers=headers, timeout=30).json()
    assert httpx.delete(f"{links}/{made['id']}", headers=headers, timeout=30).status_code == 204
    gone = page.goto(made["url"])
    assert gone is not None
    assert gone.status == 410
    expect(page.locator("section.error h1")).to_contain_text("410")
    expect(page.get_by_text("Back to your threads")).to_have_count(0)


def test_the_search_box_shows_its_whole_placeholder_on_a_phone_and_signed_in_errors_lead_home(
    web_server: Server, settings: Settings, tmp_path: Path, new_user: Names, page: Page
) -> None:
    page.set_default_timeout(TIMEOUT_MS)
    site = Site(web_server, settings, tmp_path, new_user)
    user, token = site.user("phone")
    site.sign_in(page, user, token)
    page.set_viewport_size({"width": 375, "height": 812})
    page.goto(site.url("/"))
    fits = page.evaluate(
        """() => {
          const input = document.querySelector(".search-box input[type=search]");
          const style = getComputedStyle(input);
          const context = document.createElement("canvas").getContext("2d");
          context.font = style.font;
          const needed = context.measureText(input.placeholder).width;
          const room = input.clientWidth - parseFloat(style.paddingLeft)
            - parseFloat(style.paddingRight);
          return {needed, room, placeholder: input.placeholder};
        }"""
    )
    assert fits["placeholder"], fits
    assert fits["needed"] <= fits["room"], fits
    missing = page.goto(site.url("/t/T-019c8a59-e9dd-71f0-9ae3-4079fe9726a9"))
    assert missing is not None
    assert missing.status == 404
    expect(page.get_by_role("link", name="Back to your threads")).to_have_count(1)
