"""``usage_daily`` and ``usage_backfill`` (migration 0009_usage creates them).

- ``usage_daily``: per (thread, UTC day, model, provider) the sums of its assistant messages
  (loomsync.core.usage.counting): ``turns`` (with usage), ``without_usage``, ``tool_calls`` and
  each kind of tokens. Beside them, copies of the thread's ``org_id``, ``owner_id``,
  ``visibility``, ``agent``, ``repository`` (``host/owner/repo``) and ``workspace``, kept equal
  to the thread's by every write in the writer's transaction (app/usage/rows.py), so that an
  aggregation is a ``GROUP BY`` over this table alone, through ``(org_id, day)`` or
  ``(owner_id, day)``; ``(model, provider)`` lists the models stored without a scan
  (app/usage/queries.py ``models_in``). Keyed by thread first, like every thread table (docs/scaling.md); a
  deleted thread's rows are deleted with it (soft delete) or by the foreign key.
- ``usage_backfill``: the progress of the online backfill (app/usage/backfill.py), one row.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    Column,
    Date,
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

#: The summed columns, in the order of loomsync.core.usage.counting.Sums.
SUMS = (
    "turns",
    "without_usage",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)

usage_daily = Table(
    "usage_daily",
    metadata,
    Column(
        "thread_id",
        UUID(as_uuid=True),
        ForeignKey("threads.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("day", Date, primary_key=True),
    Column("model", Text, primary_key=True),
    Column("provider", Text, primary_key=True),
    Column("org_id", Text),
    Column("owner_id", Text, nullable=False),
    Column("visibility", Text, nullable=False),
    Column("agent", Text, nullable=False),
    Column("repository", Text),
    Column("workspace", Text),
    Column("turns", Integer, nullable=False),
    Column("without_usage", Integer, nullable=False),
    Column("tool_calls", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("cache_read_tokens", BigInteger, nullable=False),
    Column("cache_write_tokens", BigInteger, nullable=False),
    Column("reasoning_tokens", BigInteger, nullable=False),
)
Index("usage_daily_org_day", usage_daily.c.org_id, usage_daily.c.day)
Index("usage_daily_owner_day", usage_daily.c.owner_id, usage_daily.c.day)
Index("usage_daily_model", usage_daily.c.model, usage_daily.c.provider)

usage_backfill = Table(
    "usage_backfill",
    metadata,
    Column("id", SmallInteger, primary_key=True),
    Column("after_thread", UUID(as_uuid=True)),
    Column("threads_done", BigInteger, nullable=False, server_default=text("0")),
    Column("started_at", DateTime(timezone=True), nullable=False, server_default=text("now()")),
    Column("finished_at", DateTime(timezone=True)),
    CheckConstraint("id = 1", name="usage_backfill_one_row"),
)
