"""``GET /``: the signed-in person's threads and those shared with them (issue 13, item 3);
without a session, how to sign in. Each list pages on its own (``?mine=…``, ``?shared=…``
carry the opaque cursors of ``GET /api/threads``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads.cursors import CursorCodec
from app.threads.documents import summary
from app.web import listing
from app.web.pages import notice, render
from app.web.session import WebSessionDep
from app.web.views import thread_view

router = ApiRouter(include_in_schema=False)
PAGE = 25


def _after(codec: CursorCodec, cursor: str) -> listing.After:
    """The keyset position of ``cursor`` (empty: the first page). Raises BadRequest."""
    if not cursor:
        return None
    found = codec.decode("threads", cursor, datetime, uuid.UUID)
    return found[0], found[1]


@router.get("/", response_class=HTMLResponse)
async def home(
    request: Request, reads: ReadsDep, web: WebSessionDep, mine: str = "", shared: str = ""
) -> Response:
    """The two lists (200), the sign-in instructions without a session (200), a 400 page for
    a cursor this server did not issue."""
    if web is None:
        return render(request, "welcome.html", {})
    codec: CursorCodec = request.app.state.cursors
    try:
        after_mine, after_shared = _after(codec, mine), _after(codec, shared)
    except BadRequest:
        return notice(request, 400, "Bad page link", "That page link is not one this server made.")
    principal = web.principal

    async def both(session: AsyncSession) -> tuple[list[Any], list[Any]]:
        return (
            await listing.mine(session, principal, after_mine, PAGE),
            await listing.shared(session, principal, after_shared, PAGE),
        )

    mine_rows, shared_rows = await reads.run(both)  # a replica once caught up (API's list too)
    sections: list[dict[str, Any]] = []
    for key, rows, after_key in (("mine", mine_rows, mine), ("shared", shared_rows, shared)):
        page, cursor = codec.page("threads", rows, PAGE, lambda r: (r.last_activity_at, r.id))
        sections.append(
            {
                "key": key,
                "threads": [thread_view(summary(r)) for r in page],
                "next": cursor,
                "paged": bool(after_key),
            }
        )
    context = {
        "mine": sections[0],
        "shared": sections[1],
        "cursors": {"mine": mine, "shared": shared},
    }
    return render(request, "home.html", context)
