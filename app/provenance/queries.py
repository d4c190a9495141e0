"""The provenance queries: threads by commit, by file, by line; one thread's commits and files.

Every query filters threads with :func:`app.threads.access.readable` (the filter of list and
search, API.md section 4) and leaves deleted threads out, in the statement that picks the
threads, so a thread the caller may not read is never named, counted, or used to rank.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    Row,
    bindparam,
    func,
    literal,
    or_,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth import Principal
from app.provenance.tables import thread_files
from app.threads.access import readable
from app.threads.listing import keyset_page
from app.threads.tables import thread_commits, threads
from loomsync.core.document import jsontext
from loomsync.core.provenance.touches import contains_line, touches_of_message

#: Threads a line query considers, newest first (each way: by commit, by file).
LINE_CANDIDATES = 100
#: Messages whose edits a line query reads to match the line's text.
LINE_MESSAGES = 400
#: Touches returned per thread in a page.
TOUCHES_PER_THREAD = 100


@dataclass(frozen=True, slots=True)
class FileTouch:
    """One ``thread_files`` row: ``message_index`` is the message's ``seq``."""

    path: str
    message_index: int
    action: str
    via: str

    def as_json(self) -> dict[str, Any]:
        """``{path, message_index, action, via}``."""
        return {
            "path": self.path,
            "message_index": self.message_index,
            "action": self.action,
            "via": self.via,
        }


def remote_key(value: ColumnElement[Any] | str) -> ColumnElement[str]:
    """SQL twin of :func:`loomsync.git.normalize_remote_url`, lowercased: ``host/owner/repo``
    for any spelling of a git remote (``https://github.com/a/b.git``, ``git@github.com:a/b``,
    ``ssh://git@github.com:22/a/b.git/`` and ``github.com/a/b`` give ``github.com/a/b``),
    so a ``repository`` filter matches the URL an agent recorded as it recorded it (API.md
    section 2 keeps ``git_remote_url`` as the client sent it). Scheme, userinfo, a port or
    the scp colon, ``.git`` and trailing slashes go; case is folded (hosts are
    case-insensitive, and the big forges' paths too)."""
    text_value = literal(value) if isinstance(value, str) else value
    key = func.regexp_replace(text_value, r"^[A-Za-z][A-Za-z0-9+.\-]*://", "")
    key = func.regexp_replace(key, r"^[^@/]*@", "")
    key = func.regexp_replace(key, r"^([^/:]+):([0-9]+/)?", r"\1/")
    key = func.regexp_replace(key, r"(\.git)?/*$", "")
    return func.lower(key)


def holds_nul(*values: str | None) -> bool:
    """Whether a query value holds NUL, which no stored text does (PostgreSQL ``text`` cannot
    hold it): such a query matches nothing, answered as an empty result rather than sent to
    the database (which refuses the parameter)."""
    return any(v is not None and "\x00" in v for v in values)


def visible(
    principal: Principal, repository: str | None, *, unknown_too: bool = False
) -> list[ColumnElement[bool]]:
    """Conditions on ``threads``: readable by ``principal``, not deleted, and of
    ``repository`` when given (any spelling of the remote: :func:`remote_key`), or, with
    ``unknown_too``, of no recorded remote (Claude Code records none; a commit SHA or a
    line's text then says whether the thread is the one)."""
    conditions: list[ColumnElement[bool]] = [threads.c.deleted_at.is_(None), readable(principal)]
    if repository is not None:
        same = remote_key(threads.c.git_remote_url) == remote_key(repository)
        conditions.append(or_(same, threads.c.git_remote_url.is_(None)) if unknown_too else same)
    return conditions


def _commit_threads(prefix: str) -> Any:
    return select(thread_commits.c.thread_id).where(
        thread_commits.c.sha.startswith(prefix, autoescape=True)
    )


def _file_threads(path: str) -> Any:
    # the path is written into the SQL (escaped by SQLAlchemy), not bound: a prepared
    # statement's generic plan cannot know that README.md is in 10% of threads and joins them
    # all before sorting (bench/provenance.py: 216 ms p50 for a hot path at 100k threads)
    wanted: BindParameter[str] = bindparam("path", path, literal_execute=True)
    return select(thread_files.c.thread_id).where(thread_files.c.path == wanted)


async def by_commit(
    session: AsyncSession,
    principal: Principal,
    prefix: str,
    repository: str | None,
    after: tuple[Any, uuid.UUID] | None,
    limit: int,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 thread rows that observed a commit whose SHA starts with
    ``prefix`` (lowercase hex), newest ``last_activity_at`` first, keyset after ``after``;
    threads that recorded no remote are among them (the SHA names the commit)."""
    if holds_nul(repository):
        return []
    conditions = [
        *visible(principal, repository, unknown_too=True),
        threads.c.id.in_(_commit_threads(prefix)),
    ]
    return await keyset_page(session, conditions, after=after, limit=limit)


async def by_file(
    session: AsyncSession,
    principal: Principal,
    path: str,
    repository: str | None,
    after: tuple[Any, uuid.UUID] | None,
    limit: int,
    *,
    unknown_too: bool = False,
) -> list[Row[Any]]:
    """Up to ``limit`` + 1 thread rows whose tool calls touched ``path``, newest first (with
    ``unknown_too``, threads that recorded no remote as well: :func:`visible`)."""
    if holds_nul(path, repository):
        return []
    conditions = [
        *visible(principal, repository, unknown_too=unknown_too),
        threads.c.id.in_(_file_threads(path)),
    ]
    return await keyset_page(session, conditions, after=after, limit=limit)


async def commits_of(
    session: AsyncSession, ids: Sequence[uuid.UUID], prefix: str | None = None
) -> dict[uuid.UUID, list[str]]:
    """The indexed SHAs of each thread (those starting with ``prefix`` when given), sorted."""
    if not ids:
        return {}
    stmt = select(thread_commits.c.thread_id, thread_commits.c.sha).where(
        thread_commits.c.thread_id.in_(ids)
    )
    if prefix is not None:
        stmt = stmt.where(thread_commits.c.sha.startswith(prefix, autoescape=True))
    found: dict[uuid.UUID, list[str]] = {}
    for row in (await session.execute(stmt.order_by(thread_commits.c.sha))).all():
        found.setdefault(row.thread_id, []).append(row.sha)
    return found


async def touches_of(
    session: AsyncSession,
    ids: Sequence[uuid.UUID],
    *,
    path: str | None = None,
    writes_only: bool = False,
    per_thread: int = TOUCHES_PER_THREAD,
) -> dict[uuid.UUID, list[FileTouch]]:
    """The ``thread_files`` rows of each thread (of ``path`` only when given; edits, writes
    and deletions only with ``writes_only``), by message then path, at most ``per_thread``."""
    if not ids:
        return {}
    stmt = select(thread_files).where(thread_files.c.thread_id.in_(ids))
    if path is not None:
        stmt = stmt.where(thread_files.c.path == path)
    if writes_only:
        stmt = stmt.where(thread_files.c.action != "read")
    found: dict[uuid.UUID, list[FileTouch]] = {}
    rows = await session.execute(
        stmt.order_by(thread_files.c.thread_id, thread_files.c.seq, thread_files.c.path)
    )
    for row in rows.all():
        kept = found.setdefault(row.thread_id, [])
        if len(kept) < per_thread:
            kept.append(FileTouch(row.path, row.seq, row.action, row.via))
    return found


@dataclass(frozen=True, slots=True)
class LineHit:
    """A thread answering a line query: ``row`` (a ``threads`` row), ``match`` (``line``:
    a message's edit holds the line's text; ``file``: it touched the file; ``commit``: it
    only observed the commit), ``message_index`` (the best message: the matching edit, else
    the last edit of the file, else None), the matching ``commits``."""

    row: Row[Any]
    match: str
    message_index: int | None
    commits: list[str]

    @property
    def rank(self) -> tuple[int, Any, uuid.UUID]:
        """Sort key, best first: line+commit, line, file+commit, commit; then newest."""
        score = {"line": 4, "file": 1, "commit": 0}[self.match] + (2 if self.commits else 0)
        return (score, self.row.last_activity_at, self.row.id)


_BODIES = text(
    "SELECT m.thread_id, m.seq, CAST(m.body AS text) AS body FROM thread_messages m"
    " JOIN unnest(CAST(:ids AS uuid[]), CAST(:seqs AS integer[])) AS u(thread_id, seq)"
    " ON m.thread_id = u.thread_id AND m.seq = u.seq"
)


async def by_line(
    session: AsyncSession,
    principal: Principal,
    path: str,
    line: str,
    prefix: str | None,
    repository: str | None,
    limit: int,
) -> list[LineHit]:
    """The threads behind one line of ``path``, best first (:class:`LineHit`): those that
    observed the commit ``prefix`` (``git blame``'s) and, commit or not (a rebase changes
    SHAs), those whose edit of ``path`` holds ``line``'s text. At most ``limit``."""
    by_id: dict[uuid.UUID, Row[Any]] = {}
    if holds_nul(path, line, repository):
        return []
    if prefix is not None:
        for row in await by_commit(session, principal, prefix, repository, None, LINE_CANDIDATES):
            by_id[row.id] = row
    candidates = await by_file(
        session, principal, path, repository, None, LINE_CANDIDATES, unknown_too=True
    )
    for row in candidates:
        by_id.setdefault(row.id, row)
    ids = list(by_id)
    commits = await commits_of(session, ids, prefix) if prefix is not None else {}
    edits = await touches_of(session, ids, path=path, writes_only=True)
    reads = await touches_of(session, ids, path=path)
    matched = await _line_matches(session, edits, path, line, by_id)
    hits: list[LineHit] = []
    for thread_id, row in by_id.items():
        shas = commits.get(thread_id, [])
        if thread_id in matched:
            hits.append(LineHit(row, "line", matched[thread_id], shas))
        elif shas and thread_id in reads:
            last_edit = edits.get(thread_id) or reads[thread_id]
            hits.append(LineHit(row, "file", last_edit[-1].message_index, shas))
        elif shas:
            hits.append(LineHit(row, "commit", None, shas))
    hits.sort(key=lambda h: h.rank, reverse=True)
    return hits[:limit]


async def _line_matches(
    session: AsyncSession,
    edits: dict[uuid.UUID, list[FileTouch]],
    path: str,
    line: str,
    rows: dict[uuid.UUID, Row[Any]],
) -> dict[uuid.UUID, int]:
    """Thread → the last message whose edit of ``path`` holds ``line``: the messages are read
    again and their calls extracted by the same code as the index, keeping the new text."""
    pairs = [(tid, t.message_index) for tid, ts in edits.items() for t in ts][-LINE_MESSAGES:]
    if not pairs:
        return {}
    result = await session.execute(
        _BODIES, {"ids": [p[0] for p in pairs], "seqs": [p[1] for p in pairs]}
    )
    found: dict[uuid.UUID, int] = {}
    for message in result.all():
        try:
            body = jsontext.loads(message.body)
        except (ValueError, RecursionError):
            continue
        root = rows[message.thread_id].workspace_root
        for touch in touches_of_message(body, message.seq, root):
            if touch.path == path and contains_line(touch.text, line):
                found[message.thread_id] = max(found.get(message.thread_id, -1), message.seq)
    return found
