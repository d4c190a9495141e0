"""The thread behind a share link, as JSON: what ``GET /api/shared/{secret}`` answers and what
the viewer's ``/s/{secret}`` answers to ``Accept: application/json`` (issue 13 item 1)."""

from __future__ import annotations

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.audit.context import AuditContext
from app.sharing.links import LinkGone, Via, record_use, resolve
from app.threads.preconditions import etag
from app.threads.reads import begin_snapshot, load_row, render_row
from app.threads.responses import json_response

#: Headers of every answer that holds a shared thread: never stored by a cache (the link may
#: be revoked a second later), never sent on as a referrer, never indexed.
SHARED_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Robots-Tag": "noindex, nofollow",
}


async def shared_thread(
    session: AsyncSession, secret: str, audit: AuditContext, *, via: Via, user_agent: str | None
) -> tuple[bytes, int]:
    """Open the link of ``secret`` (:func:`~app.sharing.links.resolve`, then
    :func:`~app.sharing.links.record_use`: counted and audited) and read its thread in one
    snapshot, as ``GET /api/threads/{id}`` renders it.

    ``session`` must have no transaction begun. Returns (output JSON bytes, version).

    Raises:
        NotFound: no such link (404).
        LinkGone: revoked, expired, or the thread deleted (410), before or while reading.
    """
    link = await resolve(session, secret)
    await record_use(session, link, audit, via=via, user_agent=user_agent)
    await begin_snapshot(session)
    row = await load_row(session, link.thread_id)
    if row is None or row.deleted_at is not None:
        raise LinkGone("thread_deleted")
    return await render_row(session, row), row.version


async def shared_json(
    request: Request, session: AsyncSession, secret: str, audit: AuditContext, *, via: Via
) -> Response:
    """:func:`shared_thread` as the 200 JSON response (``ETag``, :data:`SHARED_HEADERS`).

    The viewer calls this for ``/s/{secret}`` with ``Accept: application/json``
    (``via="page_json"``; ``audit`` from ``get_audit_context(request, web_principal)``).
    Errors are raised as :func:`shared_thread` raises them (404 NotFound, 410 LinkGone)."""
    body, version = await shared_thread(
        session, secret, audit, via=via, user_agent=request.headers.get("user-agent")
    )
    return json_response(body, headers={"ETag": etag(version), **SHARED_HEADERS})
