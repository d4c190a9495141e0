"""The viewer in a real headless Chromium against a real uvicorn: hostile payloads neither run
nor leave their message box, a 10,000-message thread pages (scroll, jump to ``#m-N``, earlier
pages), "show all" loads a whole message, a share link opens its thread and gives 410 once
revoked. Every page is checked for script errors and CSP violations (the console)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from playwright.sync_api import ConsoleMessage, Dialog, Page, expect

from app.web.reading import PAGE
from tests.conftest import TokenFactory
from tests.servers import Server
from tests.web.documents import conversation, document, hostile_messages

TIMEOUT_MS = 20_000


def _store(server: Server, headers: dict[str, str], doc: dict[str, Any]) -> str:
    response = httpx.put(
        f"{server.base_url}/api/threads/{doc['id']}", json=doc, headers=headers, timeout=120
    )
    assert response.status_code == 201, response.text
    return str(doc["id"])


@pytest.fixture
def watched(page: Page) -> Iterator[tuple[Page, list[str]]]:
    """The tab, and every console error or dialog it showed (none is expected)."""
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and "Failed to load resource" not in message.text:
            problems.append(f"console: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        problems.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    page.on("console", on_console)
    page.on("dialog", on_dialog)
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on(
        "response",
        lambda response: (
            problems.append(f"{response.status} {response.url}")
            if response.status >= 400 and response.request.resource_type != "document"
            else None
        ),
    )
    page.set_default_timeout(TIMEOUT_MS)
    return page, problems


@pytest.fixture
def headers(auth: TokenFactory) -> dict[str, str]:
    """A bearer token of a user unique to the test."""
    return auth(f"viewer-{uuid.uuid4().hex[:10]}", org=f"org-{uuid.uuid4().hex[:10]}")


#: Runs in the page: every message box's rectangle against the list's, the page's width, and
#: whether the site header and the thread title are still on show.
_GEOMETRY = """() => {
  const list = document.querySelector("section.messages").getBoundingClientRect();
  const boxes = [...document.querySelectorAll("article.msg")].map((el) => {
    const r = el.getBoundingClientRect();
    return {id: el.id, left: r.left, right: r.right};
  });
  const visible = (sel) => {
    const el = document.querySelector(sel);
    const style = el && getComputedStyle(el);
    return !!el && style.display !== "none" && style.visibility !== "hidden" &&
      el.getBoundingClientRect().height > 0;
  };
  return {
    list: {left: list.left, right: list.right},
    boxes,
    pageWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    header: visible("header.site") && visible("h1.title"),
    pwned: window.__pwned === undefined ? null : String(window.__pwned),
    elements: document.querySelectorAll(
      "main script, main style, main svg, main img, main iframe, main object, main [style]"
    ).length,
    javascriptLinks: document.querySelectorAll('a[href^="javascript:"], a[href^="data:"]').length,
  };
}"""


def _check_contained(page: Page) -> None:
    geometry = page.evaluate(_GEOMETRY)
    assert geometry["pwned"] is None
    assert geometry["header"], "the page's own header was hidden"
    assert geometry["elements"] == 0
    assert geometry["javascriptLinks"] == 0
    assert geometry["pageWidth"] <= geometry["viewport"], "something widened the page"
    for box in geometry["boxes"]:
        assert box["left"] >= geometry["list"]["left"] - 1, box
        assert box["right"] <= geometry["list"]["right"] + 1, box


def test_hostile_payloads_neither_run_nor_leave_their_box(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    page, problems = watched
    messages = hostile_messages()
    doc = document(messages, title="<script>window.__pwned='title'</script>", visibility="public")
    thread_id = _store(web_server, headers, doc)
    page.goto(f"{web_server.base_url}/t/{thread_id}")
    expect(page.locator("h1.title")).to_have_text("<script>window.__pwned='title'</script>")
    expect(page.locator("article.msg")).to_have_count(min(PAGE, len(messages)))
    _check_contained(page)
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    _check_contained(page)
    for _ in range(4):  # the 10 MB line among them: "show all" shows its first FULL_CHARS
        link = page.locator("article.msg a.show-all").first
        seq = link.evaluate("(a) => a.closest('article').id")
        link.click()
        expect(page.locator(f"#{seq} p.raw")).to_be_visible()
    _check_contained(page)
    bidi = page.locator("article.msg", has_text="bidi:").first
    expect(bidi.locator("span.ctl", has_text="U+202E").first).to_be_visible()
    nul = page.locator("article.msg", has_text="nul:").first
    expect(nul.locator("span.ctl", has_text="U+0000").first).to_be_visible()
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    _check_contained(page)
    assert problems == []


def test_ten_thousand_message_thread_pages_on_scroll_and_jumps_by_link(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    page, problems = watched
    thread_id = _store(web_server, headers, document(conversation(10_000), visibility="public"))
    url = f"{web_server.base_url}/t/{thread_id}"
    page.goto(url)
    messages = page.locator("article.msg")
    expect(messages).to_have_count(PAGE)
    page.locator("a.pager.more").scroll_into_view_if_needed()
    expect(messages).to_have_count(2 * PAGE)
    page.mouse.wheel(0, 100_000)
    expect(page.locator(f"#m-{2 * PAGE}")).to_be_attached()
    assert page.locator("a.pager.earlier").count() == 0
    page.goto(f"{url}#m-9876")
    expect(page.locator("#m-9876")).to_be_in_viewport()
    assert page.url.endswith(f"?from={9876 - 9876 % PAGE}#m-9876")
    expect(page.locator("#m-9876")).to_contain_text("message 9876")
    # The jump opened the message's boxes and the browser may still be scrolling to the URL's
    # fragment while the page loads: the reader's place is what it is once that settles.
    page.wait_for_load_state("networkidle")
    first = page.locator(f"#m-{9876 - 9876 % PAGE}")
    earlier = page.locator("a.pager.earlier")
    earlier.scroll_into_view_if_needed()
    top = first.bounding_box()
    earlier.click()
    expect(page.locator(f"#m-{9876 - 9876 % PAGE - 1}")).to_be_attached()
    assert top is not None
    # Prepending keeps the reader's place once the page has laid the new messages out (the
    # script restores the scroll position after they are attached: measured at once, a loaded
    # machine caught the frame in between).
    page.wait_for_function(
        "([id, y]) => Math.abs(document.getElementById(id).getBoundingClientRect().top - y) < 2",
        arg=[f"m-{9876 - 9876 % PAGE}", top["y"]],
        timeout=5_000,
    )
    page.goto(f"{url}#m-9999")
    expect(page.locator("#m-9999")).to_be_in_viewport()
    assert page.locator("a.pager.more").count() == 0
    assert problems == []


def test_show_all_replaces_the_preview_with_the_whole_message(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    page, problems = watched
    output = "\n".join(f"line {n}" for n in range(3_000))
    messages = [{"role": "tool", "tool_name": "shell", "content": output}]
    thread_id = _store(web_server, headers, document(messages, visibility="public"))
    page.goto(f"{web_server.base_url}/t/{thread_id}")
    box = page.locator("#m-0 details.box")
    expect(box.locator("summary")).to_contain_text("shell")
    expect(box.locator("summary .cut")).to_have_text("preview")
    box.locator("summary").click()
    expect(box.locator("pre")).to_contain_text("line 39")
    expect(box.locator("pre")).not_to_contain_text("line 2999")
    page.locator("#m-0 a.show-all").click()
    expect(page.locator("#m-0 pre")).to_contain_text("line 2999")
    expect(page.locator("#m-0 details.box")).to_have_attribute("open", "")
    assert problems == []


def test_show_all_of_a_collapsed_box_opens_it(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    # a newcomer clicked "Show all" under a closed tool output: the whole text loaded into a
    # box that stayed closed, so nothing visible happened
    page, problems = watched
    output = "\n".join(f"line {n}" for n in range(3_000))
    messages = [{"role": "tool", "tool_name": "shell", "content": output}]
    thread_id = _store(web_server, headers, document(messages, visibility="public"))
    page.goto(f"{web_server.base_url}/t/{thread_id}")
    expect(page.locator("#m-0 details.box")).not_to_have_attribute("open", "")
    page.locator("#m-0 a.show-all").click()
    expect(page.locator("#m-0 details.box")).to_have_attribute("open", "")
    expect(page.locator("#m-0 pre")).to_contain_text("line 2999")
    expect(page.locator("#m-0 pre")).to_be_visible()
    assert problems == []


def test_share_link_opens_the_thread_and_revocation_gives_410(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    """The whole flow through the real API: make a link, open its URL, revoke it."""
    page, problems = watched
    doc = document(conversation(PAGE + 10), title="Only by link")
    thread_id = _store(web_server, headers, doc)
    assert page.goto(f"{web_server.base_url}/t/{thread_id}").status == 404
    links = f"{web_server.base_url}/api/threads/{thread_id}/share-links"
    made = httpx.post(links, json={}, headers=headers, timeout=30)
    assert made.status_code == 201, made.text
    url = made.json()["url"]
    assert url.startswith(f"{web_server.base_url}/s/")
    response = page.goto(url)
    assert response is not None
    assert response.status == 200
    expect(page.locator("h1.title")).to_have_text("Only by link")
    expect(page.locator("#m-2")).to_contain_text("message 2")
    revoked = httpx.delete(f"{links}/{made.json()['id']}", headers=headers, timeout=30)
    assert revoked.status_code == 204
    page.locator("a.pager.more").scroll_into_view_if_needed()
    expect(page.locator("a.pager.failed")).to_contain_text("410")
    assert page.locator(f"#m-{PAGE}").count() == 0
    gone = page.reload()
    assert gone is not None
    assert gone.status == 410
    assert [p for p in problems if "410" not in p] == []


def test_jump_fetches_the_page_in_place_and_opens_the_target_boxes(
    web_server: Server, headers: dict[str, str], watched: tuple[Page, list[str]]
) -> None:
    """#m-N beyond the loaded page costs one fragment request, not a second page load (G4),
    and a tool output at N is shown open, not collapsed (G6)."""
    page, problems = watched
    messages: list[dict[str, Any]] = conversation(PAGE + 30)
    messages[PAGE + 20] = {"role": "tool", "tool_name": "grep", "content": "found the needle"}
    messages[3] = {"role": "tool", "tool_name": "grep", "content": "an early needle"}
    thread_id = _store(web_server, headers, document(messages, visibility="public"))
    url = f"{web_server.base_url}/t/{thread_id}"
    documents: list[str] = []
    page.on("request", lambda r: documents.append(r.url) if r.resource_type == "document" else None)
    page.goto(f"{url}#m-{PAGE + 20}")
    target = page.locator(f"#m-{PAGE + 20}")
    expect(target).to_be_in_viewport()
    expect(target.locator("details").first).to_have_attribute("open", "")
    expect(target).to_contain_text("found the needle")
    assert len(documents) == 1, documents
    assert page.url.endswith(f"?from={PAGE}#m-{PAGE + 20}")
    page.goto(f"{url}#m-3")  # on the first page: opened too
    expect(page.locator("#m-3 details").first).to_have_attribute("open", "")
    assert problems == []
