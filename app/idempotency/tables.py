"""The ``idempotency_keys`` table (migrations 0004, 0005).

One row per (user, ``Idempotency-Key``): ``fingerprint`` is the SHA-256 of the request the key
was first used with (:func:`app.idempotency.keys.fingerprint`); ``status``, ``headers`` (a JSON
object of the replayed header names and values) and ``body`` are its answer, inserted in the
transaction of the write it answers (so a row exists exactly when its write committed).
``thread_id`` names the thread an answer's body holds (a create's or fork's; NULL otherwise), so
a write that replaces the thread's text rewrites the answer too
(:func:`app.idempotency.keys.refresh_answers`).
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Index,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    SmallInteger,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB, UUID

metadata = MetaData()

idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("user_id", Text, nullable=False),
    Column("key", Text, nullable=False),
    Column("fingerprint", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("status", SmallInteger, nullable=False),
    Column("headers", JSONB, nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("thread_id", UUID(as_uuid=True)),
    PrimaryKeyConstraint("user_id", "key", name="idempotency_keys_pkey"),
)
Index("idempotency_keys_created", idempotency_keys.c.created_at)
Index(
    "idempotency_keys_thread",
    idempotency_keys.c.thread_id,
    postgresql_where=idempotency_keys.c.thread_id.isnot(None),
)
