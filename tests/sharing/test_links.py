"""Opening a share link (app/sharing/links.py): ``resolve`` then ``record_use``, as the JSON
route and the viewer page call them. Against the real database, through the app's own
sessionmaker; threads are made through the API as their owner would.

Isolation: each test makes its own users, threads and links.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Column, func, select, update

from app.audit.context import AuditContext
from app.audit.tables import audit_events
from app.auth import ANONYMOUS, Principal
from app.errors import NotFound
from app.secrettokens import new_secret
from app.sharing import repository
from app.sharing.links import LinkGone, is_secret, record_use, resolve
from app.sharing.repository import CreatedLink
from app.sharing.tables import share_links
from loomsync.core.document.ids import ThreadId
from tests.conftest import TokenFactory


async def _thread(client: httpx.AsyncClient, headers: dict[str, str]) -> uuid.UUID:
    created = await client.post("/api/threads", json={"visibility": "private"}, headers=headers)
    assert created.status_code == 201, created.text
    return ThreadId.parse(created.json()["id"]).uuid


def _context(principal: Principal) -> AuditContext:
    return AuditContext(principal=principal, client_ip="192.0.2.7", request_id="links-test")


@pytest.fixture
def alice(new_user: Callable[[str], str]) -> str:
    return new_user("alice")


async def _link(
    app: FastAPI,
    client: httpx.AsyncClient,
    auth: TokenFactory,
    owner: str,
    expires_in: int | None = None,
) -> tuple[uuid.UUID, CreatedLink]:
    """A new private thread of ``owner`` and a link to it, made as the owner."""
    thread_id = await _thread(client, auth(owner))
    async with app.state.sessionmaker() as session:
        made = await repository.create(session, _context(Principal(owner)), thread_id, expires_in)
    return thread_id, made


async def _gone(app: FastAPI, secret: str) -> LinkGone:
    """What :func:`resolve` raises for ``secret`` (it must raise LinkGone)."""
    async with app.state.sessionmaker() as session:
        with pytest.raises(LinkGone) as gone:
            await resolve(session, secret)
    return gone.value


async def _stored(app: FastAPI, column: Column[Any], link_id: uuid.UUID) -> Any:
    """The link's ``column`` as stored."""
    async with app.state.sessionmaker() as session:
        query = select(column).where(share_links.c.id == link_id)
        return (await session.execute(query)).scalar()


async def test_a_new_link_resolves_and_each_use_is_counted_and_audited(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, alice: str
) -> None:
    thread_id, made = await _link(app, client, auth, alice)
    assert is_secret(made.secret)
    for expected in (1, 2):
        async with app.state.sessionmaker() as session:
            link = await resolve(session, made.secret)
            assert (link.id, link.thread_id, link.created_by) == (made.id, thread_id, alice)
            assert link.use_count == expected - 1
            count = await record_use(
                session, link, _context(ANONYMOUS), via="api", user_agent="x" * 500
            )
            assert count == expected
            assert not session.in_transaction()  # committed: the caller may begin a snapshot
    async with app.state.sessionmaker() as session:
        stored = (
            await session.execute(select(share_links).where(share_links.c.id == made.id))
        ).one()
        uses = (
            await session.execute(
                select(audit_events).where(
                    audit_events.c.thread_id == thread_id,
                    audit_events.c.action == "share_link.use",
                )
            )
        ).all()
    assert stored.use_count == 2
    assert stored.last_used_at is not None
    assert [u.details["use_count"] for u in sorted(uses, key=lambda u: u.id)] == [1, 2]
    assert {u.actor_id for u in uses} == {None}  # anonymous
    assert all(u.details["link"] == str(made.id) for u in uses)
    assert all(len(u.details["user_agent"]) == 200 for u in uses)
    assert all(made.secret not in str(u.details) for u in uses)


@pytest.mark.parametrize(
    "secret",
    [
        "",
        "short",
        "A" * 42,
        "A" * 44,
        "A" * 42 + "=",
        "A" * 42 + "\x00",
        "A" * 42 + "é",
        "x" * 10**6,
    ],
)
async def test_a_malformed_secret_names_no_link(app: FastAPI, secret: str) -> None:
    async with app.state.sessionmaker() as session:
        with pytest.raises(NotFound):
            await resolve(session, secret)


async def test_an_unknown_secret_names_no_link(app: FastAPI) -> None:
    async with app.state.sessionmaker() as session:
        with pytest.raises(NotFound):
            await resolve(session, new_secret().value)


async def test_a_revoked_link_is_gone_and_a_use_after_resolve_records_nothing(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, alice: str
) -> None:
    thread_id, made = await _link(app, client, auth, alice)
    owner = _context(Principal(alice))
    async with app.state.sessionmaker() as session:
        link = await resolve(session, made.secret)
        await session.rollback()
        async with app.state.sessionmaker() as other:  # revoked between resolve and use
            assert await repository.revoke(other, owner, thread_id, made.id) is True
        with pytest.raises(LinkGone) as gone:
            await record_use(session, link, _context(ANONYMOUS), via="page")
    assert gone.value.reason == "revoked"
    assert gone.value.status == 410
    assert (await _gone(app, made.secret)).reason == "revoked"
    assert await _stored(app, share_links.c.use_count, made.id) == 0


async def test_an_expired_link_is_gone_by_the_database_clock(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, alice: str
) -> None:
    _, made = await _link(app, client, auth, alice, expires_in=3600)
    assert made.expires_at is not None
    assert made.expires_at - made.created_at == timedelta(seconds=3600)
    async with app.state.sessionmaker() as session:
        assert (await resolve(session, made.secret)).expires_at == made.expires_at
        await session.execute(
            update(share_links)
            .where(share_links.c.id == made.id)
            .values(expires_at=func.now() - timedelta(microseconds=1))
        )
        await session.commit()
    assert (await _gone(app, made.secret)).reason == "expired"


async def test_deleting_the_thread_kills_its_links(
    app: FastAPI, client: httpx.AsyncClient, auth: TokenFactory, alice: str
) -> None:
    thread_id, made = await _link(app, client, auth, alice)
    deleted = await client.delete(
        f"/api/threads/{ThreadId.from_uuid(thread_id)}", headers=auth(alice)
    )
    assert deleted.status_code == 204
    assert (await _gone(app, made.secret)).reason == "thread_deleted"
    revoked_at = await _stored(app, share_links.c.revoked_at, made.id)
    assert revoked_at is not None  # the deletion revoked it, in the same transaction
