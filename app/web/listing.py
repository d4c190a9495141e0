"""The threads ``/`` lists (issue 13, item 3): the caller's own, and those others share with
them, each keyset-paginated like ``GET /api/threads``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Row
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.threads import repository
from app.threads.access import readable
from app.threads.listing import keyset_page
from app.threads.tables import threads

After = tuple[datetime, uuid.UUID] | None


async def mine(session: AsyncSession, principal: Principal, after: After, limit: int) -> list[Any]:
    """Up to ``limit`` + 1 of the caller's unarchived threads, newest activity first (exactly
    ``GET /api/threads``)."""
    rows = await repository.list_threads(
        session, principal, scope="mine", archived="false", workspace=None, after=after, limit=limit
    )
    return list(rows)


async def shared(
    session: AsyncSession, principal: Principal, after: After, limit: int
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 unarchived threads the caller may read (API.md section 4) and does
    not own, newest activity first: ``GET /api/threads?scope=visible`` without the caller's
    own (their organization's, public ones, support-shared ones for the ``support`` role,
    every thread for an admin)."""
    if principal.user_id is None:
        return []
    conditions: list[ColumnElement[bool]] = [
        threads.c.deleted_at.is_(None),
        threads.c.archived_at.is_(None),
        threads.c.owner_id != principal.user_id,
        readable(principal),
    ]
    return await keyset_page(session, conditions, after=after, limit=limit)
