"""Every feature's table metadata, for Alembic (``migrations/env.py``) and the schema tests."""

from __future__ import annotations

from sqlalchemy import MetaData

from app.audit.tables import metadata as audit_metadata
from app.idempotency.tables import metadata as idempotency_metadata
from app.provenance import tables as _provenance_tables  # noqa: F401  (on the threads' metadata)
from app.sharing.tables import metadata as sharing_metadata
from app.threads.tables import metadata as threads_metadata
from app.usage import tables as _usage_tables  # noqa: F401  (on the threads' metadata)
from app.web.tables import metadata as web_metadata

ALL_METADATA: tuple[MetaData, ...] = (
    threads_metadata,
    audit_metadata,
    idempotency_metadata,
    sharing_metadata,
    web_metadata,
)
