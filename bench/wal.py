"""What a stretch of work wrote, read back from the write-ahead log (``pg_walinspect``).

PostgreSQL logs every row it writes; ``pg_get_wal_records_info(start, end)`` lists those records
with the relation and transaction each one belongs to. :class:`WalMeter` takes the WAL position
before and after a piece of work and counts, for the transactions of one database that wrote
application rows (so other databases, autovacuum and autoanalyze do not count), the rows written
to each table, the TOAST chunks, the index records and the WAL bytes without full-page images (a
checkpoint in between would otherwise add whole 8 KiB pages at random). This is exact, unlike
``pg_stat_user_tables``, whose counters are flushed late.
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
        self.relations: dict[str, tuple[str, str, str]] = {}  # node: (name, relkind, schema)
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
            r["node"]: (
                r["relname"],
                r["kind"],
                "toast" if r["nspname"] == "pg_toast" else r["nspname"],
            )
            for r in rows
        }

    async def start(self) -> None:
        """Remember the WAL position now."""
        self._start = await self.conn.fetchval("SELECT pg_current_wal_insert_lsn()::text")

    async def stop(self) -> Writes:
        """What the work's transactions wrote since :meth:`start` (the work must have committed).

        Only transactions that wrote a row of an application table (schema ``public``) count,
        with everything they logged (their index records, TOAST chunks, commit record): the
        background work of autovacuum (no transaction id) and autoanalyze (catalog rows) in the
        same window does not.
        """
        end = await self.conn.fetchval("SELECT pg_current_wal_flush_lsn()::text")
        records = await self.conn.fetch(
            "SELECT xid::text, resource_manager, record_type, record_length, fpi_length, block_ref"
            " FROM pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn)",
            self._start,
            end,
        )
        described = []
        for record in records:
            relation = None
            if self._database_of(record["block_ref"]) == self.database_oid:
                node = self._node_of(record["block_ref"])
                if node is not None and node not in self.relations:
                    await self._learn_relations()  # a table rewritten since open()
                relation = self.relations.get(node or "", (f"relfilenode {node}", "?", "?"))
            described.append((record, relation))
        xids = {
            record["xid"]
            for record, relation in described
            if relation is not None
            and relation[2] in ("public", "toast")
            and record["resource_manager"] == "Heap"
            and record["record_type"].split("+")[0] in ROW_RECORDS
        }
        xids.discard("0")
        writes = Writes()
        for record, relation in described:
            if record["xid"] not in xids:
                continue
            writes.wal_bytes += record["record_length"] - record["fpi_length"]
            if relation is None:
                continue
            name, _kind, schema = relation
            manager, kind_of_record = record["resource_manager"], record["record_type"]
            if manager == "Heap" and kind_of_record.split("+")[0] in ROW_RECORDS:
                if schema == "toast":
                    writes.toast_chunks += 1
                elif schema == "public":
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
