"""The share-link pages: ``/s/{secret}`` shows the thread a live link opens to anyone holding
the link (API.md section 1), whatever the thread's visibility and whoever is signed in.

- ``GET /s/{secret}``: the thread page, counted and audited as one use of the link
  (``app.sharing.links.record_use``, ``via="page"``). With ``Accept: application/json`` (and
  not ``text/html``) it answers the thread's JSON instead, as ``GET /api/shared/{secret}`` does
  (``app.sharing.service.shared_json``, ``via="page_json"``); ``Vary: Accept``.
- ``GET /s/{secret}/messages?from=K``, ``/s/{secret}/m/{seq}``, ``/s/{secret}/m/{seq}/body``,
  ``/s/{secret}/m/{seq}/raw``:
  the same pieces as under ``/t/{id}`` (app/web/viewer.py). Each checks that the link is still
  live (a revoked link stops the next scroll) and is counted and audited as a use
  (``via="fragment"``): each reads part of the thread, and without this the whole thread could
  be read through them with no audit event and ``use_count`` 0 (review finding G3). So
  ``use_count`` counts reads of the thread through the link (an opening plus what it loaded),
  not openings.

A use is recorded after the answer is built, so a request that fails (``?from=`` past the end:
404) is not a use; the read's snapshot ends before the use is committed.

An unknown or malformed secret is a 404 page; a revoked or expired link, or one whose thread
was deleted, a 410 page. Every answer carries ``X-Robots-Tag: noindex, nofollow`` and, as
every page, ``Referrer-Policy: no-referrer`` (the secret is in the URL).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Annotated, TypeVar

from fastapi import Depends, Header, Path, Request, Response
from fastapi.responses import HTMLResponse

from app.audit.context import audit_context
from app.database import SessionDep
from app.routes import ApiRouter
from app.sharing.links import Via, record_use, resolve
from app.sharing.service import shared_json
from app.web.reading import Loaded, read_shared
from app.web.session import WebPrincipal
from app.web.viewer import (
    From,
    Loader,
    Seq,
    message_page,
    messages_fragment,
    raw_message,
    thread_page,
)

router = ApiRouter(include_in_schema=False)

Secret = Annotated[str, Path(description="the share link's secret")]
NOINDEX = {"X-Robots-Tag": "noindex, nofollow"}
R = TypeVar("R", bound=Response)


def _quality(parameters: list[str]) -> float:
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "q":
            try:
                quality = float(value.strip())
            except ValueError:
                return 0.0
            return quality if 0.0 <= quality <= 1.0 else 0.0
    return 1.0


def wants_json(accept: str | None) -> bool:
    """True when ``Accept`` prefers JSON to HTML, by its q-values (RFC 9110 section 12.5.1:
    the most specific range naming a type gives its weight; ``q=0`` is "not acceptable"):
    ``application/json`` must be acceptable and weigh more than ``text/html``; at equal q, a
    type named outright beats one only a wildcard covers (``application/json, */*`` is JSON).
    A browser's ``Accept`` names text/html at the top weight, so it always gets the page; no
    ``Accept``, ``*/*`` or ``text/html, application/json`` gives the page too."""
    if not accept:
        return False
    weights: dict[str, float] = {}
    for part in accept.split(","):
        media, *parameters = part.split(";")
        media = media.strip().lower()
        if media:
            weights[media] = _quality(parameters)

    def weight(media_type: str) -> tuple[float, int]:
        kind = media_type.split("/", 1)[0]
        for specificity, candidate in ((2, media_type), (1, f"{kind}/*"), (0, "*/*")):
            if candidate in weights:
                return weights[candidate], specificity
        return 0.0, 0

    json_weight = weight("application/json")
    return json_weight[0] > 0 and json_weight > weight("text/html")


class Counted:
    """The live link of the request's secret (404/410 otherwise), a loader of its thread, and
    :meth:`use`, which records the request as one use once its answer is built."""

    def __init__(self, request: Request, session: SessionDep, principal: WebPrincipal) -> None:
        self.request, self.session, self.principal = request, session, principal

    async def open(self, secret: str) -> Loader:
        """Resolve ``secret`` (404 unknown, 410 revoked/expired/deleted); its thread's loader."""
        link = await resolve(self.session, secret)
        await self.session.rollback()  # resolve only read; the page reads in its own snapshot
        self.link = link

        def load(first: int, count: int, whole: bool) -> Awaitable[Loaded]:
            return read_shared(self.session, link.thread_id, first, count, whole)

        return load

    async def use(self, response: R, via: Via) -> R:
        """Count and audit one use (after the read's snapshot ended), then ``response``.

        Raises:
            LinkGone: the link died while the answer was built (410).
        """
        await self.session.rollback()
        await record_use(
            self.session,
            self.link,
            audit_context(self.request, self.principal),
            via=via,
            user_agent=self.request.headers.get("user-agent"),
        )
        return _noindex(response)


Uses = Annotated[Counted, Depends(Counted)]


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
    if wants_json(accept):
        audit = audit_context(request, principal)
        response = await shared_json(request, session, secret, audit, via="page_json")
    else:
        counted = Counted(request, session, principal)
        page = await thread_page(request, f"/s/{secret}", await counted.open(secret), start)
        response = await counted.use(page, "page")
    response.headers["Vary"] = "Accept"
    return _noindex(response)


@router.get("/s/{secret}/messages")
async def get_shared_messages(
    request: Request, secret: Secret, uses: Uses, start: From = 0
) -> HTMLResponse:
    """One page of the shared thread's messages, as a fragment; one use."""
    load = await uses.open(secret)
    return await uses.use(await messages_fragment(request, f"/s/{secret}", load, start), "fragment")


@router.get("/s/{secret}/m/{seq}")
async def get_shared_message(
    request: Request, secret: Secret, seq: Seq, uses: Uses
) -> HTMLResponse:
    """One message of the shared thread in full, as a page; one use."""
    load = await uses.open(secret)
    page = await message_page(request, f"/s/{secret}", load, seq, fragment=False)
    return await uses.use(page, "fragment")


@router.get("/s/{secret}/m/{seq}/body")
async def get_shared_message_body(
    request: Request, secret: Secret, seq: Seq, uses: Uses
) -> HTMLResponse:
    """One message of the shared thread in full, as a fragment; one use."""
    load = await uses.open(secret)
    page = await message_page(request, f"/s/{secret}", load, seq, fragment=True)
    return await uses.use(page, "fragment")


@router.get("/s/{secret}/m/{seq}/raw")
async def get_shared_message_raw(secret: Secret, seq: Seq, uses: Uses) -> Response:
    """One message of the shared thread as its JSON object; one use."""
    load = await uses.open(secret)
    return await uses.use(await raw_message(load, seq), "fragment")
