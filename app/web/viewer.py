"""The thread pages: ``/t/{thread_id}`` for a reader the access rules allow (API.md section 4:
the signed-in user of the session cookie, or anyone for a public thread; everyone else gets
the same 404 as for a thread that does not exist), and the pieces its script loads.

Routes (each also under ``/s/{secret}``, app/web/shared.py):

- ``GET {base}?from=K``: the page with the header and messages ``[K, K + PAGE)`` (K defaults to
  0; links "Earlier messages" and "Next messages" page without JavaScript).
- ``GET {base}/messages?from=K``: just those messages (HTML fragment), loaded on scroll.
- ``GET {base}/m/{seq}``: a page with message ``seq`` in full ("show all" without JavaScript).
- ``GET {base}/m/{seq}/body``: that message in full as a fragment (what "show all" loads).
- ``GET {base}/m/{seq}/raw``: that message's JSON (every byte of a 10 MB output).

Errors are app errors (404 for an unknown thread or a ``from``/``seq`` past the end, 410 for a
deleted thread, 422 for a ``from`` that is not a number); the page error layer renders them.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from app.database import SessionDep
from app.errors import NotFound
from app.routes import ApiRouter
from app.web.pages import render
from app.web.provenancepage import thread_files
from app.web.reading import PAGE, Loaded, page_start, read_for
from app.web.render.header import header
from app.web.render.messages import FULL_CHARS, message_view, page_views
from app.web.session import WebPrincipal
from loomsync.core.document import jsontext
from loomsync.core.document.ids import InvalidThreadId, ThreadId

router = ApiRouter(include_in_schema=False)

#: Reads messages ``[start, start + count)`` of the page's thread, checking access; the third
#: argument, ``whole``, reads large messages whole instead of their digests (app/web/clipped.py).
Loader = Callable[[int, int, bool], Awaitable[Loaded]]

MAX_INDEX = 10**9
From = Annotated[int, Query(alias="from", ge=0, le=MAX_INDEX, description="first message")]
Seq = Annotated[int, Path(ge=0, le=MAX_INDEX, description="message index, 0-based")]


def _uuid(thread_id: str) -> uuid.UUID:
    try:
        return ThreadId.parse(thread_id).uuid
    except InvalidThreadId:
        raise NotFound("No such thread.") from None


async def thread_page(
    request: Request,
    base: str,
    load: Loader,
    start: int,
    files: Callable[[Loaded], Awaitable[list[dict[str, Any]]]] | None = None,
) -> HTMLResponse:
    """The thread page at ``base`` (``/t/<id>`` or ``/s/<secret>``) starting at message
    ``start`` (rounded down to a page boundary, so every page is one of the same pages);
    ``files`` reads the files it changed (issue 32: shown, with links, to signed-in readers).

    Raises:
        NotFound: ``start`` is past the last message (and not 0).
    """
    loaded = await load(page_start(start), PAGE, False)
    if start > 0 and start >= loaded.row.message_count:
        raise NotFound(f"The thread has {loaded.row.message_count} messages.")
    context = await run_in_threadpool(_page_context, loaded, base)
    if files is not None:
        context["files"] = await files(loaded)
    return render(request, "thread.html", context)


async def messages_fragment(request: Request, base: str, load: Loader, start: int) -> HTMLResponse:
    """Messages ``[start, start + PAGE)`` as an HTML fragment (``_page.html``)."""
    loaded = await load(start, PAGE, False)
    return render(request, "_page.html", await run_in_threadpool(_page_context, loaded, base))


async def message_page(
    request: Request, base: str, load: Loader, seq: int, *, fragment: bool
) -> HTMLResponse:
    """Message ``seq`` in full: a page (``message.html``) or a fragment (``_message.html``).

    Raises:
        NotFound: no message ``seq``.
    """
    loaded = await load(seq, 1, True)
    if not loaded.messages:
        raise NotFound(f"The thread has {loaded.row.message_count} messages.")
    # Rendering is CPU work (Markdown, Pygments): off the event loop, so /health never waits.
    view = await run_in_threadpool(message_view, seq, loaded.messages[0][1], full=True)
    thread_id = f"T-{loaded.row.id}"
    context = {
        "m": view,
        "base": base,
        "header": header(loaded.row, loaded.document, thread_id),
        "back": f"{base}?from={page_start(seq)}#m-{seq}",
        "full_chars": FULL_CHARS,
    }
    return render(request, "_message.html" if fragment else "message.html", context)


async def raw_message(load: Loader, seq: int) -> Response:
    """Message ``seq`` as its JSON object, every field and character of it, for reading or
    saving (``application/json``, ``nosniff``, a sandboxing CSP: the browser shows it as text).

    Raises:
        NotFound: no message ``seq``.
    """
    loaded = await load(seq, 1, True)
    if not loaded.messages:
        raise NotFound(f"The thread has {loaded.row.message_count} messages.")
    body = loaded.messages[0][1]
    try:
        data = jsontext.dumps(body, indent=2, separators=(",", ": ")).encode()
    except UnicodeEncodeError:  # a lone surrogate: escaped, as JSON allows
        data = jsontext.dumps(body, indent=2, separators=(",", ": "), ensure_ascii=True).encode()
    name = f"T-{loaded.row.id}-m-{seq}.json"
    return Response(data, media_type="application/json", headers=raw_headers(name))


def raw_headers(filename: str) -> dict[str, str]:
    """Headers of a raw download: shown inline as text, never run, never cached or referred."""
    return {
        "Content-Security-Policy": (
            "default-src 'none'; sandbox; frame-ancestors 'none'; base-uri 'none'; "
            "form-action 'none'"
        ),
        "X-Content-Type-Options": "nosniff",
        "Content-Disposition": f'inline; filename="{filename}"',
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
    }


def _page_context(loaded: Loaded, base: str) -> dict[str, object]:
    count = loaded.row.message_count
    start = loaded.start
    after = start + PAGE
    return {
        "header": header(loaded.row, loaded.document, f"T-{loaded.row.id}"),
        "messages": page_views(loaded.messages),
        "base": base,
        "start": start,
        "page": PAGE,
        "prev": max(0, start - PAGE) if start > 0 else None,
        "next": after if after < count else None,
    }


def _signed_in_loader(session: SessionDep, principal: WebPrincipal, thread_id: str) -> Loader:
    """A loader of the thread of the path, for the signed-in reader (or anyone, if public).
    A malformed id is the 404 of an unknown thread, raised by the first load."""

    def load(start: int, count: int, whole: bool) -> Awaitable[Loaded]:
        return read_for(session, principal, _uuid(thread_id), start, count, whole)

    return load


ThreadLoader = Annotated[Loader, Depends(_signed_in_loader)]


@router.get("/t/{thread_id:thread_id}")
async def get_thread_page(
    request: Request, thread_id: str, load: ThreadLoader, session: SessionDep, start: From = 0
) -> HTMLResponse:
    """The thread page (404 page when the reader may not read it, 410 when deleted), with
    the files it changed and its commits linked to their pages (issue 32)."""

    def files(loaded: Loaded) -> Awaitable[list[dict[str, Any]]]:
        return thread_files(session, loaded.row.id, loaded.row.git_remote_url)

    return await thread_page(request, f"/t/{thread_id}", load, start, files)


@router.get("/t/{thread_id:thread_id}/messages")
async def get_thread_messages(
    request: Request, thread_id: str, load: ThreadLoader, start: From = 0
) -> HTMLResponse:
    """One page of messages as a fragment (what the page's script loads on scroll)."""
    return await messages_fragment(request, f"/t/{thread_id}", load, start)


@router.get("/t/{thread_id:thread_id}/m/{seq}")
async def get_thread_message(
    request: Request, thread_id: str, seq: Seq, load: ThreadLoader
) -> HTMLResponse:
    """One message in full, as a page."""
    return await message_page(request, f"/t/{thread_id}", load, seq, fragment=False)


@router.get("/t/{thread_id:thread_id}/m/{seq}/body")
async def get_thread_message_body(
    request: Request, thread_id: str, seq: Seq, load: ThreadLoader
) -> HTMLResponse:
    """One message in full, as a fragment (what "show all" loads)."""
    return await message_page(request, f"/t/{thread_id}", load, seq, fragment=True)


@router.get("/t/{thread_id:thread_id}/m/{seq}/raw")
async def get_thread_message_raw(seq: Seq, load: ThreadLoader) -> Response:
    """One message as its JSON object."""
    return await raw_message(load, seq)
