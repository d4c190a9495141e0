"""``/docs``: Swagger UI served by the app itself, working in a real Chromium that can reach
nothing but the server (app/web/docs.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import BrowserContext, expect

from app.config import Settings
from app.main import create_app
from app.web.docs import ASSET_FILES, ASSETS, SWAGGER_UI
from app.web.routes import page_routes
from tests.servers import Server
from tests.web.offline import offline

WEB_MD = Path(__file__).resolve().parents[2] / "docs" / "web.md"


def test_docs_work_offline_in_chromium(web_server: Server, context: BrowserContext) -> None:
    with offline(context) as seen:
        page = context.new_page()
        response = page.goto(f"{web_server.base_url}/docs")
        assert response is not None
        assert response.status == 200
        csp = response.headers["content-security-policy"]
        assert "script-src 'self';" in csp
        assert "unsafe" not in csp
        # the operations of the real OpenAPI document are listed, and one of them opens
        health = page.locator("#operations-health-health_health_get")
        expect(health).to_be_visible(timeout=15_000)
        operations = page.locator(".opblock").count()
        document = httpx.get(f"{web_server.base_url}/openapi.json").json()
        listed = sum(len(methods) for methods in document["paths"].values())
        assert operations == listed
        # "try it out" sends a real request to this server and shows its answer
        health.locator(".opblock-summary").click()
        page.get_by_role("button", name="Try it out").click()
        page.get_by_role("button", name="Execute").click()
        expect(
            page.locator(".live-responses-table tr.response .response-col_status").first
        ).to_have_text("200", timeout=10_000)
    seen.assert_clean()
    assert seen.requested, "the page made no request at all"
    hosts = {urlsplit(url).netloc for url in seen.requested if url.startswith("http")}
    assert hosts == {urlsplit(web_server.base_url).netloc}


def test_docs_page_loads_only_its_own_files(web_server: Server) -> None:
    page = httpx.get(f"{web_server.base_url}/docs")
    assert page.status_code == 200
    assert page.headers["cache-control"] == "no-store"
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert sources, page.text
    for source in sources:
        assert source.startswith("/"), source
        assert not source.startswith("//"), source
    assert "<script>" not in page.text  # no inline script: the CSP has no nonce for one
    config = json.loads(
        re.search(r'data-config="([^"]+)"', page.text)[1].replace("&#34;", '"')  # type: ignore[index]
    )
    assert config["url"] == "/openapi.json"
    assert config["validatorUrl"] is None


def test_swagger_assets_are_cacheable_and_listed_only(web_server: Server) -> None:
    with httpx.Client(base_url=web_server.base_url) as http:
        for name, media_type in ASSET_FILES.items():
            asset = http.get(f"{ASSETS}/{name}")
            assert asset.status_code == 200, name
            assert asset.headers["content-type"] == media_type
            assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
            assert asset.headers["x-content-type-options"] == "nosniff"
        assert SWAGGER_UI.startswith("swagger-ui-")
        # the distribution's own index.html would load the petstore from the internet
        for name in (
            "index.html",
            "swagger-initializer.js",
            "..%2F__init__.py",
            "oauth2-redirect.html",
        ):
            assert http.get(f"{ASSETS}/{name}").status_code == 404, name
        assert http.get("/redoc").status_code == 404
        assert http.get("/docs/oauth2-redirect").status_code == 404


def test_docs_web_md_names_every_page(settings: Settings) -> None:
    """docs/web.md describes each page route the app serves (each fixed part of its path)."""
    text = WEB_MD.read_text()
    missing = []
    for page in page_routes(create_app(settings)):
        parts = [part for part in page.path.split("/") if part and not part.startswith("{")]
        missing += [f"{page.path}: /{part}" for part in parts if f"/{part}" not in text]
        if page.path == "/" and "| `/` |" not in text:
            missing.append("/")
    assert missing == []
