"""Every router of the browser side, included by ``create_app`` (app/main.py)."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.web import docs
from app.web.pages import STATIC


def include_web(app: FastAPI) -> None:
    """Mount the assets at ``/static``, serve ``/docs`` (app/web/docs.py) and include the page
    routers."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(docs.router)
