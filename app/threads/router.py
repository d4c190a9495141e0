"""HTTP layer of /api/threads (API.md section 6): parse, call the repository, shape responses."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request, Response
from sqlalchemy import func

from app.audit.context import AuditDep
from app.auth import CurrentPrincipal, Principal
from app.database import SessionDep
from app.errors import BadRequest, PreconditionRequired, Unauthorized, ValidationFailed
from app.idempotency.keys import NO_KEY, IdempotencyDep, refresh_answers
from app.routes import ApiRouter
from app.threads import repository, service
from app.threads.documents import (
    JsonSyntaxError,
    parse_json,
    prepare_messages,
    storable_document,
)
from app.threads.params import IfMatch, ThreadIdPath
from app.threads.preconditions import Precondition, etag, parse_if_match
from app.threads.responses import json_response
from app.threads.scanning import (
    APPEND_MESSAGES,
    DOCUMENT_MESSAGES,
    SecretScanDep,
)
from app.threads.schemas import (
    AppendRequest,
    AppendResult,
    ForkRequest,
    ThreadOut,
    ThreadPatch,
    problem_responses,
)
from app.threads.writing import WriteContext, WriteDep
from loomsync.core.document import jsontext
from loomsync.core.document.ids import InvalidThreadId, ThreadId

router = ApiRouter(prefix="/api/threads", tags=["threads"])


def _thread_id(value: str) -> ThreadId:
    try:
        return ThreadId.parse(value)
    except InvalidThreadId as exc:
        raise BadRequest(f"Not a thread id: {exc}.") from None


async def _writer(principal: CurrentPrincipal) -> Principal:
    if principal.is_anonymous:
        raise Unauthorized("Writes need a bearer token.", token_sent=False)
    return principal


async def _json_body(request: Request) -> Any:
    try:
        return parse_json(await request.body())
    except JsonSyntaxError as exc:
        raise BadRequest(str(exc)) from None


Writer = Annotated[Principal, Depends(_writer)]

JsonBody = Annotated[Any, Depends(_json_body)]


def _body_ref(name: str, *, required: bool = True) -> dict[str, Any]:
    return {
        "requestBody": {
            "required": required,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}},
        }
    }


def _object(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ValidationFailed(
            "The body must be a JSON object.",
            errors=[{"loc": ["body"], "msg": "must be an object"}],
        )
    return raw


async def _store_whole(
    session: SessionDep,
    write: WriteContext,
    raw: Any,
    url_id: ThreadId | None,
    if_match: list[str] | None,
    *,
    allow_replace: bool,
) -> Response:
    settings, audit, scan = write.settings, write.audit, write.scan
    body_in = _object(raw)
    thread, raw_messages = service.parse_thread(body_in, url_id)
    thread_id = url_id or thread.id or ThreadId.new()
    scanned = scan.scan(body_in)
    if scanned.value is not body_in:  # redacted: store (and answer) the redacted document
        thread, raw_messages = service.parse_thread(scanned.value, url_id)
    origin = service.fork_origin(thread)
    if origin is not None:  # a fork made on the client obeys the rule of a fork on the server
        await repository.check_copy_of(session, audit.principal, origin.uuid)
    repository.check_message_limit(len(raw_messages), settings.max_messages)
    precondition = parse_if_match(if_match) or Precondition.exactly(thread.version)
    if scanned.found and scan.mode == "reject":  # refused as anyone would be before it is audited
        await repository.check_store(
            session, audit.principal, thread_id.uuid, precondition, allow_replace=allow_replace
        )
    await scan.settle(session, audit, thread_id.uuid, scanned, DOCUMENT_MESSAGES)
    body, version, created = await repository.create_or_replace(
        session,
        audit,
        thread_id.uuid,
        storable_document(thread),
        prepare_messages(raw_messages),
        {"created_at": thread.created_at, "last_activity_at": thread.last_activity_at},
        precondition,
        allow_replace=allow_replace,
        keep_visibility="visibility" not in body_in,
    )
    headers = {"ETag": etag(version)}
    if created:
        headers["Location"] = f"/api/threads/{thread_id}"
    else:  # no stored answer of an earlier create or fork keeps the text this write replaced
        await refresh_answers(session, thread_id.uuid, body, headers["ETag"])
    scan.count(scanned)
    return json_response(body, 201 if created else 200, headers)


@router.post(
    "",
    status_code=201,
    response_model=ThreadOut,
    responses=problem_responses(400, 401, 403, 409, 413, 422, 503),
    openapi_extra=_body_ref("Thread"),
)
async def create_thread(
    session: SessionDep,
    write: WriteDep,
    raw: JsonBody,
    idempotency: IdempotencyDep,
    if_match: IfMatch = None,
) -> Response:
    """Create a thread; without ``id`` the server makes a UUIDv7 id; without ``visibility`` it
    is private. 409 if the id exists, or if the base version (If-Match or ``version``) is not 0;
    403 for a fork made on the client (``metadata.extra.forked_from``) of a thread the caller
    reads only as support. Credentials in the body are redacted, or refused with 422
    (``LOOMSYNC_SECRET_SCAN``). With ``Idempotency-Key``, a retry gets the first answer
    (app/idempotency/keys.py)."""
    return await idempotency.run(
        session,
        lambda: _store_whole(session, write, raw, None, if_match, allow_replace=False),
    )


@router.put(
    "/{thread_id:thread_id}",
    response_model=ThreadOut,
    status_code=200,
    responses={
        201: {"model": ThreadOut, "description": "Created"},
        **problem_responses(400, 401, 403, 404, 409, 410, 413, 422, 503),
    },
    openapi_extra=_body_ref("Thread"),
)
async def put_thread(
    thread_id: ThreadIdPath,
    session: SessionDep,
    write: WriteDep,
    raw: JsonBody,
    if_match: IfMatch = None,
) -> Response:
    """Create (201) or replace (200) the whole thread; base version from If-Match or
    ``version``. Without ``visibility``, a new thread is private and a replaced one keeps its
    visibility. A replace leaves no readable copy of the text it replaced. Credentials in the
    body are redacted, or refused with 422 (``LOOMSYNC_SECRET_SCAN``)."""
    tid = _thread_id(thread_id)
    return await NO_KEY.run(
        session,
        lambda: _store_whole(session, write, raw, tid, if_match, allow_replace=True),
    )


@router.get(
    "/{thread_id:thread_id}",
    response_model=ThreadOut,
    responses=problem_responses(400, 401, 404, 410, 503),
)
async def get_thread(
    thread_id: ThreadIdPath, session: SessionDep, principal: CurrentPrincipal
) -> Response:
    """Read one thread, with ``ETag: "<version>"``."""
    body, version = await repository.read_thread(session, principal, _thread_id(thread_id).uuid)
    return json_response(body, headers={"ETag": etag(version)})


@router.patch(
    "/{thread_id:thread_id}",
    response_model=ThreadOut,
    responses=problem_responses(400, 401, 403, 404, 409, 410, 422, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/merge-patch+json": {
                    "schema": {"$ref": "#/components/schemas/ThreadPatch"}
                },
                "application/json": {"schema": {"$ref": "#/components/schemas/ThreadPatch"}},
            },
        }
    },
)
async def patch_thread(
    thread_id: ThreadIdPath,
    session: SessionDep,
    principal: Writer,
    audit: AuditDep,
    scan: SecretScanDep,
    raw: JsonBody,
    if_match: IfMatch = None,
) -> Response:
    """JSON merge patch (RFC 7396) of metadata, visibility, is_shared_with_support, archived.
    Credentials in the patch are redacted, or refused with 422 (``LOOMSYNC_SECRET_SCAN``)."""
    tid = _thread_id(thread_id)
    raw_patch = _object(raw)
    patch = service.validate(ThreadPatch, raw_patch)
    scanned = scan.scan(raw_patch)
    if scanned.value is not raw_patch:
        raw_patch = scanned.value
        patch = service.validate(ThreadPatch, raw_patch)
    values: dict[str, Any] = {}
    if patch.archived is not None:
        values["archived_at"] = (
            func.coalesce(repository.ARCHIVED_AT, func.now()) if patch.archived else None
        )
    row = await repository.claim(session, principal, tid.uuid, parse_if_match(if_match), **values)
    await scan.settle(session, audit, tid.uuid, scanned, ())
    doc = service.apply_patch(jsontext.loads(row.document_text), raw_patch, patch)
    await repository.store_document(session, tid.uuid, doc, commits_changed=False)
    await repository.audit_sharing(session, audit, tid.uuid, row, doc)
    body = await repository.render(session, tid.uuid)
    await refresh_answers(session, tid.uuid, body, etag(row.version))
    await session.commit()
    scan.count(scanned)
    return json_response(body, headers={"ETag": etag(row.version)})


@router.post(
    "/{thread_id:thread_id}/messages",
    response_model=AppendResult,
    responses=problem_responses(400, 401, 403, 404, 409, 410, 413, 422, 428, 503),
    openapi_extra=_body_ref("AppendRequest"),
)
async def append_messages(
    thread_id: ThreadIdPath,
    session: SessionDep,
    write: WriteDep,
    raw: JsonBody,
    idempotency: IdempotencyDep,
    if_match: IfMatch = None,
) -> Response:
    """Append messages (and optionally agent state, activity time, git fields); If-Match required.
    Credentials in what is appended are redacted, or refused with 422 (``LOOMSYNC_SECRET_SCAN``;
    the stored messages are not scanned again). With ``Idempotency-Key``, a retry gets the first
    answer (app/idempotency/keys.py)."""
    settings, audit, scan = write.settings, write.audit, write.scan
    tid = _thread_id(thread_id)
    if if_match is None:
        raise PreconditionRequired("Appending needs If-Match with the version the messages follow.")
    precondition = parse_if_match(if_match)
    raw_body = _object(raw)
    request = service.validate(AppendRequest, raw_body)
    scanned = scan.scan(raw_body, APPEND_MESSAGES)
    if scanned.value is not raw_body:
        raw_body = scanned.value
        request = service.validate(AppendRequest, raw_body)
    raw_messages = raw_body.get("messages") or []

    async def store() -> Response:
        row = await repository.claim_append(
            session,
            audit.principal,
            tid.uuid,
            precondition,
            len(raw_messages),
            request.last_activity_at,
        )
        repository.check_message_limit(row.message_count, settings.max_messages)
        first_seq = row.message_count - len(raw_messages)
        await scan.settle(session, audit, tid.uuid, scanned, APPEND_MESSAGES, first_seq)
        prepared = prepare_messages(raw_messages, first_seq)
        stored = jsontext.loads(row.document_text)
        doc, commits_changed = service.apply_append(stored, request)
        await repository.append_messages(session, tid.uuid, prepared, doc, request.last_activity_at)
        if doc is not stored:
            await repository.store_document(session, tid.uuid, doc, commits_changed=commits_changed)
        result = {"id": str(tid), "version": row.version, "message_count": row.message_count}
        return json_response(result, headers={"ETag": etag(row.version)})

    response = await idempotency.run(session, store)
    scan.count(scanned)
    return response


@router.post(
    "/{thread_id:thread_id}/fork",
    status_code=201,
    response_model=ThreadOut,
    responses=problem_responses(400, 401, 403, 404, 410, 422, 503),
    openapi_extra=_body_ref("ForkRequest", required=False),
)
async def fork_thread(
    thread_id: ThreadIdPath,
    session: SessionDep,
    principal: Writer,
    audit: AuditDep,
    request: Request,
    idempotency: IdempotencyDep,
) -> Response:
    """Copy messages ``[0, up_to)`` into a new private thread owned by the caller; 403 for a
    caller who reads the thread only through the ``support`` role. Not scanned for credentials:
    the request brings no text, and the copy holds what the source, which the caller reads
    already, holds. With ``Idempotency-Key``, a retry gets the first answer
    (app/idempotency/keys.py)."""
    tid = _thread_id(thread_id)
    raw = await _json_body(request) if await request.body() else {}
    fork = service.validate(ForkRequest, _object(raw))

    async def write() -> Response:
        source = await repository.load_forkable(session, principal, tid.uuid)
        up_to = source.message_count if fork.up_to is None else fork.up_to
        if up_to > source.message_count:
            raise ValidationFailed(
                "up_to is past the end of the thread.",
                errors=[
                    {"loc": ["body", "up_to"], "msg": f"must be at most {source.message_count}"}
                ],
            )
        new_id = ThreadId.new()
        doc = service.fork_document(source.document_text, tid, source.version)
        body = await repository.insert_fork(session, audit, source, new_id.uuid, doc, up_to)
        headers = {"ETag": etag(1), "Location": f"/api/threads/{new_id}"}
        return json_response(body, 201, headers)

    return await idempotency.run(session, write)


@router.delete(
    "/{thread_id:thread_id}",
    status_code=204,
    responses=problem_responses(400, 401, 403, 404, 409, 410, 503),
)
async def delete_thread(
    thread_id: ThreadIdPath,
    session: SessionDep,
    _: Writer,
    audit: AuditDep,
    if_match: IfMatch = None,
) -> Response:
    """Soft delete: the thread disappears from every read and its id is never reused."""
    await repository.soft_delete(
        session, audit, _thread_id(thread_id).uuid, parse_if_match(if_match)
    )
    return Response(status_code=204)
