"""The interactive API documentation at ``/docs``: Swagger UI served entirely by this app.

Swagger UI's distribution comes from the ``swagger-ui-bundle-v2`` package (swagger-ui's own
``dist`` files, unchanged, versioned as swagger-ui is), so the page loads nothing from another
origin and works offline. The page has no inline script: its settings travel as JSON in a
``data-`` attribute, read by ``/static/docs.js``, which starts Swagger UI. Its policy
(:func:`app.web.pages.page_csp` without a nonce) allows scripts, styles and requests to this origin only, ``data:`` images
(Swagger UI's icons) and no framing; the online validator badge is off
(``validatorUrl: null``), so no request leaves the server's origin.

Routes:

- ``GET /docs``: the page (``text/html``, ``Cache-Control: no-store``);
- ``GET /docs/assets/swagger-ui-<version>/<file>``: Swagger UI's files (a fixed list), cacheable
  for a year (``immutable``: a new version has a new path); any other name is a 404.

ReDoc is not served (its bundle injects inline styles and a web worker from ``blob:``, which
the strict policy forbids); the OAuth2 redirect page is not either: the API takes bearer
tokens, not an OAuth2 flow Swagger UI could run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import swagger_ui_default_parameters
from fastapi.responses import FileResponse, HTMLResponse
from swagger_ui_bundle import swagger_ui_path

from app.errors import NotFound
from app.routes import ApiRouter
from app.web.pages import environment, page_headers

#: The bundled distribution's folder (the package is installed unzipped, as wheels are).
DIST = Path(str(swagger_ui_path))
#: Its versioned name, e.g. ``swagger-ui-5.31.0``.
SWAGGER_UI = DIST.name
ASSETS = f"/docs/assets/{SWAGGER_UI}"
#: The files of the distribution the page uses (and the source maps browser tools ask for).
ASSET_FILES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui-bundle.js.map": "application/json",
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui.css.map": "application/json",
    "favicon-32x32.png": "image/png",
}
ASSET_CACHE = "public, max-age=31536000, immutable"

router = ApiRouter(include_in_schema=False)


def swagger_config(app: FastAPI, openapi_url: str) -> dict[str, Any]:
    """The object given to ``SwaggerUIBundle``: FastAPI's defaults, the app's
    ``swagger_ui_parameters``, the document's URL and no online validator."""
    return {
        **swagger_ui_default_parameters,
        **(app.swagger_ui_parameters or {}),
        "url": openapi_url,
        "validatorUrl": None,
    }


@router.get("/docs", response_class=HTMLResponse)
async def swagger_ui(request: Request) -> HTMLResponse:
    """The Swagger UI page for ``/openapi.json`` (200 ``text/html``, its own strict CSP)."""
    app: FastAPI = request.app
    root_path = request.scope.get("root_path", "").rstrip("/")
    html = environment.get_template("docs.html").render(
        title=f"{app.title} - API documentation",
        assets=root_path + ASSETS,
        script=root_path + "/static/docs.js",
        config=swagger_config(app, root_path + (app.openapi_url or "/openapi.json")),
    )
    return HTMLResponse(html, headers=page_headers(nonce=None))


@router.get(f"{ASSETS}/{{name}}")
async def swagger_asset(name: str) -> FileResponse:
    """One of :data:`ASSET_FILES` (200, cacheable for a year); any other name 404."""
    media_type = ASSET_FILES.get(name)
    if media_type is None:
        raise NotFound(f"No documentation asset {name[:64]!r}.")
    return FileResponse(DIST / name, media_type=media_type, headers={"Cache-Control": ASSET_CACHE})
