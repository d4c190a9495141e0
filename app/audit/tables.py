"""The ``audit_events`` table (migration 0003).

One row per audited write, inserted in the same transaction as the write itself, so an event
exists exactly when its write committed. ``thread_id`` has no foreign key: threads are only ever
soft-deleted, and the trail must outlive whatever happens to them. Rows are never updated.
``actor_id`` is NULL for an anonymous actor: someone who opened a share link without a token
or session (migration 0006).

The primary key is ``(thread_id, id)``: like every table's, it starts with the thread id, so the
table can be distributed and co-located with ``threads`` (docs/scaling.md). ``id`` (a UUIDv7)
is unique by itself.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID

metadata = MetaData()

audit_events = Table(
    "audit_events",
    metadata,
    Column("id", UUID(as_uuid=True), nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("actor_id", Text),  # NULL: anonymous (a share link opened without signing in)
    Column("actor_org", Text),
    Column("actor_roles", ARRAY(Text), nullable=False, server_default=text("'{}'")),
    Column("action", Text, nullable=False),
    Column("thread_id", UUID(as_uuid=True), nullable=False),
    Column("client_ip", Text),
    Column("request_id", Text),
    Column("details", JSONB, nullable=False, server_default=text("'{}'")),
    PrimaryKeyConstraint("thread_id", "id", name="audit_events_pkey"),
)
Index("audit_events_recent", audit_events.c.occurred_at.desc(), audit_events.c.id.desc())
Index(
    "audit_events_thread",
    audit_events.c.thread_id,
    audit_events.c.occurred_at.desc(),
    audit_events.c.id.desc(),
)
Index(
    "audit_events_actor",
    audit_events.c.actor_id,
    audit_events.c.occurred_at.desc(),
    audit_events.c.id.desc(),
)
