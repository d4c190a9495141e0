"""Every router of the browser side, included by ``create_app`` (app/main.py)."""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from app.ratelimit import enforce_rate_limit
from app.web import api, home, searchpage, signin
from app.web.bounce import SessionBounceMiddleware
from app.web.pages import STATIC


def include_web(app: FastAPI) -> None:
    """Mount the assets at ``/static``, include the page routers (and the sign-in API,
    rate-limited like the rest of /api), and add the middleware that lets a signed-in person
    arrive from another site's link (app/web/bounce.py)."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router, dependencies=[Depends(enforce_rate_limit)])
    app.include_router(signin.router)
    app.include_router(home.router)
    app.include_router(searchpage.router)
    app.add_middleware(SessionBounceMiddleware)
