"""Every router of the browser side, included by ``create_app`` (app/main.py)."""

from __future__ import annotations

from typing import NamedTuple

from fastapi import Depends, FastAPI
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles

from app.headers import path_kind
from app.ratelimit import enforce_rate_limit
from app.routes import flat_routes
from app.web import api, docs, home, searchpage, shared, signin, viewer
from app.web.bounce import SessionBounceMiddleware
from app.web.pages import STATIC


def include_web(app: FastAPI) -> None:
    """Mount the assets at ``/static``, serve ``/docs`` (app/web/docs.py), include the page
    routers (and the sign-in API, rate-limited like the rest of /api), and add the middleware
    that lets a signed-in person arrive from another site's link (app/web/bounce.py). The
    viewer's routers (app/web/viewer.py, app/web/shared.py) serve /t/… and /s/…."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(docs.router)
    app.include_router(viewer.router)
    app.include_router(shared.router)
    app.include_router(api.router, dependencies=[Depends(enforce_rate_limit)])
    app.include_router(signin.router)
    app.include_router(home.router)
    app.include_router(searchpage.router)
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
