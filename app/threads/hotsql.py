"""The statements of the two hot writes, an append's claim and a PUT's create, as SQL text built
once at import (issue 18 item 1).

Built per request with SQLAlchemy's expression language, these two cost the server more than
PostgreSQL spent running them: building the ``update()``/``insert()`` (``version + 1``,
``in_()``, ``values()``), its cache key, and expanding ``version IN (…)`` for every execution
(a "post-compile" parameter) were 60% of SQLAlchemy's CPU on an append (bench.writeprofile).
Here each is one ``text()`` whose parameters carry the columns' own types (so values are
converted exactly as the expression statements convert them) and whose result columns are the
table's (so rows read back as they did). They say what :func:`app.threads.repository.claim` and
:func:`~app.threads.repository.create_or_replace` say, for the cases the hot writes take:

- :data:`CLAIM_APPEND`: bump the version, add the appended messages to ``message_count`` and
  set ``last_activity_at`` (the request's, else now), on a live thread the caller may write
  (:func:`app.threads.access.writable`: an admin any, else the owner) whose version matches
  (``If-Match: *`` any; else ``version = ANY(:versions)``, an empty list matching none, as an
  empty ``IN`` does). Returns the columns :func:`~app.threads.repository.claim` returns.
- :data:`INSERT_THREAD`: a create (``ON CONFLICT DO NOTHING RETURNING``), version 1, its
  timestamps the document's (else now), with the document text, vector and derived columns.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Text, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.selectable import TextualSelect
from sqlalchemy.types import Integer

from app.auth import Principal
from app.threads.preconditions import Precondition
from app.threads.tables import threads

#: The columns :func:`app.threads.documents.derived_columns` returns, in the statement's order.
DERIVED_COLUMNS = (
    "visibility",
    "is_shared_with_support",
    "title",
    "tags",
    "is_pinned",
    "workspace_root",
    "git_branch",
    "git_remote_url",
    "provider",
    "model",
)
#: What a create returns to render its answer (repository ``_RENDERED``).
RENDERED_COLUMNS = (
    "id",
    "version",
    "created_at",
    "updated_at",
    "last_activity_at",
    "owner_id",
    "org_id",
    "archived_at",
    "message_count",
)
_CLAIMED_COLUMNS = ("id", "version", "message_count", "visibility", "is_shared_with_support")


def _typed(sql: str, names: tuple[str, ...], returned: tuple[str, ...]) -> TextualSelect:
    """``sql`` with the parameters ``names`` typed as the ``threads`` columns of those names."""
    params = [bindparam(name, type_=threads.c[name].type) for name in names]
    return text(sql).bindparams(*params).columns(*(threads.c[name] for name in returned))


def _claim_append(admin: bool, any_version: bool) -> TextualSelect:
    where = ["id = :id", "deleted_at IS NULL"]
    if not admin:
        where.append("owner_id = :owner_id")
    if not any_version:
        where.append("version = ANY(:versions)")
    sql = (
        "UPDATE threads SET version = version + 1, updated_at = now(),"
        " message_count = message_count + :added,"
        " last_activity_at = COALESCE(:last_activity_at, now())"
        f" WHERE {' AND '.join(where)}"
        f" RETURNING {', '.join(_CLAIMED_COLUMNS)}, CAST(document AS text) AS document_text"
    )
    names = ("id", "last_activity_at") + (() if admin else ("owner_id",))
    statement = text(sql).bindparams(
        *(bindparam(name, type_=threads.c[name].type) for name in names),
        bindparam("added", type_=Integer()),
        *(() if any_version else (bindparam("versions", type_=ARRAY(Integer())),)),
    )
    returned = [threads.c[name] for name in _CLAIMED_COLUMNS]
    return statement.columns(*returned, threads.c.document.cast(Text).label("document_text"))


#: ``(admin?, any version?)`` -> the append's claim.
CLAIM_APPEND = {
    (admin, any_version): _claim_append(admin, any_version)
    for admin in (False, True)
    for any_version in (False, True)
}


def claim_append_params(
    principal: Principal,
    thread_id: Any,
    precondition: Precondition | None,
    added: int,
    last_activity_at: Any,
) -> tuple[TextualSelect, dict[str, Any]]:
    """The claim of an append of ``added`` messages and its parameters (``last_activity_at``:
    a datetime or None for now). ``principal`` is a writer (never anonymous: the route refused
    those)."""
    any_version = precondition is None or precondition.any_version
    params: dict[str, Any] = {
        "id": thread_id,
        "added": added,
        "last_activity_at": last_activity_at,
    }
    if not principal.is_admin:
        params["owner_id"] = principal.user_id
    if not any_version:
        assert precondition is not None
        params["versions"] = sorted(precondition.versions)
    return CLAIM_APPEND[(principal.is_admin, any_version)], params


_INSERTED = ("id", "owner_id", "org_id", "message_count", "search_version", *DERIVED_COLUMNS)
INSERT_THREAD: TextualSelect = _typed(
    "INSERT INTO threads (id, owner_id, org_id, version, created_at, updated_at,"
    " last_activity_at, message_count, document, search_vector, search_version,"
    f" {', '.join(DERIVED_COLUMNS)})"
    " VALUES (:id, :owner_id, :org_id, 1, COALESCE(:created_at, now()), now(),"
    " COALESCE(:last_activity_at, now()), :message_count, CAST(CAST(:document AS text) AS json),"
    " CAST(CAST(:vector AS text) AS tsvector), :search_version,"
    f" {', '.join(':' + name for name in DERIVED_COLUMNS)})"
    f" ON CONFLICT (id) DO NOTHING RETURNING {', '.join(RENDERED_COLUMNS)}",
    (*_INSERTED, "created_at", "last_activity_at"),
    RENDERED_COLUMNS,
)
