"""Listing threads: ``GET /api/threads`` (API.md section 6), keyset-paginated."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import ColumnElement, Row, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.threads.access import readable
from app.threads.tables import threads


async def list_threads(
    session: AsyncSession,
    principal: Principal,
    *,
    scope: str,
    archived: str,
    workspace: str | None,
    after: tuple[Any, uuid.UUID] | None,
    limit: int,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 thread rows, newest ``last_activity_at`` first, keyset-paginated
    after ``after`` = (last_activity_at, id) of the previous page's last row."""
    conditions: list[ColumnElement[bool]] = [threads.c.deleted_at.is_(None)]
    if scope == "mine":
        if principal.user_id is None:
            return []
        conditions.append(threads.c.owner_id == principal.user_id)
    else:
        conditions.append(readable(principal))
    if archived == "false":
        conditions.append(threads.c.archived_at.is_(None))
    elif archived == "true":
        conditions.append(threads.c.archived_at.is_not(None))
    if workspace is not None:
        conditions.append(threads.c.workspace_root == workspace)
    return await keyset_page(session, conditions, after=after, limit=limit)


async def keyset_page(
    session: AsyncSession,
    conditions: list[ColumnElement[bool]],
    *,
    after: tuple[Any, uuid.UUID] | None,
    limit: int,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 thread rows matching ``conditions`` (without their documents),
    newest ``last_activity_at`` first, after ``after`` = (last_activity_at, id) of the
    previous page's last row."""
    if after is not None:
        conditions = [
            *conditions,
            tuple_(threads.c.last_activity_at, threads.c.id) < tuple_(*after),
        ]
    stmt = (
        select(*[c for c in threads.c if c.name not in ("document", "search_vector")])
        .where(*conditions)
        .order_by(threads.c.last_activity_at.desc(), threads.c.id.desc())
        .limit(limit + 1)
    )
    return list((await session.execute(stmt)).all())
