"""``GET /search?q=…``: the server's search (API.md section 6, the same ranking and snippets
as ``GET /api/threads/search``) as a page; each hit links to the matching message of the
viewer, ``/t/{id}#m-{message_index}`` (issue 13, item 3).

``scope`` is ``visible`` by default (your threads and those shared with you), or ``mine``;
``syntax=web`` takes quoted phrases, ``-word`` and ``or``. A blank ``q`` shows the form and a
hint of what to type; a query of only common words or punctuation (``the and of``) says there is
nothing to search for instead of a silent "no thread matches" (issue 14 review).
"""

from __future__ import annotations

from typing import Any

import nh3
from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from app.errors import BadRequest, RateLimited, Unavailable
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads import search
from app.threads.cursors import CursorCodec
from app.threads.documents import summary
from app.web.pages import notice, render
from app.web.session import WebSessionDep
from app.web.views import thread_view
from loomsync.core.textsearch.commits import NOTHING_TO_SEARCH as NOTHING
from loomsync.core.textsearch.commits import searchable

router = ApiRouter(include_in_schema=False)
PAGE = 20
SCOPES = ("visible", "mine")
SYNTAXES = ("plain", "web")
NOTHING_TO_SEARCH = NOTHING.capitalize() + "."
HINT = (
    "Type words from a conversation, a file name, an identifier or the start of a commit SHA; "
    'choose "phrases", -not, or for exact phrases and words left out.'
)


def snippet_markup(snippet: str | None) -> Markup | None:
    """The server's snippet (HTML-escaped text with ``<b>`` around matches) as markup, cleaned
    again by nh3 down to ``<b>`` alone: nothing else from a thread can become a tag."""
    if snippet is None:
        return None
    return Markup(nh3.clean(snippet, tags={"b"}, attributes={}))


@router.get("/search", response_class=HTMLResponse)
async def search_page(
    request: Request,
    reads: ReadsDep,
    web: WebSessionDep,
    q: str = "",
    scope: str = "visible",
    syntax: str = "plain",
    cursor: str = "",
) -> Response:
    """Ranked hits with snippets (200); 401 page without a session; 400 page for a query over
    the limit, an unknown ``scope``/``syntax`` or a foreign cursor; 429/503 pages when the
    search cannot run now."""
    if web is None:
        return notice(
            request, 401, "Sign in to search", "Run `loomsync open` to sign this browser in."
        )
    form = {"q": q, "scope": scope, "syntax": syntax}
    if scope not in SCOPES or syntax not in SYNTAXES:
        return notice(request, 400, "Bad search", "scope is visible or mine; syntax plain or web.")
    limit = request.app.state.settings.max_query_chars
    if len(q) > limit:
        return notice(request, 400, "Query too long", f"A search is at most {limit} characters.")
    if not q.strip():
        return render(request, "search.html", {"form": form, "hits": None, "hint": HINT})
    if not searchable(q, syntax):
        context = {"form": form, "hits": None, "nothing": NOTHING_TO_SEARCH}
        return render(request, "search.html", context)
    codec: CursorCodec = request.app.state.cursors
    try:
        found = await reads.run(  # a replica once caught up, as the API's search
            lambda session: search.run(
                session,
                web.principal,
                q,
                syntax,
                search.SearchFilters(scope=scope),
                cursor or None,
                codec,
                PAGE,
                request.app.state.settings.search_common_messages,
            )
        )
    except BadRequest:
        return notice(request, 400, "Bad page link", "That page link is not one this server made.")
    except RateLimited:
        return notice(request, 429, "Too many searches", "Wait a moment, then search again.")
    except Unavailable as exc:
        return notice(request, 503, "Search unavailable", exc.detail)
    hits: list[dict[str, Any]] = []
    for row in found.rows:
        index, snippet = found.found.get(row.id, (None, None))
        hits.append(
            {**thread_view(summary(row), index), "index": index, "snippet": snippet_markup(snippet)}
        )
    next_cursor = found.next_cursor
    return render(request, "search.html", {"form": form, "hits": hits, "next": next_cursor})
