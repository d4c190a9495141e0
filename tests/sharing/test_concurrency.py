"""Share links under concurrency, on the real database: simultaneous uses are each counted and
audited once; a thread's deletion that races a link being made still kills that link.

Isolation: see tests/sharing/conftest.py.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable

import httpx
from fastapi import FastAPI
from sqlalchemy import select, text

from app.audit.tables import audit_events
from app.secrettokens import secret_hash
from app.sharing.tables import share_links
from app.threads.tables import threads
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory
from tests.sharing.conftest import Shared, secret_of

USES = 24


async def test_simultaneous_uses_are_each_counted_and_audited_once(
    app: FastAPI, shared: Shared
) -> None:
    made = await shared.make_link()
    url = f"/api/shared/{secret_of(made['url'])}"
    answers = await asyncio.gather(*(shared.client.get(url) for _ in range(USES)))
    assert [a.status_code for a in answers] == [200] * USES
    async with app.state.sessionmaker() as session:
        count = (
            await session.execute(
                select(share_links.c.use_count).where(share_links.c.id == uuid.UUID(made["id"]))
            )
        ).scalar()
        events = (
            await session.execute(
                select(audit_events.c.details).where(
                    audit_events.c.thread_id == ThreadId.parse(shared.thread_id).uuid,
                    audit_events.c.action == "share_link.use",
                )
            )
        ).scalars()
        counted = sorted(e["use_count"] for e in events)
    assert count == USES
    assert counted == list(range(1, USES + 1))  # no two uses saw the same count


async def _wait_for_lock_waiter(app: FastAPI, deadline: float) -> None:
    """Until some backend waits on a lock (the delete, behind the create's FOR SHARE)."""
    while time.monotonic() < deadline:
        async with app.state.sessionmaker() as probe:
            waiting = (
                await probe.execute(
                    text(
                        "SELECT count(*) FROM pg_stat_activity "
                        "WHERE wait_event_type = 'Lock' AND datname = current_database()"
                    )
                )
            ).scalar()
        if waiting:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the delete never waited for the link being made")


async def test_a_delete_racing_a_create_waits_and_then_kills_the_new_link(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: TokenFactory,
    new_user: Callable[[str], str],
) -> None:
    owner = new_user("owner")
    created = await client.post("/api/threads", json={}, headers=auth(owner))
    tid = ThreadId.parse(created.json()["id"])
    secret = "r" * 43
    async with app.state.sessionmaker() as making:
        # what repository.create does, paused before its commit: the thread row held FOR SHARE
        await making.execute(
            select(threads.c.id).where(threads.c.id == tid.uuid).with_for_update(read=True)
        )
        link_id = uuid.uuid4()
        await making.execute(
            share_links.insert().values(
                thread_id=tid.uuid, id=link_id, secret_hash=secret_hash(secret), created_by=owner
            )
        )
        deleting = asyncio.create_task(client.delete(f"/api/threads/{tid}", headers=auth(owner)))
        await _wait_for_lock_waiter(app, time.monotonic() + 20)
        assert not deleting.done()
        await making.commit()
    assert (await deleting).status_code == 204
    async with app.state.sessionmaker() as session:
        revoked_at = (
            await session.execute(
                select(share_links.c.revoked_at).where(share_links.c.id == link_id)
            )
        ).scalar()
    assert revoked_at is not None
    gone = await client.get(f"/api/shared/{secret}")
    assert gone.status_code == 410
