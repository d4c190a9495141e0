"""What a stretch of work wrote, read back from the write-ahead log (``pg_walinspect``).

PostgreSQL logs every row it writes; ``pg_get_wal_records_info(start, end)`` lists those records
with the relation each one touches. :class:`WalMeter` takes the WAL position before and after a
piece of work and counts, for one database only (so other databases on the cluster do not
count), the rows written to each table, the TOAST chunks, the index records and the WAL bytes
without full-page images (a checkpoint in between would otherwise add whole 8 KiB pages at
random). This is exact, unlike ``pg_stat_user_tables``, whose counters are flushed late.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import asyncpg

#: Heap record types that write one row (a new row version, or a deletion).
ROW_RECORDS = ("INSERT", "UPDATE", "HOT_UPDATE", "DELETE")
_BLOCK_REF = re.compile(r"rel \d+/(\d+)/(\d+)")


@dataclass
class Writes:
    """Rows by table, TOAST chunks, index records and WAL bytes (full-page images excluded)."""

    rows: Counter[str] = field(default_factory=Counter)
    toast_chunks: int = 0
    index_records: int = 0
    wal_bytes: int = 0

    @property
    def row_count(self) -> int:
        """Rows written to tables (TOAST chunks not included)."""
        return sum(self.rows.values())


class WalMeter:
    """Counts what one database writes between :meth:`start` and :meth:`stop`.

    Needs a superuser connection to that database (``CREATE EXTENSION pg_walinspect``).
    """

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.database_oid = ""
        self.relations: dict[str, tuple[str, str]] = {}
        self._start = ""

    async def open(self) -> None:
        """Create the extension and learn the database's oid."""
        await self.conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        oid = await self.conn.fetchval(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        )
        self.database_oid = str(oid)
        await self._learn_relations()

    async def _learn_relations(self) -> None:
        rows = await self.conn.fetch(
            "SELECT pg_relation_filenode(c.oid)::text AS node, c.relname, c.relkind::text AS kind,"
            " n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE pg_relation_filenode(c.oid) IS NOT NULL"
        )
        self.relations = {
            r["node"]: (r["relname"], "toast" if r["nspname"] == "pg_toast" else r["kind"])
            for r in rows
        }

    async def start(self) -> None:
        """Remember the WAL position now."""
        self._start = await self.conn.fetchval("SELECT pg_current_wal_insert_lsn()::text")

    async def stop(self) -> Writes:
        """What the database wrote since :meth:`start` (the work must have committed)."""
        end = await self.conn.fetchval("SELECT pg_current_wal_flush_lsn()::text")
        records = await self.conn.fetch(
            "SELECT xid::text, resource_manager, record_type, record_length, fpi_length, block_ref"
            " FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)",
            self._start,
            end,
        )
        databases = [self._database_of(r["block_ref"]) for r in records]
        xids = {
            r["xid"] for r, db in zip(records, databases, strict=True) if db == self.database_oid
        }
        xids.discard("0")
        writes = Writes()
        for record, database in zip(records, databases, strict=True):
            if database != self.database_oid and not (database is None and record["xid"] in xids):
                continue
            writes.wal_bytes += record["record_length"] - record["fpi_length"]
            node = self._node_of(record["block_ref"])
            if node is None:
                continue
            if node not in self.relations:
                await self._learn_relations()  # a table rewritten since open()
            name, kind = self.relations.get(node, (f"relfilenode {node}", "?"))
            manager, kind_of_record = record["resource_manager"], record["record_type"]
            if manager == "Heap" and kind_of_record.split("+")[0] in ROW_RECORDS:
                if kind == "toast":
                    writes.toast_chunks += 1
                else:
                    writes.rows[name] += 1
            elif manager in ("Btree", "Gin", "Gist", "Hash", "SPGist", "BRIN"):
                writes.index_records += 1
        return writes

    @staticmethod
    def _database_of(block_ref: str | None) -> str | None:
        match = _BLOCK_REF.search(block_ref or "")
        return match.group(1) if match else None

    @staticmethod
    def _node_of(block_ref: str | None) -> str | None:
        match = _BLOCK_REF.search(block_ref or "")
        return match.group(2) if match else None
