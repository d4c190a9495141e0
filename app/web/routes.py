"""Every router of the browser side, included by ``create_app`` (app/main.py)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from fastapi import Depends, FastAPI, Request
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from app.headers import path_kind
from app.ratelimit import RateLimiter, caller_key, enforce_rate_limit
from app.routes import flat_routes
from app.web import (
    api,
    docs,
    home,
    provenancepage,
    searchpage,
    shared,
    signin,
    usagepage,
    viewer,
)
from app.web.bounce import SessionBounceMiddleware
from app.web.pages import STATIC
from app.web.session import WebPrincipal


async def enforce_page_rate_limit(request: Request, principal: WebPrincipal) -> None:
    """FastAPI dependency of the page routers: counts the request against the budget of
    ``LOOMSYNC_RATE_LIMIT`` (the limiter /api uses, app/ratelimit.py), keyed on the signed-in
    user of the session cookie (``user:<sub>``, the same budget as that user's tokens), else on
    the client IP. Over the budget the page error layer answers a 429 page with
    ``Retry-After`` (app/web/errors.py).

    Raises:
        RateLimited: 429.
    """
    limiter: RateLimiter | None = request.app.state.rate_limiter
    if limiter is not None:
        await limiter.hit(caller_key(request, principal))


async def favicon() -> FileResponse:
    """``/favicon.ico``: our icon (static/favicon.svg, also linked from base.html), for the
    browsers and pages (the Swagger UI's) that ask for it without a ``<link rel="icon">``;
    without it every tab logged a 404. An asset to app/headers.py (cacheable, like /static)."""
    return FileResponse(Path(STATIC) / "favicon.svg", media_type="image/svg+xml")


def include_web(app: FastAPI) -> None:
    """Mount the assets at ``/static``, serve ``/docs`` (app/web/docs.py), include the page
    routers, each rate-limited (:func:`enforce_page_rate_limit`; /docs and the assets are not:
    static files, no database, like the probes), the sign-in API (rate-limited like the rest
    of /api), and add the middleware
    that lets a signed-in person arrive from another site's link (app/web/bounce.py). The
    viewer's routers (app/web/viewer.py, app/web/shared.py) serve /t/… and /s/…."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_api_route("/favicon.ico", favicon, methods=["GET", "HEAD"], include_in_schema=False)
    app.include_router(docs.router)
    limited = [Depends(enforce_page_rate_limit)]
    app.include_router(viewer.router, dependencies=limited)
    app.include_router(shared.router, dependencies=limited)
    app.include_router(api.router, dependencies=[Depends(enforce_rate_limit)])
    app.include_router(signin.router, dependencies=limited)
    app.include_router(home.router, dependencies=limited)
    app.include_router(searchpage.router, dependencies=limited)
    app.include_router(provenancepage.router, dependencies=limited)
    app.include_router(usagepage.router, dependencies=limited)
    app.add_middleware(SessionBounceMiddleware)


class PageRoute(NamedTuple):
    """A page's path template (``/t/{thread_id}``, any router prefix included) and its route."""

    path: str
    route: APIRoute


def page_routes(app: FastAPI) -> list[PageRoute]:
    """Every route that answers a browser's ``GET`` with a page: the app's GET routes outside
    the API, the probes and the assets (:func:`app.headers.path_kind` ``"other"``), ``/docs``
    included, in the order they were added. The crawler test (tests/web/test_crawl.py) visits
    each of them."""
    found: list[PageRoute] = []
    for entry in flat_routes(app.router.routes):
        route = getattr(entry, "route", entry)  # FastAPI's RouteContext, or the route itself
        path = getattr(entry, "path", None)
        methods = getattr(entry, "methods", None) or set()
        if isinstance(route, APIRoute) and isinstance(path, str) and "GET" in methods:
            if path_kind(path) == "other":
                found.append(PageRoute(path, route))
    return found
