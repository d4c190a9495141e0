"""A PostgreSQL cluster of a test's own, in a temporary folder (the ``pgserver`` package), that
the test may stop, start and disconnect: never the shared server the other tests use."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pgserver

from app.database import embedded_url, start_embedded


class ThrowawayPostgres:
    """A running cluster: ``url`` is its ``loomsync`` database (Unix socket, no TCP port)."""

    def __init__(self, data_dir: Path) -> None:
        self.server: Any = start_embedded(data_dir)
        self.url = embedded_url(self.server)
        info = self.server.get_postmaster_info()
        self.socket_dir = info.socket_dir
        self.admin_dsn = f"postgresql://postgres@/postgres?host={self.socket_dir}"

    def _pg_ctl(self, *args: str) -> None:
        pgserver.pg_ctl(list(args), pgdata=self.server.pgdata, user=self.server.system_user)

    def stop(self) -> None:
        """Stop the server (fast mode: sessions are disconnected, like a real restart)."""
        self._pg_ctl("-w", "-m", "fast", "stop")

    def start(self) -> None:
        """Start it again with the options pgserver used, and wait until it accepts sessions."""
        self._pg_ctl(
            "-w",
            "-o",
            '-h ""',
            "-o",
            f"-k {self.socket_dir}",
            "-l",
            str(self.server.log),
            "start",
        )

    async def terminate(self, application_name: str) -> int:
        """``pg_terminate_backend`` every session of ``application_name``; returns how many."""
        conn = await asyncpg.connect(self.admin_dsn)
        try:
            killed = await conn.fetch(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = $1 AND pid <> pg_backend_pid()",
                application_name,
            )
        finally:
            await conn.close()
        return len(killed)

    def close(self) -> None:
        """Stop the server for good (its folder goes with the temporary directory)."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        self.server.cleanup()


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    """A fresh cluster for the block, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="loomsync-faults-") as tmp:
        cluster = ThrowawayPostgres(Path(tmp))
        try:
            yield cluster
        finally:
            cluster.close()
