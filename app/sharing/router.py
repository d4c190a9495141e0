"""HTTP layer of share links (API.md section 1, issue 13 item 1).

- ``POST /api/threads/{id}/share-links`` (owner or admin) makes a link: 201 ``{id, url,
  expires_at, …}``; ``url`` is ``{LOOMSYNC_PUBLIC_URL or the request's base URL}/s/{secret}``.
- ``GET /api/threads/{id}/share-links`` lists them (never a secret), keyset-paginated.
- ``DELETE /api/threads/{id}/share-links/{link_id}`` revokes one: 204.
- ``GET /api/shared/{secret}`` is the thread behind a live link, as ``GET /api/threads/{id}``
  gives it, to anyone holding the secret (no token needed): 404 unknown, 410 revoked, expired
  or thread deleted.

``POST`` ignores ``Idempotency-Key``: a stored answer would keep the secret, which the server
never stores; the SDK does not retry it (loomsync/http/sharelinks.py).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import Depends, Path, Request, Response
from fastapi import Query as QueryParam
from starlette.convertors import Convertor, register_url_convertor

from app.audit.context import AuditDep
from app.auth import CurrentPrincipal, Principal
from app.config import Settings
from app.database import SessionDep, SettingsDep
from app.errors import BadRequest, Unauthorized, ValidationFailed
from app.problems import problem_response, problem_responses
from app.routes import ApiRouter
from app.sharing import repository
from app.sharing.links import SECRET_PATTERN
from app.sharing.schemas import ShareLinkCreated, ShareLinkPage, ShareLinkRequest
from app.sharing.service import SHARED_HEADERS, shared_json
from app.threads import service
from app.threads.cursors import CursorParam, CursorsDep
from app.threads.documents import JsonSyntaxError, parse_json
from app.threads.params import ThreadIdPath
from app.threads.responses import json_response
from app.threads.schemas import ThreadOut
from app.times import rfc3339
from loomsync.core.document.ids import ThreadId

#: A link id in a path: a canonical lowercase UUID (as links are listed).
LINK_ID_PATTERN = "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"


class LinkIdConvertor(Convertor[str]):
    """Path segments that are link ids; any other segment matches no route (404)."""

    regex = LINK_ID_PATTERN.strip("^$")

    def convert(self, value: str) -> str:
        """The segment as it is."""
        return value

    def to_string(self, value: str) -> str:
        """The id as a path segment."""
        return value


register_url_convertor("link_id", LinkIdConvertor())

router = ApiRouter(tags=["share links"])
LINKS = "/api/threads/{thread_id:thread_id}/share-links"

LinkIdPath = Annotated[
    str, Path(description="The link's id (a UUID)", json_schema_extra={"pattern": LINK_ID_PATTERN})
]
SecretPath = Annotated[
    str,
    Path(
        description="The secret of the link's URL (/s/<secret>)",
        json_schema_extra={"pattern": SECRET_PATTERN},
    ),
]


async def _manager(principal: CurrentPrincipal) -> Principal:
    if principal.is_anonymous:
        raise Unauthorized("Managing share links needs a bearer token.", token_sent=False)
    return principal


Manager = Annotated[Principal, Depends(_manager)]


def link_url(request: Request, settings: Settings, secret: str) -> str:
    """The absolute URL of the viewer page of ``secret``: ``LOOMSYNC_PUBLIC_URL`` when set,
    else the base URL the request came to (its scheme, ``Host`` and root path)."""
    base = settings.public_url or str(request.base_url).rstrip("/")
    return f"{base}/s/{secret}"


async def _request_body(request: Request) -> ShareLinkRequest:
    raw = await request.body()
    if not raw.strip():
        return ShareLinkRequest()
    try:
        parsed = parse_json(raw)
    except JsonSyntaxError as exc:
        raise BadRequest(str(exc)) from None
    if not isinstance(parsed, dict):
        raise ValidationFailed(
            "The body must be a JSON object.",
            errors=[{"loc": ["body"], "msg": "must be an object"}],
        )
    return service.validate(ShareLinkRequest, parsed)


def _lifetime(body: ShareLinkRequest, settings: Settings) -> int | None:
    """The link's life in seconds: as asked, within ``LOOMSYNC_SHARE_LINK_MAX_AGE``."""
    limit = settings.share_link_max_age
    if limit is not None and body.expires_in is not None and body.expires_in > limit:
        raise ValidationFailed(
            "The link would outlive LOOMSYNC_SHARE_LINK_MAX_AGE.",
            errors=[{"loc": ["body", "expires_in"], "msg": f"must be at most {limit}"}],
        )
    return body.expires_in if body.expires_in is not None else limit


@router.post(
    LINKS,
    status_code=201,
    response_model=ShareLinkCreated,
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
    openapi_extra={
        "requestBody": {
            "required": False,
            "content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/ShareLinkRequest"}}
            },
        }
    },
)
async def create_share_link(
    thread_id: ThreadIdPath,
    request: Request,
    session: SessionDep,
    settings: SettingsDep,
    _: Manager,
    audit: AuditDep,
) -> Response:
    """Make a share link to the thread (owner or admin; 403 for other readers, 404 for
    others): anyone holding ``url`` reads the thread, whatever its visibility, until the link
    is revoked or expires. The secret is shown this once. Audited (``share_link.create``)."""
    tid = ThreadId.parse(thread_id)
    lifetime = _lifetime(await _request_body(request), settings)
    made = await repository.create(session, audit, tid.uuid, lifetime)
    body = {
        "id": str(made.id),
        "thread_id": str(tid),
        "url": link_url(request, settings, made.secret),
        "created_at": rfc3339(made.created_at),
        "expires_at": rfc3339(made.expires_at) if made.expires_at else None,
    }
    return json_response(body, 201, {"Cache-Control": "no-store"})


def _listed(row: Any) -> dict[str, Any]:
    if row.revoked_at is not None:
        state = "revoked"
    elif row.expires_at is not None and row.expires_at <= row.now:
        state = "expired"
    else:
        state = "live"
    return {
        "id": str(row.id),
        "thread_id": str(ThreadId.from_uuid(row.thread_id)),
        "state": state,
        "created_by": row.created_by,
        "created_at": rfc3339(row.created_at),
        "expires_at": rfc3339(row.expires_at) if row.expires_at else None,
        "revoked_at": rfc3339(row.revoked_at) if row.revoked_at else None,
        "last_used_at": rfc3339(row.last_used_at) if row.last_used_at else None,
        "use_count": row.use_count,
    }


@router.get(
    LINKS,
    response_model=ShareLinkPage,
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
)
async def list_share_links(
    thread_id: ThreadIdPath,
    session: SessionDep,
    principal: Manager,
    signer: CursorsDep,
    limit: Annotated[int, QueryParam(ge=1, le=200)] = 50,
    cursor: CursorParam = None,
) -> Response:
    """The thread's share links, newest first, live, revoked and expired (owner or admin),
    without their secrets; keyset-paginated."""
    tid = ThreadId.parse(thread_id)
    after = signer.decode("share_links", cursor, datetime, uuid.UUID) if cursor else None
    rows = await repository.list_links(session, principal, tid.uuid, after=after, limit=limit)
    page, next_cursor = signer.page("share_links", rows, limit, lambda r: (r.created_at, r.id))
    return json_response({"links": [_listed(r) for r in page], "next_cursor": next_cursor})


@router.delete(
    LINKS + "/{link_id:link_id}",
    status_code=204,
    responses=problem_responses(400, 401, 403, 404, 410, 503),
)
async def revoke_share_link(
    thread_id: ThreadIdPath,
    link_id: LinkIdPath,
    session: SessionDep,
    _: Manager,
    audit: AuditDep,
) -> Response:
    """Revoke a share link (owner or admin): from now on it answers 410. Revoking a revoked
    link is a 204 again. Audited (``share_link.revoke``)."""
    tid = ThreadId.parse(thread_id)
    await repository.revoke(session, audit, tid.uuid, uuid.UUID(link_id))
    return Response(status_code=204, headers={"Cache-Control": "no-store"})


_LINK_GONE = {
    **problem_response(410),
    "description": "The link was revoked or has expired, or its thread was deleted",
}


@router.get(
    "/api/shared/{secret}",
    response_model=ThreadOut,
    responses={
        **problem_responses(400, 401, 404, 503),
        404: {**problem_response(404), "description": "No such share link"},
        410: _LINK_GONE,
    },
)
async def get_shared_thread(
    secret: SecretPath, request: Request, session: SessionDep, audit: AuditDep
) -> Response:
    """The thread behind a live share link, as ``GET /api/threads/{id}`` gives it (with
    ``ETag``), whatever its visibility; no token needed. 404: no such link; 410: revoked,
    expired, or the thread deleted. Every use is counted and audited (``share_link.use``)."""
    return await shared_json(request, session, secret, audit, via="api")


__all__ = ["SHARED_HEADERS", "link_url", "router"]
