"""The provenance pages (issue 32 item 4): ``GET /commits/{sha}`` and ``GET /files?path=``
list the sessions behind a commit or a file, each with links to the exact messages that
touched it (``/t/{id}#m-{index}``); the thread page lists the files it produced
(:func:`thread_files`). Same queries and visibility as ``/api/provenance`` (API.md section 4);
a page of 20, "More" through the signed cursor."""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import BadRequest
from app.provenance import queries
from app.provenance.router import (
    MAX_TEXT,
    after_cursor,
    cursor_bound,
    next_page,
    parse_path,
    parse_sha,
)
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads.cursors import CursorCodec
from app.threads.documents import summary
from app.web.pages import notice, render
from app.web.session import WebSessionDep
from app.web.views import thread_href, thread_view

router = ApiRouter(include_in_schema=False)
PAGE = 20


def files_href(path: str, repository: str | None) -> str:
    """The file page of ``path`` (in ``repository`` when known)."""
    query = {"path": path, **({"repository": repository} if repository else {})}
    return "/files?" + urlencode(query)


def _touch_links(thread_id: str, touches: list[queries.FileTouch]) -> list[dict[str, Any]]:
    return [
        {
            "path": t.path,
            "index": t.message_index,
            "action": t.action,
            "via": t.via,
            "href": thread_href(thread_id, t.message_index),
        }
        for t in touches
    ]


async def thread_files(
    session: AsyncSession, thread_id: uuid.UUID, repository: str | None
) -> list[dict[str, Any]]:
    """The files a thread produced (edited, wrote, deleted), each with its page and the
    messages that touched it; for the thread page of a reader who may read the thread."""
    touched = await queries.touches_of(session, [thread_id], writes_only=True, per_thread=2000)
    by_path: dict[str, list[queries.FileTouch]] = {}
    for touch in touched.get(thread_id, []):
        by_path.setdefault(touch.path, []).append(touch)
    tid = f"T-{thread_id}"
    return [
        {
            "path": path,
            "href": files_href(path, repository),
            "messages": _touch_links(tid, touches),
        }
        for path, touches in sorted(by_path.items())
    ]


def _refused(request: Request, what: str) -> HTMLResponse:
    return notice(request, 400, "Bad request", what)


@router.get("/commits/{sha}", response_class=HTMLResponse)
async def commit_page(
    request: Request,
    reads: ReadsDep,
    web: WebSessionDep,
    sha: str,
    repository: str | None = None,
    cursor: str = "",
) -> Response:
    """The sessions that observed a commit, newest first, with the files each changed and
    links to the messages (401 page without a session, 400 for a malformed SHA or cursor)."""
    if web is None:
        return notice(request, 401, "Sign in to see sessions", "Run `loomsync open` to sign in.")
    try:
        prefix = parse_sha(sha)
        bound = cursor_bound("commit", prefix, repository)
        codec: CursorCodec = request.app.state.cursors
        after = after_cursor(codec, cursor or None, bound)
    except BadRequest as exc:
        return _refused(request, exc.detail)

    async def read(session: AsyncSession) -> dict[str, Any]:
        rows = await queries.by_commit(session, web.principal, prefix, repository, after, PAGE)
        page, next_cursor = next_page(codec, list(rows), PAGE, bound)
        ids = [r.id for r in page]
        commits = await queries.commits_of(session, ids, prefix)
        touched = await queries.touches_of(session, ids, writes_only=True)
        hits = []
        for row in page:
            view = thread_view(summary(row))
            view["commits"] = commits.get(row.id, [])
            view["touches"] = _touch_links(view["id"], touched.get(row.id, []))
            for link in view["touches"]:
                link["file_href"] = files_href(link["path"], row.git_remote_url)
            hits.append(view)
        return {"hits": hits, "next": next_cursor}

    found = await reads.run(read)
    more = None
    if found["next"]:
        more = f"/commits/{prefix}?" + urlencode(
            {"cursor": found["next"], **({"repository": repository} if repository else {})}
        )
    heading = f"Sessions behind commit {prefix[:12]}"
    context = {"heading": heading, "kind": "commit", "hits": found["hits"], "more": more}
    return render(request, "provenance.html", context)


@router.get("/files", response_class=HTMLResponse)
async def file_page(
    request: Request,
    reads: ReadsDep,
    web: WebSessionDep,
    path: str = "",
    repository: str | None = None,
    cursor: str = "",
) -> Response:
    """The sessions whose tool calls touched a file, newest first, each with the messages
    that touched it (401 page without a session, 400 for a blank path or a bad cursor)."""
    if web is None:
        return notice(request, 401, "Sign in to see sessions", "Run `loomsync open` to sign in.")
    try:
        if not path or len(path) > MAX_TEXT:
            raise BadRequest("path must name a file of the repository.")
        wanted = parse_path(path)
        bound = cursor_bound("file", wanted, repository)
        codec: CursorCodec = request.app.state.cursors
        after = after_cursor(codec, cursor or None, bound)
    except BadRequest as exc:
        return _refused(request, exc.detail)

    async def read(session: AsyncSession) -> dict[str, Any]:
        rows = await queries.by_file(session, web.principal, wanted, repository, after, PAGE)
        page, next_cursor = next_page(codec, list(rows), PAGE, bound)
        touched = await queries.touches_of(session, [r.id for r in page], path=wanted)
        hits = []
        for row in page:
            view = thread_view(summary(row))
            view["touches"] = _touch_links(view["id"], touched.get(row.id, []))
            hits.append(view)
        return {"hits": hits, "next": next_cursor}

    found = await reads.run(read)
    more = None
    if found["next"]:
        query = {"path": wanted, "cursor": found["next"]}
        if repository:
            query["repository"] = repository
        more = "/files?" + urlencode(query)
    heading = f"Sessions that touched {wanted}"
    context = {"heading": heading, "kind": "file", "hits": found["hits"], "more": more}
    return render(request, "provenance.html", context)
