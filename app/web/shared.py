"""The share-link pages: ``/s/{secret}`` shows the thread a live link opens to anyone holding
the link (API.md section 1), whatever the thread's visibility and whoever is signed in.

- ``GET /s/{secret}``: the thread page, counted and audited as one use of the link
  (``app.sharing.links.record_use``, ``via="page"``). With ``Accept: application/json`` (and
  not ``text/html``) it answers the thread's JSON instead, as ``GET /api/shared/{secret}`` does
  (``app.sharing.service.shared_json``, ``via="page_json"``); ``Vary: Accept``.
- ``GET /s/{secret}/messages?from=K``, ``/s/{secret}/m/{seq}``, ``/s/{secret}/m/{seq}/body``,
  ``/s/{secret}/m/{seq}/raw``:
  the same pieces as under ``/t/{id}`` (app/web/viewer.py). They check that the link is still
  live (a revoked link stops the next scroll) and are not counted as uses: they belong to the
  opening of the page that loads them.

An unknown or malformed secret is a 404 page; a revoked or expired link, or one whose thread
was deleted, a 410 page. Every answer carries ``X-Robots-Tag: noindex, nofollow`` and, as
every page, ``Referrer-Policy: no-referrer`` (the secret is in the URL).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Depends, Header, Path, Request, Response
from fastapi.responses import HTMLResponse

from app.audit.context import AuditContext
from app.database import SessionDep
from app.sharing.links import record_use, resolve
from app.sharing.service import shared_json
from app.web.reading import Loaded, read_shared
from app.web.session import WebPrincipal, web_principal
from app.web.viewer import (
    From,
    Loader,
    Seq,
    message_page,
    messages_fragment,
    raw_message,
    thread_page,
)

router = APIRouter(include_in_schema=False)

Secret = Annotated[str, Path(description="the share link's secret")]
NOINDEX = {"X-Robots-Tag": "noindex, nofollow"}
R = TypeVar("R", bound=Response)


def wants_json(accept: str | None) -> bool:
    """True when ``Accept`` asks for JSON and not HTML (a browser's always names text/html)."""
    if not accept:
        return False
    types = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return "application/json" in types and "text/html" not in types


def _audit(request: Request, principal: WebPrincipal) -> AuditContext:
    return AuditContext(
        principal=principal,
        client_ip=request.client.host if request.client else None,
        request_id=request.scope.get("state", {}).get("request_id"),
    )


def _live_loader(session: SessionDep, secret: Secret) -> Loader:
    """A loader of the link's thread that first finds the link live (404/410 otherwise)."""

    async def load(start: int, count: int, whole: bool) -> Loaded:
        link = await resolve(session, secret)
        await session.rollback()  # resolve only read; the page reads in a snapshot of its own
        return await read_shared(session, link.thread_id, start, count, whole)

    return load


LiveLoader = Annotated[Loader, Depends(_live_loader)]


def _noindex(response: R) -> R:
    response.headers.update(NOINDEX)
    return response


@router.get("/s/{secret}")
async def get_shared_page(
    request: Request,
    secret: Secret,
    session: SessionDep,
    principal: WebPrincipal,
    start: From = 0,
    accept: Annotated[str | None, Header()] = None,
) -> Response:
    """The shared thread's page (or its JSON for ``Accept: application/json``); one use."""
    audit = _audit(request, principal)
    if wants_json(accept):
        response = await shared_json(request, session, secret, audit, via="page_json")
    else:
        link = await resolve(session, secret)
        await record_use(
            session, link, audit, via="page", user_agent=request.headers.get("user-agent")
        )

        def load(first: int, count: int, whole: bool) -> Awaitable[Loaded]:
            return read_shared(session, link.thread_id, first, count, whole)

        response = await thread_page(request, f"/s/{secret}", load, start)
    response.headers["Vary"] = "Accept"
    return _noindex(response)


@router.get("/s/{secret}/messages")
async def get_shared_messages(
    request: Request, secret: Secret, load: LiveLoader, start: From = 0
) -> HTMLResponse:
    """One page of the shared thread's messages, as a fragment."""
    return _noindex(await messages_fragment(request, f"/s/{secret}", load, start))


@router.get("/s/{secret}/m/{seq}", dependencies=[Depends(web_principal)])  # the nav's session
async def get_shared_message(
    request: Request, secret: Secret, seq: Seq, load: LiveLoader
) -> HTMLResponse:
    """One message of the shared thread in full, as a page."""
    return _noindex(await message_page(request, f"/s/{secret}", load, seq, fragment=False))


@router.get("/s/{secret}/m/{seq}/body")
async def get_shared_message_body(
    request: Request, secret: Secret, seq: Seq, load: LiveLoader
) -> HTMLResponse:
    """One message of the shared thread in full, as a fragment."""
    return _noindex(await message_page(request, f"/s/{secret}", load, seq, fragment=True))


@router.get("/s/{secret}/m/{seq}/raw")
async def get_shared_message_raw(seq: Seq, load: LiveLoader) -> Response:
    """One message of the shared thread as its JSON object."""
    return _noindex(await raw_message(load, seq))
