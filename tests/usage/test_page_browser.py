"""``/usage`` in a real headless Chromium against a real uvicorn (issue 33 item 3): stacked
bars link to the sessions behind them, the top sessions to their threads; another person's
private thread never shows in an admin's organization view; readable at 375 px and in dark
mode. Writes docs/screenshots/usage-{light,dark,phone}.png (checked in)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Browser, Page, expect

from tests.web.test_signin_browser import Site
from tests.web.test_signin_browser import site as site

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
RANGE = "since=2026-11-01&until=2026-11-21"
MODELS = (
    ("claude-sonnet-4-5", "anthropic", "claude-code"),
    ("claude-opus-4-5", "anthropic", "claude-code"),
    ("gpt-5-codex", "openai", "codex"),
    ("gemini-2.5-pro", "google", "gemini-cli"),
)
TITLES = (
    "Fix the flaky checkout test",
    "Add CSV export to reports",
    "Migrate the billing job to queues",
    "Explain the search ranking",
    "Upgrade the web framework",
    "Profile the slow dashboard",
)


def _doc(title: str, visibility: str, day: int, which: int, turns: int) -> dict[str, Any]:
    model, provider, agent = MODELS[which % len(MODELS)]
    messages: list[dict[str, Any]] = [{"role": "user", "content": title}]
    for i in range(turns):
        messages.append(
            {
                "role": "assistant",
                "content": "working",
                "created_at": f"2026-11-{day + i % 3:02d}T1{i % 10}:00:00Z",
                "usage": {
                    "input_tokens": 2000 + 300 * i,
                    "output_tokens": 800 + 40 * i,
                    "cache_read_tokens": 40000 + 5000 * i,
                    "cache_write_tokens": 3000,
                    "model": model,
                    "provider": provider,
                },
            }
        )
    return {
        "id": f"T-{uuid.uuid4()}",
        "version": 0,
        "visibility": visibility,
        "git_remote_url": f"git@github.com:acme/{('shop', 'api', 'docs')[which % 3]}.git",
        "workspace_root": "/home/dev/shop",
        "metadata": {"title": title, "extra": {"source": {"agent": agent}}},
        "conversation": {"messages": messages},
    }


def _put(where: Site, token: str, doc: dict[str, Any]) -> str:
    answer = httpx.put(
        where.url(f"/api/threads/{doc['id']}"),
        json=doc,
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )
    assert answer.status_code == 201, answer.text
    return str(doc["id"])


def _signed_in(site: Site, page: Page) -> tuple[str, str]:
    org = f"org-{uuid.uuid4().hex[:8]}"
    alice, alice_token = site.user("alice", org=org, roles=["admin"])
    _, bob_token = site.user("bob", org=org)
    for n in range(18):
        title = TITLES[n % len(TITLES)] + ("" if n < len(TITLES) else f" ({n})")
        _put(
            site,
            alice_token if n % 2 else bob_token,
            _doc(title, "organization", 1 + n, n, 4 + n % 5),
        )
    hidden = _put(site, bob_token, _doc("Bob secret plan", "private", 5, 0, 9))
    site.sign_in(page, alice, alice_token)
    return hidden, org


def test_bars_link_to_the_sessions_behind_them(site: Site, page: Page) -> None:
    hidden, _ = _signed_in(site, page)
    page.goto(site.url(f"/usage?{RANGE}&scope=organization"))
    expect(page.locator("h1")).to_have_text("Usage")
    assert "Bob secret plan" not in page.content()
    assert hidden not in page.content()
    expect(page.locator(".price-note")).to_contain_text("estimate at genai-prices")
    segments = page.locator(".usage-chart a rect")
    assert segments.count() > 10
    expect(page.locator(".legend").first).to_contain_text("claude-sonnet-4-5")
    # a bar segment: the sessions of that day and model
    link = page.locator(".usage-chart a").first
    href = link.get_attribute("href") or ""
    assert "model=" in href
    assert "since=2026-11-0" in href
    page.goto(site.url(href))
    expect(page.locator(".usage-filters")).to_contain_text("model =")
    sessions = page.locator("a.session-link")
    assert sessions.count() >= 1
    sessions.first.click()
    expect(page.locator(".thread-head .title")).to_be_visible()
    # a repository row narrows to that repository
    page.goto(site.url(f"/usage?{RANGE}&scope=organization"))
    page.locator(".usage-table a").first.click()
    expect(page.locator(".usage-filters")).to_contain_text("repository = github.com/acme/")
    # bad input is a page, not an error
    page.goto(site.url("/usage?since=2026-02-30"))
    expect(page.locator("h1")).to_have_text("Bad request")


def test_phone_and_dark_mode_screenshots(site: Site, browser: Browser, page: Page) -> None:
    _signed_in(site, page)
    url = site.url(f"/usage?{RANGE}&scope=organization&stack=model")
    cookies = page.context.cookies()
    SHOTS.mkdir(parents=True, exist_ok=True)
    for name, viewport, scheme in (
        ("usage-light.png", {"width": 1000, "height": 1250}, "light"),
        ("usage-dark.png", {"width": 1000, "height": 1250}, "dark"),
        ("usage-phone.png", {"width": 375, "height": 1400}, "light"),
    ):
        context = browser.new_context(viewport=viewport, color_scheme=scheme)  # type: ignore[arg-type]
        context.add_cookies(cookies)  # type: ignore[arg-type]
        tab = context.new_page()
        tab.goto(url)
        expect(tab.locator("h1")).to_have_text("Usage")
        wide = tab.evaluate("document.documentElement.scrollWidth")
        assert wide <= viewport["width"], (name, wide)  # nothing runs off a phone's screen
        background = tab.evaluate("getComputedStyle(document.body).backgroundColor")
        assert (background == "rgb(13, 17, 23)") == (scheme == "dark"), background
        fill = tab.evaluate("getComputedStyle(document.querySelector('rect.s0')).fill")
        assert fill == ("rgb(68, 147, 248)" if scheme == "dark" else "rgb(9, 105, 218)")
        tab.screenshot(path=str(SHOTS / name), full_page=False)
        context.close()
