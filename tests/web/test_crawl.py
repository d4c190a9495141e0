"""Every page of the app, crawled in a real Chromium that can reach nothing but the server:
no script, style, image, font, frame or form target from another origin, a strict CSP, the
page headers, no CSP violation and no script error, signed in and anonymous.

The pages are the app's own list (``app.web.routes.page_routes``): a page route added later is
crawled without touching this file, and one with a parameter the table below has no value for
fails :func:`test_the_crawler_has_a_value_for_every_page_parameter`. From those, same-origin
links are followed (up to :data:`MAX_PAGES`). The threads crawled are a real transcript and one
whose every message tries to load something from elsewhere.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urldefrag, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, BrowserContext

from app.config import Settings
from app.headers import path_kind
from app.main import create_app
from app.web.routes import PageRoute, page_routes
from app.web.session import COOKIE
from loomsync.core.document.ids import ThreadId
from tests.conftest import THREADS_DIR, TokenFactory, load_thread
from tests.documents import thread_doc
from tests.servers import Server
from tests.web import rows
from tests.web.crawl import (
    DOM_URLS,
    UnknownParameter,
    dom_urls,
    fill,
    same_origin,
    strict_csp_problems,
)
from tests.web.offline import offline

MAX_PAGES = 40
REAL_THREAD = THREADS_DIR / "T-b68cb16e-c614-42d1-86fc-f0875d42724d.json"
ELSEWHERE = "https://elsewhere.example"
#: Messages that each try to make the page load something from another origin.
HOSTILE = [
    f'<img src="{ELSEWHERE}/pixel.png" alt="raw img">',
    f"![markdown image]({ELSEWHERE}/md.png)",
    f'<link rel="stylesheet" href="{ELSEWHERE}/x.css"><link rel="preload" href="{ELSEWHERE}/p.js" as="script">',
    f'<style>@import url("{ELSEWHERE}/i.css"); body {{ background: url({ELSEWHERE}/b.png) }}</style>',
    f'<iframe src="{ELSEWHERE}/frame"></iframe><object data="{ELSEWHERE}/o.swf"></object>',
    f'<video poster="{ELSEWHERE}/poster.png" src="{ELSEWHERE}/v.mp4"></video>',
    f'<svg><image href="{ELSEWHERE}/s.svg"/><use href="{ELSEWHERE}/u.svg#x"/></svg>',
    f'<form action="{ELSEWHERE}/steal"><button formaction="{ELSEWHERE}/b">go</button></form>',
    f'<div style="background-image:url({ELSEWHERE}/div.png)">styled</div>',
    f'<script src="{ELSEWHERE}/evil.js"></script><script>fetch("{ELSEWHERE}/inline")</script>',
    f"<a href=\"javascript:fetch('{ELSEWHERE}/js')\">javascript link</a> [md js](javascript:alert(1))",
    f'<img srcset="{ELSEWHERE}/1x.png 1x, {ELSEWHERE}/2x.png 2x" src="/x.png">',
    f'<meta http-equiv="refresh" content="0;url={ELSEWHERE}/refresh">',
    f'<base href="{ELSEWHERE}/"><img src="relative.png">',
]


@dataclass
class Seed:
    """What the crawl reads: a user, their threads, a live share link and a login code."""

    user_id: str
    org_id: str
    cookie: str
    real_thread: str
    values: dict[str, str]


@pytest.fixture(scope="module")
def seed(web_server: Server, auth: TokenFactory, database_url: str) -> Seed:
    suffix = uuid.uuid4().hex[:10]
    user_id, org_id = f"crawler-{suffix}", f"crawl-org-{suffix}"
    headers = auth(user_id, org=org_id)
    real = {**load_thread(REAL_THREAD), "id": ThreadId.new()}
    hostile_id = ThreadId.new()
    hostile = thread_doc(
        hostile_id,
        *HOSTILE,
        visibility="public",
        metadata={"title": HOSTILE[0], "tags": [HOSTILE[2]]},
    )
    hostile["conversation"]["messages"].append(
        {
            "role": "assistant",
            "content": HOSTILE[1],
            "tool_calls": [
                {"id": "call-1", "tool_name": HOSTILE[4], "arguments_json": {"html": HOSTILE[3]}}
            ],
        }
    )
    hostile["conversation"]["messages"].append(
        {
            "role": "tool",
            "tool_call_id": "call-1",
            "tool_name": "shell",
            "content": "\n".join(HOSTILE),
        }
    )
    with httpx.Client(base_url=web_server.base_url, headers=headers, timeout=60) as http:
        for doc in (real, hostile):
            created = http.put(f"/api/threads/{doc['id']}", json=doc)
            assert created.status_code == 201, created.text
    return Seed(
        user_id=user_id,
        org_id=org_id,
        cookie=rows.run(rows.session_cookie(database_url, user_id, org_id)),
        real_thread=str(real["id"]),
        values={
            # the public hostile thread, so both identities see it; the real one is reached
            # through the links of the signed-in pages
            "thread_id": str(hostile_id),
            "seq": str(len(hostile["conversation"]["messages"]) - 1),  # the tool output
            "secret": rows.run(rows.insert_share_link(database_url, hostile_id, user_id)),
            "code": rows.run(rows.insert_login_code(database_url, user_id, org_id)),
            "q": "elsewhere",
            "sha": "0123456789abcdef",  # the commit page (issue 32): no session is behind it
        },
    )


@pytest.fixture(scope="module")
def pages(settings: Settings) -> list[PageRoute]:
    """The app's page routes, as the app itself lists them."""
    found = page_routes(create_app(settings))
    assert "/docs" in {page.path for page in found}
    return found


@pytest.fixture(params=["anonymous", "signed_in"])
def crawl_context(
    request: pytest.FixtureRequest, browser: Browser, web_server: Server, seed: Seed
) -> Iterator[BrowserContext]:
    made = browser.new_context()
    if request.param == "signed_in":
        made.add_cookies(
            [
                {
                    "name": COOKIE,
                    "value": seed.cookie,
                    "url": web_server.base_url,
                    "httpOnly": True,
                    "sameSite": "Strict",
                }
            ]
        )
    yield made
    made.close()


@dataclass
class Visit:
    """One page the crawl loaded: its URL, status and what was wrong with it."""

    url: str
    status: int
    problems: list[str] = field(default_factory=list)


def visit(context: BrowserContext, base_url: str, url: str) -> tuple[Visit, list[str]]:
    """Load ``url`` and check it; the visit and the same-origin page links it holds."""
    page = context.new_page()
    try:
        response = page.goto(url, wait_until="load")
        assert response is not None, url
        headers = response.headers
        found = Visit(url, response.status)
        if response.status >= 500:
            found.problems.append(f"status {response.status}")
        found.problems += strict_csp_problems(headers.get("content-security-policy"))
        expected = {
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
            "referrer-policy": "no-referrer",
        }
        found.problems += [
            f"{name}: {headers.get(name)}" for name, v in expected.items() if headers.get(name) != v
        ]
        links = []
        for item in dom_urls(page.evaluate(DOM_URLS)):
            scheme = urlsplit(item.resolved).scheme
            if item.kind == "load" and not same_origin(item.resolved, base_url):
                found.problems.append(f"<{item.tag} {item.attr}> loads {item.value}")
            elif item.kind == "link" and scheme in ("javascript", "vbscript", "data"):
                found.problems.append(f"<{item.tag} {item.attr}> is a {scheme}: link")
            elif item.kind == "link" and same_origin(item.resolved, base_url):
                links.append(urldefrag(item.resolved).url)
        return found, links
    finally:
        page.close()


def crawl(context: BrowserContext, base_url: str, start: list[str]) -> list[Visit]:
    """Visit ``start`` (paths), then the same-origin page links found, up to MAX_PAGES."""
    queue = [base_url + path for path in start]
    seen: set[str] = set()
    visits: list[Visit] = []
    while queue and len(visits) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        seen.add(url)
        found, links = visit(context, base_url, url)
        visits.append(found)
        queue += [link for link in links if path_kind(urlsplit(link).path) == "other"]
    return visits


def test_the_crawler_has_a_value_for_every_page_parameter(
    pages: list[PageRoute], seed: Seed
) -> None:
    missing = []
    for page in pages:
        try:
            fill(page, seed.values)
        except UnknownParameter as exc:
            missing.append(str(exc))
    assert missing == [], "add values to the crawler's table (tests/web/test_crawl.py seed)"


def test_every_page_loads_only_this_origin_with_a_strict_csp(
    crawl_context: BrowserContext, web_server: Server, pages: list[PageRoute], seed: Seed
) -> None:
    signed_in = bool(crawl_context.cookies())
    start = [fill(page, seed.values) for page in pages]
    start.append(f"/no-such-page-{uuid.uuid4().hex}")  # the 404 page is a page too
    with offline(crawl_context) as seen:
        visits = crawl(crawl_context, web_server.base_url, start)
    assert len(visits) >= len(start)
    by_url = {v.url: v for v in visits}
    for path in start:
        assert web_server.base_url + path in by_url, path
    bad = {v.url: v.problems for v in visits if v.problems}
    assert bad == {}
    seen.assert_clean()
    assert by_url[web_server.base_url + start[-1]].status == 404
    if signed_in and "/" in {page.path for page in pages}:
        # the home page lists the real thread, and the crawl got there by its links
        real = web_server.base_url + f"/t/{seed.real_thread}"
        assert by_url[real].status == 200, sorted(by_url)


def test_the_checks_see_what_they_are_for(context: BrowserContext, web_server: Server) -> None:
    """The crawler's checks on a page that breaks each rule (so they can fail)."""
    page_html = "\n".join(h for h in HOSTILE if "<meta" not in h and "<base" not in h)
    with offline(context) as seen:
        page = context.new_page()  # about:blank: no policy, so the loads become requests
        page.set_content(page_html)
        found = dom_urls(page.evaluate(DOM_URLS))
        strict = context.new_page()  # a page of the app: its policy refuses them first
        strict.goto(f"{web_server.base_url}/docs")
        strict.evaluate(
            "url => { const i = document.createElement('img'); i.src = url;"
            " document.body.append(i); }",
            f"{ELSEWHERE}/after-load.png",
        )
        strict.wait_for_timeout(300)
    loads = {item.resolved for item in found if item.kind == "load"}
    foreign = {url for url in loads if not same_origin(url, web_server.base_url)}
    for expected in (
        "pixel.png",
        "x.css",
        "i.css",
        "b.png",
        "frame",
        "o.swf",
        "poster.png",
        "s.svg",
        "steal",
        "div.png",
        "evil.js",
        "2x.png",
    ):
        assert any(url.endswith(expected) for url in foreign), expected
    assert any(item.value.startswith("javascript:") for item in found if item.kind == "link")
    assert any(url.startswith(ELSEWHERE) for url in seen.blocked), seen.blocked
    assert not any("after-load" in url for url in seen.blocked), "the CSP let it through"
    assert any("after-load" in text for text in seen.csp_violations), seen.csp_violations
    assert strict_csp_problems(None) == ["no Content-Security-Policy"]
    assert strict_csp_problems("default-src 'none'; frame-ancestors 'none'; base-uri 'none'") == []
    loose = strict_csp_problems(
        "default-src 'self'; script-src 'self' 'unsafe-inline' https:; frame-ancestors *; base-uri 'none'"
    )
    assert "script-src allows 'unsafe-inline'" in loose
    assert "script-src allows https:" in loose
    assert any(problem.startswith("default-src is") for problem in loose)
    assert any(problem.startswith("frame-ancestors is") for problem in loose)
