"""HTTP layer of the thread collection (API.md section 6): ``GET /api/threads`` (list) and
``GET /api/threads/search``, keyset-paginated with signed cursors; both need a bearer token."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Depends, Query, Response

from app.auth import CurrentPrincipal, Principal
from app.database import SettingsDep
from app.errors import BadRequest, Unauthorized
from app.openapi import NON_BLANK_PATTERN
from app.problems import problem_response
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads import repository, search
from app.threads.cursors import CursorParam, CursorsDep
from app.threads.documents import summary
from app.threads.indexing import clean
from app.threads.responses import json_response
from app.threads.schemas import ArchivedFilter, Scope, SearchPage, ThreadPage, problem_responses

router = ApiRouter(prefix="/api/threads", tags=["threads"])


async def _lister(principal: CurrentPrincipal) -> Principal:
    """The caller of a list or search, who must carry a token: public threads are readable by
    id, not listed, so strangers cannot enumerate them (API.md sections 1 and 3).

    Raises:
        Unauthorized: 401 with a bare ``Bearer`` challenge when no token was sent.
    """
    if principal.is_anonymous:
        raise Unauthorized(
            "Listing and searching need a bearer token; a public thread is read by its id.",
            token_sent=False,
        )
    return principal


Lister = Annotated[Principal, Depends(_lister)]

#: OpenAPI for the routes behind :func:`_lister`: a bearer token is required, not optional.
_TOKEN_REQUIRED: dict[str, Any] = {"security": [{"bearer": []}]}
_LISTER_401: dict[int | str, dict[str, Any]] = {
    401: {
        **problem_response(401),
        "description": "No bearer token (listing and searching need one), or an invalid one",
    }
}


@router.get(
    "/search",
    response_model=SearchPage,
    responses={**problem_responses(400, 422, 503), **_LISTER_401},
    openapi_extra=_TOKEN_REQUIRED,
)
async def search_threads(
    reads: ReadsDep,
    settings: SettingsDep,
    principal: Lister,
    signer: CursorsDep,
    q: Annotated[
        str,
        Query(
            description="Words to find (1-1000 characters); blank is 400.",
            json_schema_extra={"pattern": NON_BLANK_PATTERN},
        ),
    ],
    syntax: Annotated[Literal["plain", "web"], Query()] = "plain",
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorParam = None,
    workspace: Annotated[str | None, Query(max_length=4096)] = None,
    scope: Scope = "mine",
    archived: ArchivedFilter = "false",
) -> Response:
    """Ranked full-text search over titles, tags, git metadata, commits and every message; needs
    a bearer token (401 without one). Runs on a read replica when one is configured and has
    caught up (app/replicas/routing.py)."""
    if not q.strip():
        raise BadRequest("q must hold at least one non-blank character.")
    if len(q) > settings.max_query_chars:
        raise BadRequest(f"q is limited to {settings.max_query_chars} characters.")
    filters = search.SearchFilters(
        scope=scope,
        archived=archived,
        workspace=clean(workspace) if workspace is not None else None,
    )
    found = await reads.run(
        lambda session: search.run(
            session,
            principal,
            q,
            syntax,
            filters,
            cursor,
            signer,
            limit,
            settings.search_common_messages,
        )
    )
    hits = [
        {
            "thread": summary(r),
            "score": r.score,
            "snippet": found.found.get(r.id, (None, None))[1],
            "message_index": found.found.get(r.id, (None, None))[0],
        }
        for r in found.rows
    ]
    next_cursor = found.next_cursor
    return json_response({"hits": hits, "next_cursor": next_cursor})


@router.get(
    "",
    response_model=ThreadPage,
    responses={**problem_responses(400, 422, 503), **_LISTER_401},
    openapi_extra=_TOKEN_REQUIRED,
)
async def list_threads(
    reads: ReadsDep,
    principal: Lister,
    signer: CursorsDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: CursorParam = None,
    workspace: Annotated[str | None, Query(max_length=4096)] = None,
    scope: Scope = "mine",
    archived: ArchivedFilter = "false",
) -> Response:
    """Thread summaries, newest ``last_activity_at`` first, keyset-paginated; needs a bearer
    token (401 without one). Runs on a read replica when one is configured and has caught up
    (app/replicas/routing.py)."""
    after = signer.decode("threads", cursor, datetime, uuid.UUID) if cursor else None
    rows = await reads.run(
        lambda session: repository.list_threads(
            session,
            principal,
            scope=scope,
            archived=archived,
            workspace=clean(workspace) if workspace is not None else None,
            after=after,
            limit=limit,
        )
    )
    page, next_cursor = signer.page("threads", rows, limit, lambda r: (r.last_activity_at, r.id))
    return json_response({"threads": [summary(r) for r in page], "next_cursor": next_cursor})
