"""The ``share_links`` table (migration 0006).

One row per link. Only ``secret_hash`` (SHA-256 of the URL's secret, itself 256 random bits) is
stored: a database dump does not open any thread. A link is live while ``revoked_at`` is NULL,
``expires_at`` is NULL or in the future, and its thread is not deleted; a revoked or expired
link answers 410, and stays listed so its owner sees what was handed out. The primary key
starts with the thread id, as every table's does (docs/scaling.md); like ``audit_events`` it
has no foreign key, threads being only ever soft-deleted.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import UUID

metadata = MetaData()

share_links = Table(
    "share_links",
    metadata,
    Column("thread_id", UUID(as_uuid=True), nullable=False),
    Column("id", UUID(as_uuid=True), nullable=False),
    Column("secret_hash", LargeBinary, nullable=False),
    Column("created_by", Text, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("expires_at", DateTime(timezone=True)),
    Column("revoked_at", DateTime(timezone=True)),
    Column("last_used_at", DateTime(timezone=True)),
    Column("use_count", Integer, nullable=False, server_default=text("0")),
    PrimaryKeyConstraint("thread_id", "id", name="share_links_pkey"),
)
Index("share_links_secret", share_links.c.secret_hash, unique=True)
Index("share_links_id", share_links.c.id, unique=True)
