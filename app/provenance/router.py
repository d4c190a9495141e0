"""HTTP layer of the provenance queries (issue 32), in the style of API.md section 6:
bearer token required (as list and search), problem JSON on bad input, keyset pagination
with signed cursors bound to the query, visibility of section 4 (app/provenance/queries.py).

- ``GET /api/provenance/commits/{sha}``: threads that observed a commit (SHA prefix ≥ 7).
- ``GET /api/provenance/files?path=``: threads whose tool calls touched a file.
- ``GET /api/provenance/lines?path=&text=&commit=``: the threads behind one line.
- ``GET /api/threads/{id}/provenance``: one thread's commits and file touches.
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Annotated, Any

from fastapi import Path, Query, Response

from app.database import SessionDep
from app.errors import BadRequest
from app.openapi import NON_BLANK_PATTERN
from app.provenance import queries
from app.provenance.schemas import CommitPage, FilePage, LineAnswer, ThreadProvenance
from app.replicas.routing import ReadsDep
from app.routes import ApiRouter
from app.threads.collection import _LISTER_401, _TOKEN_REQUIRED, Lister
from app.threads.cursors import CursorCodec, CursorParam, CursorsDep
from app.threads.documents import summary
from app.threads.params import ThreadIdPath
from app.threads.reads import load_readable
from app.threads.responses import json_response
from app.threads.schemas import problem_responses
from loomsync.core.document.ids import InvalidThreadId, ThreadId
from loomsync.core.provenance.paths import relative_path

router = ApiRouter(tags=["provenance"])

_SHA = re.compile(r"[0-9a-f]{7,64}")
#: Longest path or line text accepted (characters).
MAX_TEXT = 4096
_RESPONSES: dict[int | str, dict[str, Any]] = {**problem_responses(400, 422, 503), **_LISTER_401}

Repository = Annotated[
    str | None,
    Query(
        max_length=1024,
        description="git_remote_url as the client writes it (host/owner/repo); any when absent",
    ),
]
FilePath = Annotated[
    str,
    Query(
        max_length=MAX_TEXT,
        description="Path relative to the repository root (blank is 400)",
        json_schema_extra={"pattern": NON_BLANK_PATTERN},
    ),
]
#: What :func:`parse_sha` accepts, for the OpenAPI document.
SHA_PATTERN = r"^\s*[0-9A-Fa-f]{7,64}\s*$"


def parse_sha(value: str) -> str:
    """A commit SHA or prefix, lowercased. Raises BadRequest (400) unless 7-64 hex digits."""
    sha = value.strip().lower()
    if not _SHA.fullmatch(sha):
        raise BadRequest("A commit is 7 to 64 hexadecimal characters (a SHA or its prefix).")
    return sha


def parse_path(value: str) -> str:
    """A file path as the index keeps it: relative to the repository root and normalised
    (``./a/../b`` is ``b``); absolute paths stay absolute (files outside a repository are
    indexed so). A path that normalises to nothing (``..``) is kept as given and matches no
    file. Raises BadRequest (400) for blank text."""
    if not value.strip():
        raise BadRequest("path must name a file of the repository.")
    path = relative_path(value, None)
    return path if path is not None else value.strip()


def cursor_bound(*parts: str | None) -> bytes:
    """The request parameters a cursor is valid for (app/threads/cursors.py ``bound``)."""
    return "\x00".join(p or "" for p in parts).encode()


def after_cursor(
    signer: CursorCodec, cursor: str | None, bound: bytes
) -> tuple[Any, uuid.UUID] | None:
    """The (last_activity_at, id) a ``provenance`` cursor points after; None without one.
    Raises BadRequest (400) for a cursor not issued for these parameters."""
    if not cursor:
        return None
    after = signer.decode("provenance", cursor, datetime, uuid.UUID, bound=bound)
    return after[0], after[1]


def next_page(
    signer: CursorCodec, rows: list[Any], limit: int, bound: bytes
) -> tuple[list[Any], str | None]:
    """Split ``limit`` + 1 keyset rows into the page and its ``next_cursor`` (None: done)."""
    page = rows[:limit]
    if len(rows) <= limit or not page:
        return page, None
    last = page[-1]
    return page, signer.encode("provenance", last.last_activity_at, last.id, bound=bound)


@router.get(
    "/api/provenance/commits/{sha}",
    response_model=CommitPage,
    responses=_RESPONSES,
    openapi_extra=_TOKEN_REQUIRED,
)
async def threads_by_commit(
    reads: ReadsDep,
    principal: Lister,
    signer: CursorsDep,
    sha: Annotated[
        str,
        Path(
            max_length=64,
            description="A commit SHA or a prefix of ≥ 7 (else 400)",
            json_schema_extra={"pattern": SHA_PATTERN},
        ),
    ],
    repository: Repository = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: CursorParam = None,
) -> Response:
    """Threads that observed a commit (``git_commits``, initial and current SHAs), newest
    first, each with the matching SHAs and the files it edited; only threads the caller may
    read (API.md section 4). 400 for a SHA that is not 7-64 hex characters."""
    prefix = parse_sha(sha)
    bound = cursor_bound("commit", prefix, repository)
    after = after_cursor(signer, cursor, bound)

    async def read(session: Any) -> dict[str, Any]:
        rows = await queries.by_commit(session, principal, prefix, repository, after, limit)
        page, next_cursor = next_page(signer, rows, limit, bound)
        ids = [r.id for r in page]
        commits = await queries.commits_of(session, ids, prefix)
        touched = await queries.touches_of(session, ids, writes_only=True)
        hits = [
            {
                "thread": summary(r),
                "commits": commits.get(r.id, []),
                "touches": [t.as_json() for t in touched.get(r.id, [])],
            }
            for r in page
        ]
        return {"hits": hits, "next_cursor": next_cursor}

    return json_response(await reads.run(read))


@router.get(
    "/api/provenance/files",
    response_model=FilePage,
    responses=_RESPONSES,
    openapi_extra=_TOKEN_REQUIRED,
)
async def threads_by_file(
    reads: ReadsDep,
    principal: Lister,
    signer: CursorsDep,
    path: FilePath,
    repository: Repository = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    cursor: CursorParam = None,
) -> Response:
    """Threads whose tool calls read, edited, wrote or deleted a file, newest first, with
    the touching messages; only threads the caller may read. 400 for a blank path."""
    wanted = parse_path(path)
    bound = cursor_bound("file", wanted, repository)
    after = after_cursor(signer, cursor, bound)

    async def read(session: Any) -> dict[str, Any]:
        rows = await queries.by_file(session, principal, wanted, repository, after, limit)
        page, next_cursor = next_page(signer, rows, limit, bound)
        touched = await queries.touches_of(session, [r.id for r in page], path=wanted)
        hits = [
            {"thread": summary(r), "touches": [t.as_json() for t in touched.get(r.id, [])]}
            for r in page
        ]
        return {"hits": hits, "next_cursor": next_cursor}

    return json_response(await reads.run(read))


@router.get(
    "/api/provenance/lines",
    response_model=LineAnswer,
    responses=_RESPONSES,
    openapi_extra=_TOKEN_REQUIRED,
)
async def threads_by_line(
    reads: ReadsDep,
    principal: Lister,
    path: FilePath,
    text: Annotated[str, Query(max_length=MAX_TEXT, description="The line's text")],
    commit: Annotated[
        str | None,
        Query(
            max_length=64,
            description="git blame's commit for the line (7-64 hex, else 400)",
            json_schema_extra={"pattern": SHA_PATTERN},
        ),
    ] = None,
    repository: Repository = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 10,
) -> Response:
    """The threads behind one line, best first: a thread whose edit of ``path`` holds the
    line's text ranks first (found even when a rebase changed the commit's SHA), then
    threads that observed ``commit`` and touched the file, then those that only observed
    it. Only threads the caller may read."""
    wanted = parse_path(path)
    prefix = parse_sha(commit) if commit is not None else None

    async def read(session: Any) -> dict[str, Any]:
        hits = await queries.by_line(session, principal, wanted, text, prefix, repository, limit)
        return {
            "hits": [
                {
                    "thread": summary(h.row),
                    "match": h.match,
                    "message_index": h.message_index,
                    "commits": h.commits,
                }
                for h in hits
            ]
        }

    return json_response(await reads.run(read))


@router.get(
    "/api/threads/{thread_id:thread_id}/provenance",
    response_model=ThreadProvenance,
    responses=problem_responses(401, 404, 410, 503),
)
async def thread_provenance(
    thread_id: ThreadIdPath, session: SessionDep, principal: Lister
) -> Response:
    """The commits a thread observed and every file its tool calls touched (404 as a read
    for a thread the caller may not read, API.md section 4)."""
    try:
        tid = ThreadId.parse(thread_id)
    except InvalidThreadId:
        raise BadRequest("Not a thread id.") from None
    row = await load_readable(session, principal, tid.uuid)
    commits = await queries.commits_of(session, [row.id])
    touched = await queries.touches_of(session, [row.id], per_thread=5000)
    return json_response(
        {
            "id": str(tid),
            "commits": commits.get(row.id, []),
            "touches": [t.as_json() for t in touched.get(row.id, [])],
        }
    )
