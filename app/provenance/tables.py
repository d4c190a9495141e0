"""``thread_files`` and ``provenance_backfill`` (migration 0008_provenance creates them).

- ``thread_files``: one row per (thread, path, message, action): ``path`` relative to the
  repository root (loomsync.core.provenance.paths), ``seq`` the index of the message whose tool
  call touched it, ``action`` ``read``/``edit``/``write``/``delete``, ``via`` ``tool`` or
  ``shell``. Keyed by thread first, like every thread table (docs/scaling.md); the index on
  ``(path, thread_id)`` answers "which threads touched this file".
- ``provenance_backfill``: the progress of the online backfill of threads stored before the
  index existed (app/provenance/backfill.py), one row.

Defined on the threads' :class:`~sqlalchemy.MetaData` so the foreign key resolves.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    Table,
    Text,
    text,
)
from sqlalchemy.dialects.postgresql import UUID

from app.threads.tables import metadata

thread_files = Table(
    "thread_files",
    metadata,
    Column(
        "thread_id",
        UUID(as_uuid=True),
        ForeignKey("threads.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("path", Text, primary_key=True),
    Column("seq", Integer, primary_key=True),
    Column("action", Text, primary_key=True),
    Column("via", Text, nullable=False),
    CheckConstraint("action IN ('read', 'edit', 'write', 'delete')", name="thread_files_action"),
    CheckConstraint("via IN ('tool', 'shell')", name="thread_files_via"),
)
Index("thread_files_path", thread_files.c.path, thread_files.c.thread_id)

provenance_backfill = Table(
    "provenance_backfill",
    metadata,
    Column("id", SmallInteger, primary_key=True),
    Column("after_thread", UUID(as_uuid=True)),
    Column("threads_done", BigInteger, nullable=False, server_default=text("0")),
    Column("files_found", BigInteger, nullable=False, server_default=text("0")),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("finished_at", DateTime(timezone=True)),
    CheckConstraint("id = 1", name="provenance_backfill_one_row"),
)
