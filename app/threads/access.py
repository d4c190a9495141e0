"""Who may do what (API.md section 4), as pure functions and the SQL filters equal to them.

Every read, list and write goes through these. A caller who may not read a thread gets 404 for
it, exactly as for a missing one; a caller who may read but not write gets 403 on writes, and a
caller who reads only through the ``support`` role gets 403 on a fork.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, and_, false, or_, true

from app.auth import Principal
from app.threads.tables import threads


@dataclass(frozen=True, slots=True)
class AccessFacts:
    """The parts of a thread that decide access."""

    owner_id: str
    org_id: str | None
    visibility: str
    is_shared_with_support: bool


def can_read(principal: Principal, thread: AccessFacts) -> bool:
    """True when ``principal`` may read ``thread`` (API.md §4, "read" cells)."""
    if principal.is_support and thread.is_shared_with_support:
        return True
    return _reads_without_support(principal, thread)


def can_fork(principal: Principal, thread: AccessFacts) -> bool:
    """True when ``principal`` may copy ``thread`` into a fork of their own: read access on any
    ground but the ``support`` role (API.md §4: support reads, and does not copy). A support
    user who reads the thread as its owner, an organization member, an admin, or because it is
    public may fork it."""
    return not principal.is_anonymous and _reads_without_support(principal, thread)


def _reads_without_support(principal: Principal, thread: AccessFacts) -> bool:
    """:func:`can_read` with the ``support`` role left out."""
    if thread.visibility == "public":
        return True
    if principal.is_anonymous:
        return False
    if principal.is_admin or principal.user_id == thread.owner_id:
        return True
    return (
        thread.visibility == "organization"
        and principal.org_id is not None
        and principal.org_id == thread.org_id
    )


def can_write(principal: Principal, thread: AccessFacts) -> bool:
    """True when ``principal`` may write ``thread``: its owner or an admin (API.md §4)."""
    return not principal.is_anonymous and (
        principal.is_admin or principal.user_id == thread.owner_id
    )


def readable(principal: Principal) -> ColumnElement[bool]:
    """SQL condition on ``threads`` equal to :func:`can_read` (deleted rows not excluded here)."""
    public = threads.c.visibility == "public"
    if principal.is_anonymous:
        return public
    if principal.is_admin:
        return true()
    clauses: list[ColumnElement[bool]] = [public, threads.c.owner_id == principal.user_id]
    if principal.is_support:
        clauses.append(threads.c.is_shared_with_support.is_(True))
    if principal.org_id is not None:
        clauses.append(
            and_(threads.c.visibility == "organization", threads.c.org_id == principal.org_id)
        )
    return or_(*clauses)


def writable(principal: Principal) -> ColumnElement[bool]:
    """SQL condition on ``threads`` equal to :func:`can_write`."""
    if principal.is_anonymous:
        return false()
    if principal.is_admin:
        return true()
    return threads.c.owner_id == principal.user_id
