"""The ``idempotency_keys`` table (migration 0004).

One row per (user, ``Idempotency-Key``): ``fingerprint`` is the SHA-256 of the request the key
was first used with (:func:`app.idempotency.keys.fingerprint`); ``status``, ``headers`` (a JSON
object of the replayed header names and values) and ``body`` are its answer, inserted in the
transaction of the write it answers (so a row exists exactly when its write committed).
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
from sqlalchemy.dialects.postgresql import JSONB

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
    PrimaryKeyConstraint("user_id", "key", name="idempotency_keys_pkey"),
)
Index("idempotency_keys_created", idempotency_keys.c.created_at)
