"""Writing ``usage_daily`` rows in the writer's transaction (issue 33), so the usage a reader
aggregates never disagrees with the messages stored.

- a whole-thread write (create, PUT, rescan) replaces the thread's rows from all its messages;
- an append adds the appended messages' sums to the rows of their (day, model, provider);
- a fork counts the messages it holds, as every thread does (copied turns count again, in the
  fork's figures: docs/web.md "Usage");
- a write that changes the document (PATCH, an append's fields) refreshes the copied columns
  (visibility, agent, repository, workspace; owner and organization from the thread row);
- a delete removes the rows (the thread disappears from every read, API.md section 1).

The day of a message without ``created_at`` is the thread's last activity (``fallback``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from app.usage.tables import SUMS
from loomsync.core.document import jsontext
from loomsync.core.usage.counting import Key, Sums, add_message, thread_facts, utc_day

_ARRAYS = ", ".join(f"CAST(:{name} AS bigint[])" for name in SUMS)
_UPSERT_SET = ", ".join(f"{n} = usage_daily.{n} + EXCLUDED.{n}" for n in SUMS)

#: One statement for every writer: the sums as parallel arrays, the thread's owner,
#: organization and visibility read from its row (claimed by the caller's transaction).
INSERT_USAGE = text(
    "INSERT INTO usage_daily (thread_id, day, model, provider, org_id, owner_id, visibility,"
    f" agent, repository, workspace, {', '.join(SUMS)})"
    " SELECT t.id, u.day, u.model, u.provider, t.org_id, t.owner_id, t.visibility,"
    f" CAST(:agent AS text), CAST(:repository AS text), CAST(:workspace AS text),"
    f" {', '.join('u.' + n for n in SUMS)}"
    " FROM threads t,"
    f" unnest(CAST(:days AS date[]), CAST(:models AS text[]), CAST(:providers AS text[]), {_ARRAYS})"
    f" AS u(day, model, provider, {', '.join(SUMS)})"
    " WHERE t.id = CAST(:thread_id AS uuid)"
    " AND (CAST(:version AS integer) IS NULL OR t.version = CAST(:version AS integer))"
    f" ON CONFLICT (thread_id, day, model, provider) DO UPDATE SET {_UPSERT_SET}"
)
_DELETE = text("DELETE FROM usage_daily WHERE thread_id = CAST(:id AS uuid)")
_REFRESH = text(
    "UPDATE usage_daily u SET org_id = t.org_id, owner_id = t.owner_id,"
    " visibility = t.visibility, agent = CAST(:agent AS text),"
    " repository = CAST(:repository AS text), workspace = CAST(:workspace AS text)"
    " FROM threads t WHERE t.id = CAST(:id AS uuid) AND u.thread_id = t.id"
)
_ASSISTANT = '"assistant"'


def fallback_day(when: datetime | None) -> date:
    """The UTC day of ``when`` (a thread's last activity; naive: UTC), today when None."""
    return utc_day(when or datetime.now(UTC))


def sums_of_bodies(
    bodies: Iterable[tuple[str, str]], doc: dict[str, Any], fallback: date
) -> dict[Key, Sums]:
    """The sums of messages given as ``(role, exact JSON text)``; only assistant messages are
    parsed, and one that does not parse adds nothing (never raises)."""
    out: dict[Key, Sums] = {}
    model, provider = doc.get("model"), doc.get("provider")
    for role, body in bodies:
        if role != "assistant" or _ASSISTANT not in body:
            continue
        try:
            message = jsontext.loads(body)
        except (ValueError, RecursionError):
            continue
        if isinstance(message, dict):
            add_message(out, message, fallback, model, provider)
    return out


def usage_params(
    thread_id: uuid.UUID,
    doc: dict[str, Any],
    found: dict[Key, Sums],
    version: int | None = None,
) -> dict[str, Any]:
    """The parameters of :data:`INSERT_USAGE` for ``found`` (facts from ``doc``); with
    ``version``, rows are inserted only while the thread is still at that version."""
    facts = thread_facts(doc)
    keys = list(found)
    params: dict[str, Any] = {
        "thread_id": thread_id,
        "version": version,
        "agent": facts.agent,
        "repository": facts.repository,
        "workspace": facts.workspace,
        "days": [k[0] for k in keys],
        "models": [k[1] for k in keys],
        "providers": [k[2] for k in keys],
    }
    for name in SUMS:
        params[name] = [getattr(found[k], name) for k in keys]
    return params


async def write_usage(
    session: AsyncSession,
    thread_id: uuid.UUID,
    doc: dict[str, Any],
    bodies: Iterable[tuple[str, str]],
    fallback: date,
    *,
    replace: bool,
) -> None:
    """Count messages ``bodies`` (``(role, JSON text)``) for a thread the caller's transaction
    has claimed; ``replace`` drops the thread's rows first (a whole-thread write), else the
    sums are added to the rows already there (an append)."""
    if replace:
        await session.execute(_DELETE, {"id": thread_id})
    found = sums_of_bodies(bodies, doc, fallback)
    if found:
        await session.execute(INSERT_USAGE, usage_params(thread_id, doc, found))


async def refresh_facts(session: AsyncSession, thread_id: uuid.UUID, doc: dict[str, Any]) -> None:
    """Copy the thread's visibility, owner, organization (from its row) and agent, repository,
    workspace (from ``doc``, the document being stored) onto its rows."""
    facts = thread_facts(doc)
    await session.execute(
        _REFRESH,
        {
            "id": thread_id,
            "agent": facts.agent,
            "repository": facts.repository,
            "workspace": facts.workspace,
        },
    )


async def delete_usage(session: AsyncSession, thread_id: uuid.UUID) -> None:
    """Drop a deleted thread's rows."""
    await session.execute(_DELETE, {"id": thread_id})


async def copy_usage(
    session: AsyncSession,
    source_id: uuid.UUID,
    target_id: uuid.UUID,
    up_to: int,
    doc: dict[str, Any],
    fallback: date,
) -> None:
    """Count a fork's messages (the source's first ``up_to``), read inside this transaction."""
    rows = await session.execute(
        text(
            "SELECT role, CAST(body AS text) AS body FROM thread_messages"
            " WHERE thread_id = CAST(:id AS uuid) AND seq < :up_to AND role = 'assistant'"
        ),
        {"id": source_id, "up_to": up_to},
    )
    await write_usage(
        session, target_id, doc, ((r.role, r.body) for r in rows), fallback, replace=False
    )
