"""Every router of the browser side, included by ``create_app`` (app/main.py)."""

from __future__ import annotations

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles

from app.ratelimit import enforce_rate_limit
from app.web import api, home, searchpage, signin
from app.web.pages import STATIC


def include_web(app: FastAPI) -> None:
    """Mount the assets at ``/static`` and include the page routers (and the sign-in API,
    rate-limited like the rest of /api)."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(api.router, dependencies=[Depends(enforce_rate_limit)])
    app.include_router(signin.router)
    app.include_router(home.router)
    app.include_router(searchpage.router)
