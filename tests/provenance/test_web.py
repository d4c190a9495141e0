"""The commit page, the file page and the thread page's files (issue 32 item 4) in a real
headless Chromium against a real uvicorn: the sessions listed link to the exact messages,
and another user's private thread is never named."""

from __future__ import annotations

import uuid
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from tests.web.test_signin_browser import Site
from tests.web.test_signin_browser import site as site

ROOT = "/home/dev/shop"
REPO = "github.com/acme/shop"


def _doc(title: str, visibility: str, commits: list[str], new_text: str) -> dict[str, Any]:
    edit = {"file_path": f"{ROOT}/src/cart.py", "old_string": "", "new_string": new_text}
    return {
        "id": f"T-{uuid.uuid4()}",
        "version": 0,
        "visibility": visibility,
        "workspace_root": ROOT,
        "git_remote_url": REPO,
        "git_commits": commits,
        "metadata": {"title": title},
        "conversation": {
            "messages": [
                {"role": "user", "content": "fix the cart"},
                {
                    "role": "assistant",
                    "content": "editing",
                    "tool_calls": [{"id": "1", "tool_name": "Edit", "arguments_json": edit}],
                },
            ]
        },
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


def test_commit_and_file_pages_link_to_the_messages(site: Site, page: Page) -> None:
    org = f"org-{uuid.uuid4().hex[:8]}"
    alice, alice_token = site.user("alice", org=org)
    _, bob_token = site.user("bob", org=org)
    sha = uuid.uuid4().hex + "0123abcd"
    shared = _put(site, alice_token, _doc("Cart totals", "organization", [sha], "total = 1"))
    hidden = _put(site, bob_token, _doc("Bob secret plan", "private", [sha], "total = 2"))
    site.sign_in(page, alice, alice_token)

    page.goto(site.url(f"/commits/{sha[:9]}"))
    expect(page.locator("h1")).to_have_text(f"Sessions behind commit {sha[:9]}")
    expect(page.locator(".thread-row .title")).to_have_text(["Cart totals"])
    assert "Bob secret plan" not in page.content()
    assert hidden not in page.content()
    link = page.locator(".thread-row a.message-link").first
    assert link.get_attribute("href") == f"/t/{shared}#m-1"
    page.locator(".thread-row a.file-link").first.click()
    expect(page.locator("h1")).to_have_text("Sessions that touched src/cart.py")
    expect(page.locator(".thread-row .title")).to_have_text(["Cart totals"])
    page.locator(".thread-row a.message-link").first.click()
    expect(page.locator("#m-1")).to_be_visible()
    expect(page.locator("section.thread-files a.file-link")).to_have_text(["src/cart.py"])
    commit_link = page.locator("a.commit-link").first
    assert commit_link.get_attribute("href") == f"/commits/{sha}"

    page.goto(site.url("/files?path="))
    expect(page.locator("h1")).to_have_text("Bad request")


def test_pages_with_nul_or_another_spelling_of_the_remote(site: Site, page: Page) -> None:
    """NUL in a page's query finds nothing (no 500/503 page); the repository filter takes
    the remote in the spelling git prints it."""
    alice, token = site.user("alice")
    sha = uuid.uuid4().hex
    mine = _put(
        site,
        token,
        {
            **_doc("Spelled remote", "private", [sha], "x = 1"),
            "git_remote_url": f"https://{REPO}.git",
        },
    )
    site.sign_in(page, alice, token)
    for url in ("/files?path=a%00b", f"/commits/{sha[:8]}?repository=%00"):
        answer = page.goto(site.url(url))
        assert answer is not None, url
        assert answer.status == 200, url
    page.goto(site.url(f"/commits/{sha[:8]}?repository=git@github.com:acme/shop.git"))
    expect(page.locator(".thread-row .title")).to_have_text(["Spelled remote"])
    page.goto(site.url(f"/files?path=src/cart.py&repository={REPO}"))
    assert mine in page.content()
